"""`ebtui rejudge`: planning (deterministic keys, orders, resume), only judge calls at an OpenAI-compatible fake
server (llmock: counted there), transcripts unchanged, several judgments per round, resumable after kill -9
without duplicates; the judge's own-view calls (--views) and the agreement they feed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from llmock.scenarios import Match, Reply

from ebtui.cli import cli
from ebtui.core.judge_views import agreement_map, parse_conclusions, parse_view
from ebtui.core.records import CRITERIA, Dilemma, Judgment, PhaseStatus, PhaseType, Round, Scores
from ebtui.core.rejudge import judgment_key, plan_rejudge
from ebtui.core.store import ResultsStore
from tests.support.factories import scored_round
from tests.support.paths import subprocess_env

DILEMMA = Dilemma(id="memory-trust", title="The Memory Trust",
                  core_scenario="A clinic can restore a patient's erased memories, but only by copying a sibling's.",
                  questions=["Who owns a shared memory?"], consistency_case="A library restores a burnt diary.")
SCORED = {"team_a": {"scores": dict.fromkeys(CRITERIA, 7), "justification": "clear"},
          "team_b": {"scores": dict.fromkeys(CRITERIA, 5), "justification": "thin"}, "overall_analysis": "ok"}


def make_round(i: int, *, judge: str = "judge", a: str = "gpt", b: str = "claude", exchange: str | None = None,
               reused: bool = False) -> Round:
    def text(pt: PhaseType, _model: str) -> str:
        return "{}" if pt == PhaseType.JUDGMENT else f"{pt.value} text of round {i}\nConclusion: restore it."

    six = dict.fromkeys(CRITERIA, 6)
    r = scored_round(f"r-{i:03d}", DILEMMA.id, a, b, judge, six, six, text=text, dilemma_title=DILEMMA.title,
                     parse_method="")
    for phase in r.phases[:-1]:
        phase.reused_from = "src" if reused else None
    r.exchange_id = exchange or r.id
    r.settings.dilemma = DILEMMA.model_dump(mode="json")
    return r


# -- planning -------------------------------------------------------------------------------------------


def test_plan_keys_orders_and_resume() -> None:
    rounds = [make_round(i) for i in range(4)]
    plan = plan_rejudge(rounds, judges=["judge2"], repeats=2, order="balanced")
    assert len(plan.calls) == 8 and not plan.done
    assert [c.order for c in plan.calls if c.round_id == "r-000"] == ["ab", "ba"]
    assert all({c.order for c in plan.calls if c.round_id == r.id} == {"ab", "ba"} for r in rounds)
    assert len({c.key for c in plan.calls}) == 8
    assert plan.calls[0].key == judgment_key("r-000", "judge2", "ab", 1)
    again = plan_rejudge(rounds, judges=["judge2"], repeats=2, order="balanced")
    assert [c.key for c in again.calls] == [c.key for c in plan.calls]  # deterministic
    assert "Team B's comes first" in [c for c in plan.calls if c.order == "ba"][0].prompt
    # a planned judgment already in the round is done, not asked again
    rounds[0].extra_judgments.append(Judgment(key=plan.calls[0].key, judge_model="judge2", origin="rejudge"))
    resumed = plan_rejudge(rounds, judges=["judge2"], repeats=2, order="balanced")
    assert len(resumed.calls) == 7 and [d.key for d in resumed.done] == [plan.calls[0].key]
    swapped = plan_rejudge(rounds, order="swapped")
    assert {c.order for c in swapped.calls} == {"ba"} and {c.judge for c in swapped.calls} == {"judge"}
    one = plan_rejudge([make_round(i) for i in range(4)], judges=["judge2"], order="balanced")
    assert [c.order for c in one.calls] == ["ab", "ba", "ab", "ba"]  # alternating across rounds


def test_plan_skips_own_rounds_incomplete_exchanges_and_panel_copies() -> None:
    own = make_round(1)
    broken = make_round(2)
    broken.phases[2].status = PhaseStatus.FAILED
    src = make_round(3, exchange="x-3")
    copy = make_round(4, judge="judge2", exchange="x-3", reused=True)
    plan = plan_rejudge([own, broken, src, copy], judges=["gpt", "judge3"])
    reasons = dict(plan.skipped)
    assert "not complete" in reasons["r-002"]
    assert "shares its transcript" in reasons["r-004"]
    assert {(c.round_id, c.judge) for c in plan.calls} == {("r-001", "judge3"), ("r-003", "judge3")}
    assert any("plays in this round" in why for _r, why in plan.skipped)
    with pytest.raises(ValueError):
        plan_rejudge([own], order="sideways")


# -- against a fake OpenAI-compatible server --------------------------------------------------------------


def _setup(tmp: Path, llmock: Any, n: int = 3, **extra: Any) -> tuple[Path, Path, list[Round]]:
    lines = []
    for name, model in (("gpt", "gpt-4o-mini"), ("claude", "gpt-4o"), ("judge", "judge-one"), ("judge2", "judge-two")):
        lines += [f"[models.{name}]", 'provider = "openai"', f'model = "{model}"',
                  f'base_url = "{llmock.base_url("openai")}"', 'api_key_env = "EBTUI_TEST_KEY"', "price_in = 1.0",
                  "price_out = 2.0", "backoff_s = 0.05", "timeout_s = 20.0"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    models = tmp / "models.toml"
    models.write_text("\n".join(lines) + "\n")
    store = tmp / "store"
    rs = ResultsStore(store)
    rounds = [make_round(i) for i in range(n)]
    for r in rounds:
        rs.save_round(r)
    rs.close()
    return models, store, rounds


def _transcripts(store: Path) -> dict[str, list[dict[str, Any]]]:
    rs = ResultsStore(store)
    return {p.stem: [ph.model_dump(mode="json") for ph in rs.load_round(p.stem).phases]
            for p in sorted((store / "rounds").glob("*.json"))}


def test_rejudge_makes_only_judge_calls_and_adds_judgments(tmp_path: Path, llmock: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    llmock.add(Reply(text=json.dumps(SCORED), times=None, match=Match(model="judge-two")))
    models, store, rounds = _setup(tmp_path, llmock, json_schema=False)
    before = _transcripts(store)
    args = ["--models", str(models), "--store", str(store), "rejudge", "r-000", "r-001", "r-002",
            "--judges", "judge2", "--repeats", "2", "--order", "balanced"]
    dry = CliRunner().invoke(cli, [*args, "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    planned = json.loads(dry.output)
    assert len(planned["calls"]) == 6 and planned["team_calls"] == 0 and planned["estimate"]["total_usd"] > 0
    assert not llmock.requests  # a dry run asks nothing
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    calls = [q for q in llmock.requests if q.method == "POST"]
    assert len(calls) == 6 and {q.model for q in calls} == {"judge-two"}  # zero team calls
    assert _transcripts(store) == before  # transcripts unchanged
    rs = ResultsStore(store)
    for r in rounds:
        got = rs.load_round(r.id)
        assert got.judgment is not None and got.judgment.judge_model == "judge"  # the round's own is still first
        assert len(got.extra_judgments) == 2 and {j.order for j in got.extra_judgments} == {"ab", "ba"}
        for j in got.extra_judgments:
            assert j.judge_model == "judge2" and j.origin == "rejudge" and j.prompt_version and j.judged_at
            assert j.team_a_scores.as_dict() == dict.fromkeys(CRITERIA, 7)  # mapped right in both orders
            assert j.team_b_scores.as_dict() == dict.fromkeys(CRITERIA, 5)
        assert len(got.all_judgments()) == 3
    assert rs.query()[0]["judgments"] == 3
    # run again: nothing left to ask
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and len([q for q in llmock.requests if q.method == "POST"]) == 6
    # the report counts every judgment
    rep = CliRunner().invoke(cli, ["--models", str(models), "--store", str(store), "report", "--json"])
    assert rep.exit_code == 0, rep.output
    data = json.loads(rep.output)
    assert data["judgments"]["judgments"] == 9 and data["judgments"]["rejudged"] == 6
    assert {o["judge"] for o in data["order"]} == {"judge", "judge2"}
    assert set(data["reliability"]) >= {"alpha_by_criterion", "test_retest", "criteria_first_component_share"}
    assert set(data["style"]) >= {"coefficients", "models"}


def test_unknown_target_and_judge_are_one_line_errors(tmp_path: Path, llmock: Any) -> None:
    models, store, _ = _setup(tmp_path, llmock, n=1)
    res = CliRunner().invoke(cli, ["--models", str(models), "--store", str(store), "rejudge", "nope"])
    assert res.exit_code == 2 and "neither a tournament" in res.output
    res = CliRunner().invoke(cli, ["--models", str(models), "--store", str(store), "rejudge", "r-000",
                                   "--judges", "ghost"])
    assert res.exit_code == 2 and "not in models.toml" in res.output and not llmock.requests


@pytest.mark.slow
def test_rejudge_resumes_after_kill_9_without_duplicates(tmp_path: Path, llmock: Any) -> None:
    from llmock.scenarios import Delay

    llmock.add(Reply(text=json.dumps(SCORED), times=None, match=Match(model="judge-two")))
    llmock.add(Delay(0.4, times=None))
    models, store, rounds = _setup(tmp_path, llmock, n=6, json_schema=False)
    env = subprocess_env(EBTUI_TEST_KEY="sk-test", EBTUI_STORE_FSYNC="0")
    cmd = [sys.executable, "-m", "ebtui", "--models", str(models), "--store", str(store), "rejudge",
           *[r.id for r in rounds], "--judges", "judge2", "--repeats", "2", "--concurrency", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def saved() -> list[str]:
        keys = []
        for p in (store / "rounds").glob("*.json"):
            keys += [j["key"] for j in json.loads(p.read_text()).get("extra_judgments", [])]
        return keys

    deadline = time.monotonic() + 60
    while len(saved()) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = saved()
    assert 3 <= len(first) < 12
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    keys = saved()
    assert len(keys) == len(set(keys)) == 12  # every planned judgment once
    assert set(first) <= set(keys)
    posts = [q for q in llmock.requests if q.method == "POST"]
    assert {q.model for q in posts} == {"judge-two"} and len(posts) <= 12 + 1  # at most the call in flight again


# -- own views --------------------------------------------------------------------------------------------


def test_view_and_conclusion_replies_are_read_strictly() -> None:
    view = parse_view('Here: {"options": ["restore", "refuse", "ask"], "choice": 2, "confidence": 0.7, "reason": "r"}')
    assert view == {"options": ["restore", "refuse", "ask"], "choice": 2, "confidence": 0.7, "reason": "r"}
    assert parse_view('{"options": ["only one"], "choice": 1, "confidence": 0.5}') is None
    assert parse_view('{"options": ["a", "b"], "choice": 3, "confidence": 0.5}') is None
    assert parse_view("no json at all") is None
    assert parse_conclusions('{"team_a": 2, "team_b": 0}', 3) == {"a": 2, "b": None}
    assert parse_conclusions('{"team_a": 9, "team_b": true}', 3) == {"a": None, "b": None}
    assert parse_conclusions('```json\n{"team_a": "3", "team_b": 1.0}\n```', 3) == {"a": 3, "b": 1}
    assert parse_view('{"options": ["x", "y"], "choice": "2", "confidence": "0.6"}')["choice"] == 2  # type: ignore[index]


def test_views_are_asked_once_cached_and_give_agreement(tmp_path: Path, llmock: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    view = {"options": ["restore", "refuse"], "choice": 1, "confidence": 0.8, "reason": "consent"}
    llmock.add(Reply(text=json.dumps(view), times=1, match=Match(model="judge-one")))
    llmock.add(Reply(text=json.dumps({"team_a": 1, "team_b": 2}), times=None, match=Match(model="judge-one")))
    models, store, rounds = _setup(tmp_path, llmock, n=2, json_schema=False)
    args = ["--models", str(models), "--store", str(store), "rejudge", "r-000", "r-001", "--only-views"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    posts = [q for q in llmock.requests if q.method == "POST"]
    assert len(posts) == 3 and {q.model for q in posts} == {"judge-one"}  # 1 view + 2 conclusions
    amap = agreement_map(store)
    assert amap == {("judge", "r-000"): {"a": True, "b": False}, ("judge", "r-001"): {"a": True, "b": False}}
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and len([q for q in llmock.requests if q.method == "POST"]) == 3  # cached


def test_overrides_and_acceptance_work_per_judgment(tmp_path: Path) -> None:
    store = tmp_path / "store"
    r = make_round(7)
    extra = Judgment(team_a_scores=Scores(**dict.fromkeys(CRITERIA, 4)), team_b_scores=Scores(**dict.fromkeys(CRITERIA, 9)),
                     judge_model="judge2", key="j-extra", origin="rejudge", order="ba", repeat=1)
    r.extra_judgments = [extra]
    rs = ResultsStore(store)
    rs.save_round(r)
    rs.close()
    base = ["--store", str(store), "rounds"]
    res = CliRunner().invoke(cli, [*base, "override", r.id, "--judgment", "j-extra", "--team", "a", "--criterion",
                                   "consistency", "--value", "2", "--note", "misread"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, [*base, "accept", r.id, "--judgment", "j-extra", "--all"])
    assert res.exit_code == 0 and "13 score(s) accepted" in res.output, res.output
    bad = CliRunner().invoke(cli, [*base, "accept", r.id, "--judgment", "j-nope", "--all"])
    assert bad.exit_code == 2 and "no judgment with key" in bad.output
    got = ResultsStore(store).load_round(r.id)
    assert got.judgment is not None and not got.judgment.overrides  # the round's own judgment untouched
    j = got.extra_judgments[0]
    assert j.effective_scores("a").consistency == 2 and j.team_a_scores.consistency == 4
    assert sum(o.kind == "accept" for o in j.overrides) == 13
    shown = CliRunner().invoke(cli, [*base, "show", r.id])
    assert shown.exit_code == 0 and "Judgment 2 of 2 — key j-extra" in shown.output and "Team B first" in shown.output


def test_rejudge_batch_sends_the_judge_calls_as_one_batch(tmp_path: Path, llmock: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from llmock.routers import batch as llmock_batch

    monkeypatch.setattr(llmock_batch, "_BATCH_DELAY", 0.3)
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    models, store, rounds = _setup(tmp_path, llmock, n=3, json_schema=False)
    args = ["--models", str(models), "--store", str(store), "rejudge", *[r.id for r in rounds], "--judges",
            "judge2", "--batch"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    posts = [q for q in llmock.requests if q.method == "POST"]
    assert not [q for q in posts if q.path.endswith("/chat/completions")]  # nothing streamed
    assert len([q for q in posts if q.path.endswith("/v1/batches")]) == 1  # one wave, one batch
    assert sorted((store / "batches").glob("rejudge-*.json"))
    got = [ResultsStore(store).load_round(r.id) for r in rounds]
    assert all(len(r.extra_judgments) == 1 and r.extra_judgments[0].judge_model == "judge2" for r in got)


def test_a_budget_stops_asking_and_a_rerun_with_more_asks_the_rest(tmp_path: Path, llmock: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    llmock.add(Reply(text=json.dumps(SCORED), times=None, match=Match(model="judge-two")))
    models, store, rounds = _setup(tmp_path, llmock, n=4, json_schema=False)
    args = ["--models", str(models), "--store", str(store), "rejudge", *[r.id for r in rounds], "--judges", "judge2",
            "--concurrency", "1"]
    per_call = json.loads(CliRunner().invoke(cli, [*args, "--dry-run", "--json"]).output)["estimate"]["total_usd"] / 4
    res = CliRunner().invoke(cli, [*args, "--budget", str(per_call * 2.5)])
    assert res.exit_code == 1 and "not asked: over the" in res.output, res.output
    asked = len([q for q in llmock.requests if q.method == "POST"])
    assert 1 <= asked <= 3
    res = CliRunner().invoke(cli, [*args, "--budget", "100"])
    assert res.exit_code == 0, res.output
    assert len([q for q in llmock.requests if q.method == "POST"]) == 4  # only the rest was asked
    assert all(len(ResultsStore(store).load_round(r.id).extra_judgments) == 1 for r in rounds)
