"""`ebtui report` over a real store: a small scripted tournament (the real runner), then the report."""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import CRITERIA
from ebtui.core.store import ResultsStore
from ebtui.core.tournament import TournamentFinished, TournamentRunner
from ebtui.core.tournament.config import parse_tournament_config
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import open_store


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="ebtui")


@pytest.fixture(scope="module")
def tournament_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Four scripted models, two dilemmas, a judge panel on every exchange, self-debates, one judge that
    answers prose (its scores are missing) and one human override."""
    import asyncio

    root = tmp_path_factory.mktemp("cli-report") / "store"
    dilemmas = load_dilemmas()
    cfg = parse_tournament_config(
        {"name": "Scripted cup", "models": ["claude-a", "gpt-b", "gemini-c", "qwen-d"],
         "dilemmas": [d.id for d in dilemmas[:2]], "judges": "panel", "self_debates": True},
        "t.toml",
    )
    clients = {n: ScriptedClient(n) for n in cfg.models}
    clients["qwen-d"] = ScriptedClient("qwen-d", judge_mode="prose")
    store = open_store(root)
    runner = TournamentRunner(cfg, clients, store, dilemmas=dilemmas)

    async def go() -> Any:
        return [ev async for ev in runner.run()][-1]

    finished = asyncio.run(go())
    assert isinstance(finished, TournamentFinished)
    rounds = store.load_rounds(tournament=runner.tournament_id)
    judged = next(r for r in rounds if r.judgment and r.judgment.parsed_scores("a").consistency is not None)
    old = judged.judgment.parsed_scores("a").consistency
    store.apply_override(judged.id, "a", "consistency", 1 if old != 1 else 2, "checked by hand")
    return {"root": root, "tid": runner.tournament_id, "n": len(rounds), "override_round": judged.id}


def test_report_for_a_scripted_tournament(tournament_store: dict[str, Any]) -> None:
    root, tid = tournament_store["root"], tournament_store["tid"]
    result = invoke("--store", str(root), "report", "--tournament", tid)  # --store before the subcommand
    assert result.exit_code == 0, result.output
    path = Path(result.stdout.strip())
    assert path == root / "reports" / tid / "report.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# ebtui report: Scripted cup")
    assert f"- Rounds: {tournament_store['n']} (" in text
    assert "1 human overrides are in force" in text and "checked by hand" in text
    for img in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert (path.parent / img).is_file()
    from ebtui.core.report import build_tables

    tables = build_tables(ResultsStore(root).load_rounds(tournament=tid))
    assert len(list(path.parent.glob("*.csv"))) == sum(len(ts) for ts in tables.values())
    # the recomputation from the store's round files: the prose judge's rounds have no scores
    rounds = ResultsStore(root).load_rounds(tournament=tid)
    prose = [r for r in rounds if r.judge_model == "qwen-d"]
    assert prose and all(r.judgment is None or not any(r.judgment.parsed_scores("a").as_dict().values())
                         for r in prose)
    judged = [r for r in rounds if r.judgment is not None]
    missing = sum(len(r.judgment.parsed_scores(t).missing()) for r in judged for t in "ab")
    assert f"{missing} of {14 * len(judged)} scores missing" in text
    # the presenting consistency mean of the overridden model, both views, from the rounds
    ov = next(r for r in rounds if r.id == tournament_store["override_round"])
    import csv

    for effective, view in ((True, "effective"), (False, "as_judged")):
        per_ex: dict[str, list[int]] = {}
        for r in rounds:
            if r.team_a_model == ov.team_a_model and r.judgment is not None:
                s = r.judgment.effective_scores("a") if effective else r.judgment.parsed_scores("a")
                if s.consistency is not None:
                    per_ex.setdefault(r.exchange_id or r.id, []).append(s.consistency)
        want = statistics.fmean(statistics.fmean(v) for v in per_ex.values())
        with open(path.parent / f"model_comparison__{view}.csv", encoding="utf-8") as fh:
            row = next(r for r in csv.DictReader(fh) if (r["model"], r["role"], r["criterion"])
                       == (ov.team_a_model, "presenting", "consistency"))
        assert float(row["mean"]) == pytest.approx(want) and int(row["n"]) == len(per_ex)
    # models as rows, criteria as columns
    header = next(ln for ln in text.splitlines() if ln.startswith("| model | principle"))
    assert [c.replace("\\", "") for c in header.strip("| ").split(" | ")] == ["model", *CRITERIA, "n"]


def test_report_filters_and_out_dir(tournament_store: dict[str, Any], tmp_path: Path) -> None:
    root, tid = tournament_store["root"], tournament_store["tid"]
    out = tmp_path / "elsewhere"
    result = invoke("report", "--store", str(root), "--out", str(out), "--model", "gpt-b")
    assert result.exit_code == 0, result.output
    assert Path(result.stdout.strip()) == out / "report.md"
    text = (out / "report.md").read_text(encoding="utf-8")
    n = len([r for r in ResultsStore(root).load_rounds() if "gpt-b" in (r.team_a_model, r.team_b_model)])
    assert n < len(ResultsStore(root).load_rounds(model="gpt-b"))  # the store's filter also has its judging
    assert text.startswith("# ebtui report: all rounds (model gpt-b)") and f"- Rounds: {n} (" in text
    d = ResultsStore(root).load_rounds(tournament=tid)[0].dilemma_id
    result = invoke("report", "--store", str(root), "--dilemma", d, "--tournament", tid)
    assert result.exit_code == 0, result.output
    assert "- Dilemmas: 1" in Path(result.stdout.strip()).read_text(encoding="utf-8")


def test_no_rounds_is_a_clear_error(tournament_store: dict[str, Any], tmp_path: Path) -> None:
    result = invoke("report", "--store", str(tournament_store["root"]), "--tournament", "t-nope")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("ebtui: error: no rounds in ")
    assert "tournament 't-nope'" in result.stderr and "Traceback" not in result.output
    result = invoke("report", "--store", str(tmp_path / "absent"))
    assert result.exit_code == 2 and "no results store at" in result.stderr
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([sys.executable, "-m", "ebtui", "--store", str(tmp_path / "empty"), "report"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"ebtui: error: no rounds in {tmp_path / 'empty'}; nothing to report"]


def test_a_model_classifies_the_consistency_answers_and_is_named(tournament_store: dict[str, Any],
                                                                 tmp_path: Path) -> None:
    import csv

    root, tid = tournament_store["root"], tournament_store["tid"]
    models = tmp_path / "models.toml"
    models.write_text(
        '[models.reader]\nprovider = "scripted"\n'
        'rules = [{match = "", reply = \'{"label": "acknowledged_refinement", "quote": ""}\'}]\n',
        encoding="utf-8",
    )
    out = tmp_path / "classified"
    result = invoke("report", "--store", str(root), "--tournament", tid, "--out", str(out),
                    "--models", str(models), "--classifier", "reader")
    assert result.exit_code == 0, result.output
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "Classified by: model:reader" in text
    with open(out / "consistency_answers__effective.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    exchanges = {r.exchange_id or r.id for r in ResultsStore(root).load_rounds(tournament=tid)
                 if r.phase("consistency_test") is not None and r.phase("consistency_test").response}
    assert len(rows) == len(exchanges) > 0
    assert {(row["class"], row["classifier"]) for row in rows} == {("acknowledged_refinement", "model:reader")}
    # the default stays the documented rules
    rules_text = (root / "reports" / tid / "report.md")
    if rules_text.exists():
        assert "model:reader" not in rules_text.read_text(encoding="utf-8")


def test_an_unknown_classifier_is_a_clear_error(tournament_store: dict[str, Any], tmp_path: Path) -> None:
    root, tid = tournament_store["root"], tournament_store["tid"]
    result = invoke("report", "--store", str(root), "--tournament", tid, "--out", str(tmp_path / "x"),
                    "--classifier", "nobody")
    assert result.exit_code == 2
    assert "nobody" in result.output and "Traceback" not in result.output


def test_json_is_one_object_with_the_report_numbers_and_writes_nothing(tournament_store: dict[str, Any],
                                                                      tmp_path: Path) -> None:
    import json

    root, tid = tournament_store["root"], tournament_store["tid"]
    before = sorted(p for p in root.rglob("*") if "reports" not in p.parts and "columns" not in p.parts)
    result = invoke("report", "--store", str(root), "--tournament", tid, "--json")
    assert result.exit_code == 0, result.output
    # (the analysis columns beside the store, <store>/columns/, are a cache kept up to date, not output)
    assert sorted(p for p in root.rglob("*") if "reports" not in p.parts and "columns" not in p.parts) == before
    out = json.loads(result.stdout)
    rounds = ResultsStore(root).load_rounds(tournament=tid)
    judged = [r for r in rounds if r.judgment is not None]
    missing = sum(len(r.judgment.parsed_scores(t).missing()) for r in judged for t in "ab")
    assert out["excluded"]["scores_missing"] == missing and out["n_rounds"] == len(rounds)
    # the one override: judge minus human, and the with-overrides view beside the as-judged one
    ov = next(r for r in rounds if r.id == tournament_store["override_round"])
    o = ov.judgment.active_overrides()[("a", "consistency")]
    assert out["judge_vs_human"] == [{"judge": ov.judge_model, "n": 1, "n_dilemmas": 1,
                                      "offset_vs_human": float(o.parsed_value - o.value), "ci_low": None,
                                      "ci_high": None, "interval_note": "fewer than 3 dilemmas"}]
    assert {"models", "judges", "family_preference"} <= set(out["with_overrides"])
    # two dilemmas: every interval blank, with the reason
    assert all(m["ci_low"] is None and m["interval_note"] == "fewer than 3 dilemmas" for m in out["models"])
    # the report's Markdown shows the same adjusted means
    md = invoke("report", "--store", str(root), "--tournament", tid, "--out", str(tmp_path / "md"))
    text = Path(md.stdout.strip()).read_text(encoding="utf-8")
    for m in out["models"]:
        if m["mean"] is not None:
            assert f"| {m['model']} | {m['family']} | {m['mean']:.2f} |" in text
