"""Judge reading order in play: a round can present Team B's material first (RoundSpec.judge_order), the
judgment records the order, and a tournament with judge_order = "balanced" alternates each judge's rounds."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.prompts import JUDGE_PROMPT_VERSION
from ebtui.core.records import PhaseType, TournamentStatus
from ebtui.core.round import RoundSpec, play_round
from ebtui.core.store import ResultsStore
from ebtui.core.tournament import TournamentRunner
from ebtui.core.tournament.config import parse_tournament_config
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import open_store


@pytest.fixture(scope="module")
def dilemmas() -> list[Any]:
    return load_dilemmas()


async def test_a_round_judged_with_team_b_first_records_the_order(dilemmas: list[Any]) -> None:
    clients = {n: ScriptedClient(n) for n in ("a", "b", "j")}
    spec = RoundSpec(dilemma=dilemmas[0], team_a="a", team_b="b", judge="j", judge_order="ba")
    r = await play_round(spec, clients)
    assert r.judgment is not None and r.judgment.order == "ba"
    assert r.judgment.prompt_version == JUDGE_PROMPT_VERSION and r.judgment.judged_at is not None
    prompt = r.phase(PhaseType.JUDGMENT).prompt  # type: ignore[union-attr]
    assert prompt.index("## Team B's response") < prompt.index("## Team A's presentation")
    plain = await play_round(RoundSpec(dilemma=dilemmas[0], team_a="a", team_b="b", judge="j"), clients)
    assert plain.judgment is not None and plain.judgment.order == "ab"
    p2 = plain.phase(PhaseType.JUDGMENT).prompt  # type: ignore[union-attr]
    assert p2.index("## Team A's presentation") < p2.index("## Team B's response")


async def test_balanced_tournament_alternates_each_judges_order(tmp_path: Path, dilemmas: list[Any]) -> None:
    cfg = parse_tournament_config({"models": ["a", "b", "c"], "dilemmas": [d.id for d in dilemmas[:2]],
                                   "judge_order": "balanced"}, "t.toml")
    plain = parse_tournament_config({"models": ["a", "b", "c"], "dilemmas": [d.id for d in dilemmas[:2]]}, "t.toml")
    assert cfg.tournament_id() != plain.tournament_id()  # a different tournament; older configs keep their ids
    assert "judge_order" not in plain.schedule_fields()
    rs = open_store(tmp_path / "store")
    runner = TournamentRunner(cfg, {n: ScriptedClient(n) for n in "abc"}, rs, dilemmas=dilemmas)
    events = [ev async for ev in runner.run()]
    assert events[-1].tournament.status == TournamentStatus.COMPLETE
    rounds = rs.load_rounds(tournament=runner.tournament_id)
    by_judge: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rounds:
        assert r.judgment is not None
        by_judge[r.judge_model][r.judgment.order] += 1
        prompt = r.phase(PhaseType.JUDGMENT).prompt  # type: ignore[union-attr]
        first_b = prompt.index("## Team B's response") < prompt.index("## Team A's presentation")
        assert first_b == (r.judgment.order == "ba")
    for judge, counts in by_judge.items():
        assert abs(counts["ab"] - counts["ba"]) <= 1, (judge, counts)
        assert counts["ba"] >= 1


def test_ebtui_run_judge_order_ba(tmp_path: Path, dilemmas: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from ebtui.cli import cli

    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    store = tmp_path / "store"
    res = CliRunner().invoke(cli, ["--store", str(store), "run", "--dilemma", dilemmas[0].id, "--team-a", "scripted",
                                   "--team-b", "scripted", "--judge", "scripted", "--judge-order", "ba"])
    assert res.exit_code == 0, res.output
    (r,) = ResultsStore(store).load_rounds()
    assert r.judgment is not None and r.judgment.order == "ba"
    bad = CliRunner().invoke(cli, ["--store", str(store), "run", "--dilemma", dilemmas[0].id, "--team-a", "scripted",
                                   "--team-b", "scripted", "--judge", "scripted", "--judge-order", "sideways"])
    assert bad.exit_code == 2 and "judge-order" in bad.output
