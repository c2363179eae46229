"""Adaptive tournaments (ebtui.core.tournament.adaptive) with offline judges whose scores come from planted
skills, dilemma effects and noise: waves are added until every anytime-valid pairwise half-width is at most the
target, the uniform design's calls are reached, the looks are used up, the budget stops it, or nothing can
narrow it — and the run says which; the waves are recorded and a killed run resumes with the same schedule."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.config import load_models_config
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import RoundStatus, TournamentStatus
from ebtui.core.store import ResultsStore
from ebtui.core.tournament import TournamentFinished, plan_tournament
from ebtui.core.tournament.adaptive import (
    STOP_BUDGET,
    STOP_MAX_LOOKS,
    STOP_NOTHING,
    STOP_TARGET,
    STOP_UNIFORM,
    AdaptiveMessage,
    AdaptiveRunner,
    load_state,
    runner_for,
)
from ebtui.core.tournament.config import parse_tournament_config
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import open_store
from tests.support.processes import kill_9_when, started

SKILL = {"alpha": 7.2, "beta": 6.4, "gamma": 5.8, "delta": 5.5}
TEAMS = re.compile(r"Team A \(model `([^`]+)`\).*?Team B \(model `([^`]+)`\)", re.S)


class PlantedJudge(ScriptedClient):
    """A scripted model that, as a judge, scores each team from the planted truth: skill + the dilemma's
    effect + the model's swing on that dilemma + the answer's (exchange) effect + noise per judgment."""

    def __init__(self, name: str, titles: dict[str, str], *, sd_md: float = 0.3, sd_noise: float = 0.4,
                 seed: int = 0) -> None:
        super().__init__(name, price_in=1.0, price_out=4.0)
        self.titles = titles
        self.sd_md = sd_md
        self.sd_noise = sd_noise
        self.rng = random.Random(f"{seed}:{name}")

    def _judge_reply(self, prompt: str, schema: dict[str, Any]) -> str:
        value = self._instance(schema, prompt, "$")
        m = TEAMS.search(prompt)
        assert m is not None
        dil = next(d for d, t in self.titles.items() if t in prompt)
        for team, model in (("team_a", m.group(1)), ("team_b", m.group(2))):
            base = (SKILL[model] + _fixed(f"d:{dil}", 0.4) + _fixed(f"md:{model}:{dil}", self.sd_md)
                    + self.rng.gauss(0, self.sd_noise))
            value[team]["scores"] = {c: int(np.clip(round(base + self.rng.gauss(0, 0.5)), 1, 10))
                                     for c in value[team]["scores"]}
        return json.dumps(value)


def _fixed(key: str, sd: float) -> float:
    return random.Random(key).gauss(0, sd)


@pytest.fixture(scope="module")
def titles() -> dict[str, str]:
    return {d.id: d.title for d in load_dilemmas()}


def _models_toml(tmp_path: Path) -> Path:
    p = tmp_path / "models.toml"
    p.write_text("".join(f'[models.{m}]\nprovider = "scripted"\nprice_in = 1.0\nprice_out = 4.0\n' for m in SKILL),
                 encoding="utf-8")
    return p


def _setup(tmp_path: Path, titles: dict[str, str], judge: dict[str, float] | None = None,
           **cfg: Any) -> tuple[Any, dict[str, Any], ResultsStore]:
    config = parse_tournament_config({"models": list(SKILL), "concurrency": 8, **cfg}, tmp_path / "t.toml")
    plan = plan_tournament(config, load_models_config(_models_toml(tmp_path)))
    clients = {m: PlantedJudge(m, titles, **(judge or {})) for m in SKILL}
    return plan, clients, open_store(tmp_path / "store")


async def _run(runner: Any) -> tuple[TournamentFinished, list[AdaptiveMessage]]:
    msgs: list[AdaptiveMessage] = []
    finished = None
    async for ev in runner.run():
        if isinstance(ev, AdaptiveMessage):
            msgs.append(ev)
        elif isinstance(ev, TournamentFinished):
            finished = ev
    assert finished is not None
    return finished, msgs


def test_adaptive_run_stays_within_the_uniform_design_and_records_its_valid_intervals(
        tmp_path: Path, titles: dict[str, str]) -> None:
    """The contract: the run reaches its target with no more calls than the uniform design the plan picks, or
    stops and says why; each wave is planned within that design's calls; the intervals recorded at the stop
    are the anytime-valid ones (wider than the report's fixed-sample ones) and hold the planted gaps."""
    ids = list(titles)
    plan, clients, store = _setup(tmp_path, titles, dilemmas=ids[:3], target_half_width=0.9)
    runner = runner_for(plan, clients, store, progress_interval_s=0.05)
    assert isinstance(runner, AdaptiveRunner)
    finished, msgs = asyncio.run(_run(runner))
    state = runner.state
    assert state.waves, "the first pass alone should not reach 0.9 on 3 dilemmas"
    last = state.measurements[-1]
    calls = sum(4 + len(ex.judges) for ex in runner.schedule.exchanges)
    assert last["calls"] == calls
    if state.stop_reason == STOP_TARGET:
        assert last["widest"] is not None and last["widest"] <= 0.9
        assert msgs[-1].stop_reason == STOP_TARGET and "target reached" in msgs[-1].message
    else:
        assert state.stop_reason in (STOP_UNIFORM, STOP_MAX_LOOKS), state.stop_message
        assert "uniform design" in state.stop_message or "last planned look" in state.stop_message
        assert last["widest"] is not None and last["widest"] > 0.9
    # every wave was planned within the uniform design's calls as estimated at its look
    for before, after in zip(state.measurements, state.measurements[1:], strict=False):
        assert before["uniform_calls"] is not None and after["calls"] <= before["uniform_calls"]
    # the looks spend the planned alpha, never more than 0.05 in all
    assert [m["look"] for m in state.measurements] == list(range(1, len(state.measurements) + 1))
    assert sum(m["alpha"] for m in state.measurements) <= 0.05 + 1e-12
    assert state.rule["method"] == "alpha_spending_union_bound"
    # the recorded intervals: the last look's, wider than the fixed-sample ones, holding the planted gaps
    assert state.intervals is not None and state.intervals["look"] == len(state.measurements)
    for pr in state.intervals["pairs"]:
        assert pr["half_width"] is not None and pr["fixed_half_width"] is not None
        assert pr["half_width"] > pr["fixed_half_width"]
        assert pr["ci_low"] <= SKILL[pr["a"]] - SKILL[pr["b"]] <= pr["ci_high"]
    # the waves are recorded with the tournament, and in the waves file that resume reads
    saved = store.load_tournament(plan.tournament_id)
    assert saved.model_extra and saved.model_extra["adaptive"]["stop_reason"] == state.stop_reason
    assert "adaptive: " in saved.note
    on_disk = load_state(store, plan.tournament_id)
    assert on_disk is not None and len(on_disk.waves) == len(state.waves)
    # every scheduled round was played, each once
    rounds = store.load_rounds(tournament=plan.tournament_id)
    assert len({r.schedule_key for r in rounds}) == len(rounds) == len(runner.schedule)
    assert all(r.status == RoundStatus.COMPLETE for r in rounds)


def test_budget_stops_the_waves_and_says_so(tmp_path: Path, titles: dict[str, str]) -> None:
    ids = list(titles)
    plan, clients, store = _setup(tmp_path, titles, dilemmas=ids[:3], target_half_width=0.2)
    est = plan.estimate().total_cost_usd  # the list-price estimate: about 3x what the scripted judges spend
    runner = runner_for(plan, clients, store, budget_usd=est * 0.45, progress_interval_s=0.05)
    finished, msgs = asyncio.run(_run(runner))
    assert runner.state.stop_reason == STOP_BUDGET, runner.state.stop_message
    assert "budget" in msgs[-1].message
    spent = sum(r.total_usage().cost_usd or 0 for r in store.load_rounds(tournament=plan.tournament_id))
    assert spent <= est * 0.45 + 1e-9


def test_when_only_dilemmas_would_help_and_none_are_left_it_says_so(tmp_path: Path, titles: dict[str, str]) -> None:
    """Every dilemma of the document played, model x dilemma variation dominating: extra judges and repeats
    cannot buy the target; the run stops with that reason instead of spending."""
    plan, clients, store = _setup(tmp_path, titles, target_half_width=0.01,
                                  judge={"sd_md": 0.8, "sd_noise": 0.05})
    runner = runner_for(plan, clients, store, progress_interval_s=0.05)
    finished, msgs = asyncio.run(_run(runner))
    assert runner.state.stop_reason == STOP_NOTHING, runner.state.stop_message
    assert "nothing left can narrow it" in runner.state.stop_message
    assert finished.tournament.status == TournamentStatus.COMPLETE


@pytest.mark.slow  # the default run has the same promise from a real process: test_kill_9_during_a_wave_then_resume_…
def test_a_killed_adaptive_run_resumes_with_its_recorded_waves(tmp_path: Path, titles: dict[str, str]) -> None:
    """The wave is saved before its rounds start: a run stopped in the middle of a wave (here: cancelled, as a
    kill leaves it) resumes with the same extended schedule and plays nothing twice."""
    ids = list(titles)
    plan, clients, store = _setup(tmp_path, titles, dilemmas=ids[:3], target_half_width=0.9)
    runner = runner_for(plan, clients, store, progress_interval_s=0.05)

    async def stop_in_first_wave() -> None:
        waves = 0
        async for ev in runner.run():
            if isinstance(ev, AdaptiveMessage) and ev.message.startswith("wave"):
                waves += 1
            elif waves and getattr(ev, "round", None) is not None:
                runner.cancel()

    asyncio.run(stop_in_first_wave())
    state = load_state(store, plan.tournament_id)
    assert state is not None and state.waves and state.stop_reason == "cancelled"
    first_wave = state.waves[0].exchanges
    plan2, clients2, store2 = _setup(tmp_path, titles, dilemmas=ids[:3], target_half_width=0.9)
    again = runner_for(plan2, clients2, store2, progress_interval_s=0.05)
    assert again.state.waves[0].exchanges == first_wave  # the same wave, from the file
    asyncio.run(_run(again))
    rounds = store2.load_rounds(tournament=plan.tournament_id)
    assert len({r.schedule_key for r in rounds}) == len(rounds)
    # the resumed run goes on counting looks where the killed one left off
    assert [m["look"] for m in again.state.measurements] == list(range(1, len(again.state.measurements) + 1))
    assert again.state.stop_reason in (STOP_TARGET, STOP_UNIFORM, STOP_MAX_LOOKS)


def test_cli_until_half_width_prints_the_waves_and_why_it_stopped(tmp_path: Path) -> None:
    """With the scripted provider (scores from hashes, no planted skills) and a target nothing reachable:
    the run ends with the reason on stderr; the waves file exists."""
    models = _models_toml(tmp_path)
    cfg = tmp_path / "t.toml"
    ids = [d.id for d in load_dilemmas()]
    cfg.write_text(f'models = ["alpha", "beta", "gamma"]\ndilemmas = {json.dumps(ids[:3])}\nbudget_usd = 0.5\n',
                   encoding="utf-8")
    res = CliRunner().invoke(cli, ["tournament", str(cfg), "--models", str(models), "--store",
                                   str(tmp_path / "store"), "--until-half-width", "0.3"])
    assert "adaptive: look 1 of 3: widest anytime-valid pairwise half-width" in res.output
    assert "adaptive: stopped: " in res.output
    assert res.exit_code in (0, 1)
    store = ResultsStore(tmp_path / "store")
    tid = store.list_tournaments()[0].id
    st = load_state(store, tid)
    assert st is not None and st.stop_reason is not None
    _check_the_report_says_so(tmp_path, tid, st)


def _check_the_report_says_so(tmp_path: Path, tid: str, st: Any) -> None:
    """`report --json`, the Markdown and the web report of the adaptive tournament carry its rule, looks, why it
    stopped and the anytime-valid intervals recorded at the stop."""
    base = ["report", "--store", str(tmp_path / "store"), "--tournament", tid]
    res = CliRunner().invoke(cli, [*base, "--json"])
    assert res.exit_code == 0, res.output
    ad = json.loads(res.stdout)["adaptive"]
    assert ad["stop_reason"] == st.stop_reason and ad["stop_message"] == st.stop_message
    assert ad["rule"]["method"] == "alpha_spending_union_bound" and ad["rule"]["max_looks"] == 3
    assert [m["look"] for m in ad["looks"]] == [m["look"] for m in st.measurements]
    assert ad["pairwise"] == (st.intervals or {}).get("pairs", [])
    assert ad["pairwise"] and all(p["half_width"] is None or p["half_width"] > p["fixed_half_width"]
                                  for p in ad["pairwise"])
    assert "anytime-valid" in ad["note"]
    md = CliRunner().invoke(cli, [*base, "--out", str(tmp_path / "md")])
    assert md.exit_code == 0, md.output
    text = (tmp_path / "md" / "report.md").read_text(encoding="utf-8")
    assert "## Adaptive tournament" in text and "Anytime-valid pairwise intervals" in text
    assert st.stop_reason.replace("_", "\\_") in text  # Markdown-escaped
    page = CliRunner().invoke(cli, [*base, "--html", "--out", str(tmp_path / "web")])
    assert page.exit_code == 0, page.output
    html = (tmp_path / "web" / "report.html").read_text(encoding="utf-8")
    assert 'id="adaptive"' in html and "Anytime-valid pairwise intervals" in html
    # the app's Analysis tab (its use case): the same tables, the same numbers
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.report import AnalysisCache

    got = AnalysisCache().compute(open_context(store=tmp_path / "store"), tid, None, views=("effective",))
    tab = {t.key: t for t in got.tables["effective"]}
    assert tab["adaptive_pairwise"].as_dicts() == [{k: p[k] for k in tab["adaptive_pairwise"].columns}
                                                   for p in ad["pairwise"]]
    assert any(st.stop_message in n for n in tab["adaptive_looks"].notes)


def test_kill_9_during_a_wave_then_resume_plays_the_recorded_wave(tmp_path: Path) -> None:
    """A real process killed (SIGKILL) once its first wave is recorded; re-running the same command resumes
    with that wave (same exchanges), duplicates nothing and ends with a stated reason."""
    import os
    import subprocess
    import sys
    import time

    models = tmp_path / "models.toml"
    models.write_text("".join(f'[models.{m}]\nprovider = "scripted"\nlatency_s = 0.05\nprice_in = 1.0\n'
                              f'price_out = 4.0\n' for m in SKILL), encoding="utf-8")
    ids = [d.id for d in load_dilemmas()]
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'models = {json.dumps(list(SKILL))}\ndilemmas = {json.dumps(ids[:3])}\nconcurrency = 4\n'
                   "target_half_width = 0.3\nbudget_usd = 1.2\n", encoding="utf-8")
    store = tmp_path / "store"
    env = {**os.environ, "EBTUI_STORE_FSYNC": "0"}
    cmd = [sys.executable, "-m", "ebtui", "tournament", str(cfg), "--models", str(models), "--store", str(store)]
    waves_dir = store / "tournaments" / "waves"

    def a_wave_under_way() -> bool:
        files = list(waves_dir.glob("*.json")) if waves_dir.is_dir() else []
        if files and json.loads(files[0].read_text())["waves"]:
            time.sleep(0.3)  # some of the wave's rounds under way
            return True
        return False

    with started(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        kill_9_when(proc, a_wave_under_way, 120, "no wave was recorded")
    tid = next(waves_dir.glob("*.json")).stem
    rs = ResultsStore(store)
    first = load_state(rs, tid)
    assert first is not None and first.waves
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert "adaptive: stopped: " in res.stderr, res.stderr[-2000:]
    after = load_state(ResultsStore(store), tid)
    assert after is not None and after.stop_reason is not None
    assert after.waves[0].exchanges == first.waves[0].exchanges  # the recorded wave was played as recorded
    rounds = ResultsStore(store).load_rounds(tournament=tid)
    assert len({r.schedule_key for r in rounds}) == len(rounds)
    # the resumed run goes on counting looks where the killed one left off
    assert [m["look"] for m in after.measurements] == list(range(1, len(after.measurements) + 1))
