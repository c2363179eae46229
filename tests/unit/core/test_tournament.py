"""Tournaments in the core: config, schedule, the concurrent runner, panels, limits, budget, resume."""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PHASE_ORDER, PhaseStatus, PhaseType, Round, RoundStatus, TournamentStatus
from ebtui.core.store import ResultsStore
from ebtui.core.tournament import (
    AdaptiveLimiter,
    RoundCompleted,
    TournamentFinished,
    TournamentRunner,
    estimate_tournament,
    summarize_rounds,
)
from ebtui.core.tournament.config import (
    TournamentConfigError,
    load_tournament_config,
    parse_tournament_config,
)
from ebtui.core.tournament.schedule import ScheduleError, build_schedule
from ebtui.providers.base import ModelClient, StreamItem
from ebtui.providers.retry import RetryingClient, RetryPolicy
from ebtui.providers.scripted import ScriptedClient, ScriptedFault
from tests.support.factories import calls_by_role, open_store


@pytest.fixture(scope="module")
def dilemmas() -> list[Any]:
    return load_dilemmas()


def two(dilemmas: list[Any]) -> list[str]:
    return [d.id for d in dilemmas[:2]]


def config(**kw: Any) -> Any:
    return parse_tournament_config(kw, "t.toml")


def scripted(names: str | list[str], **kw: Any) -> dict[str, ScriptedClient]:
    return {n: ScriptedClient(n, **kw) for n in names}


def store(tmp_path: Path) -> ResultsStore:
    return open_store(tmp_path / "store")


async def run(runner: TournamentRunner) -> tuple[Any, list[Any]]:
    events = [ev async for ev in runner.run()]
    finished = events[-1]
    assert isinstance(finished, TournamentFinished)
    return finished, events


def tournament_rounds(rs: ResultsStore, tid: str) -> list[Round]:
    paths = sorted((rs.root / "rounds").glob(f"{tid}-*.json"))
    return [rs.load_round(p.stem) for p in paths]


def calls_in_rounds(rounds: list[Round]) -> dict[str, Counter[str]]:
    """Model calls a set of saved rounds made: phases that ran (complete or failed), not reused copies."""
    return calls_by_role(rounds)


def assert_no_self_judging(rounds: list[Round]) -> None:
    for r in rounds:
        assert r.judge_model not in (r.team_a_model, r.team_b_model), r.schedule_key


# -- config --------------------------------------------------------------------------------------------
def test_config_errors_name_file_and_field(tmp_path: Path) -> None:
    p = tmp_path / "my.toml"
    cases = {
        'models = ["a", "b"]\nrounds_per_pairing = 0': "field rounds_per_pairing",
        'models = ["a", "b"]\nconcurency = 3': "field concurency: unknown field",
        'dilemmas = "all"': "field models: required field is missing",
        'models = ["a", "a"]': "field models: listed more than once: a",
        'models = ["a", "b"]\n[limits.providers]\nopenai = 0': "field limits.providers",
        'models = ["a", "b"]\nbudget_usd = -1': "field budget_usd",
        'models = ["a", "b"]\njudges = []': "field judges",
        'models = ["a"': "not valid TOML",
    }
    for text, expected in cases.items():
        p.write_text(text)
        with pytest.raises(TournamentConfigError) as info:
            load_tournament_config(p)
        msg = str(info.value)
        assert msg.startswith(str(p)), msg
        assert expected in msg, msg
        assert "\n" not in msg
    with pytest.raises(TournamentConfigError, match="no such file"):
        load_tournament_config(tmp_path / "missing.toml")


def test_tournament_id_is_deterministic_and_ignores_runtime_settings() -> None:
    base = dict(models=["a", "b", "c"], seed=3)
    tid = config(**base).tournament_id()
    assert config(**base).tournament_id() == tid
    assert config(**base, concurrency=2, budget_usd=1.0, limits={"providers": {"x": 1}}).tournament_id() == tid
    assert config(**{**base, "seed": 4}).tournament_id() != tid
    assert config(**base, rounds_per_pairing=2).tournament_id() != tid


# -- schedule ------------------------------------------------------------------------------------------
def test_schedule_rotation_is_balanced_and_never_self_judging() -> None:
    models = ["a", "b", "c", "d", "e"]
    s = build_schedule(models, ["d1", "d2", "d3"], rounds_per_pairing=2, seed=7)
    assert len(s) == 3 * 5 * 4 * 2
    for r in s.rounds:
        assert r.judge not in (r.team_a, r.team_b)
    counts = s.judge_counts()
    assert set(counts) == set(models)
    assert max(counts.values()) - min(counts.values()) <= 1
    # every model presents, responds, judges and is judged
    roles = s.calls_by_model_role()
    for m in models:
        assert roles[m]["presenting"] and roles[m]["responding"] and roles[m]["judging"]
    # each ordered pairing appears once per dilemma and repeat
    pairs = Counter((r.dilemma_id, r.team_a, r.team_b) for r in s.rounds)
    assert set(pairs.values()) == {2}
    # deterministic given the seed; keys are unique
    again = build_schedule(models, ["d1", "d2", "d3"], rounds_per_pairing=2, seed=7)
    assert [r.schedule_key for r in again.rounds] == [r.schedule_key for r in s.rounds]
    assert len({r.schedule_key for r in s.rounds}) == len(s)
    other = build_schedule(models, ["d1", "d2", "d3"], rounds_per_pairing=2, seed=8)
    assert [r.schedule_key for r in other.rounds] != [r.schedule_key for r in s.rounds]


def test_schedule_two_models_needs_listed_judges() -> None:
    with pytest.raises(ScheduleError, match="only two models"):
        build_schedule(["a", "b"], ["d1"])
    with pytest.raises(ScheduleError, match="no judge for a vs b"):
        build_schedule(["a", "b"], ["d1"], judges=["a", "b"])
    s = build_schedule(["a", "b"], ["d1"], judges=["j"])
    assert [r.judge for r in s.rounds] == ["j", "j"]
    # a listed judge that also plays only judges rounds it is not in
    s = build_schedule(["a", "b", "c"], ["d1"], judges=["a", "z"], self_debates=True)
    for r in s.rounds:
        assert r.judge not in (r.team_a, r.team_b)
    assert Counter(r.judge for r in s.rounds)["a"] > 0
    with pytest.raises(ScheduleError, match="self-debate"):
        build_schedule(["a"], ["d1"], judges=["a"], self_debates=True)


def test_schedule_panel_and_self_debates() -> None:
    s = build_schedule(["a", "b", "c", "d"], ["d1"], judges="panel", self_debates=True)
    assert len(s.exchanges) == 16  # 12 ordered pairings + 4 self-debates
    for ex in s.exchanges:
        expected = {"a", "b", "c", "d"} - {ex.team_a, ex.team_b}
        assert set(ex.judges) == expected
    assert len(s) == 12 * 2 + 4 * 3


# -- the runner ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("write_behind", [True, False])
async def test_three_models_two_dilemmas_complete_and_match_dry_run(
    tmp_path: Path, dilemmas: list[Any], write_behind: bool
) -> None:
    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas), concurrency=6)
    clients = scripted("abc", latency_s=0.005)
    rs = store(tmp_path)
    runner = TournamentRunner(cfg, clients, rs, dilemmas=dilemmas, write_behind=write_behind)
    est = estimate_tournament(cfg, runner.schedule, dilemmas, runner.infos)
    finished, events = await run(runner)
    assert finished.tournament.status == TournamentStatus.COMPLETE
    rounds = tournament_rounds(rs, runner.tournament_id)
    assert len(rounds) == 2 * 3 * 2 == est.rounds
    assert all(r.status == RoundStatus.COMPLETE for r in rounds)
    assert all(len(r.phases) == 5 and r.judgment is not None for r in rounds)
    assert_no_self_judging(rounds)
    assert {r.schedule_key for r in rounds} == {sr.schedule_key for sr in runner.schedule.rounds}
    # the dry run's call counts are the real run's, per model and role
    assert calls_in_rounds(rounds) == {m: Counter(c) for m, c in est.calls.items()}
    assert {n: c.calls for n, c in clients.items()} == {m: sum(c.values()) for m, c in est.calls.items()}
    assert sum(isinstance(e, RoundCompleted) for e in events) == 12
    saved = rs.load_tournament(runner.tournament_id)
    assert saved.status == TournamentStatus.COMPLETE and saved.total_rounds == 12
    # the summary's by-model means are recomputed from the round files
    s = finished.summary
    for m in "abc":
        vals = [r.judgment.effective_scores(t).mean() for r in rounds for t, mm in
                (("a", r.team_a_model), ("b", r.team_b_model)) if mm == m]
        assert s.by_model[m][1] == len(vals)
        assert s.by_model[m][0] == pytest.approx(sum(vals) / len(vals))
    assert "Cross-model matrix" in s.format()


async def test_rerun_skips_complete_rounds(tmp_path: Path, dilemmas: list[Any]) -> None:
    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas)[:1])
    rs = store(tmp_path)
    await run(TournamentRunner(cfg, scripted("abc"), rs, dilemmas=dilemmas))
    clients = scripted("abc")
    finished, _ = await run(TournamentRunner(cfg, clients, rs, dilemmas=dilemmas))
    assert finished.tournament.status == TournamentStatus.COMPLETE
    assert finished.progress.already_done == 6
    assert sum(c.calls for c in clients.values()) == 0
    assert len(tournament_rounds(rs, cfg.tournament_id())) == 6


async def test_panel_runs_phases_once_and_one_call_per_extra_judge(tmp_path: Path, dilemmas: list[Any]) -> None:
    cfg = config(models=["a", "b", "c", "d"], dilemmas=two(dilemmas)[:1], judges="panel", concurrency=12)
    clients = scripted("abcd", latency_s=0.1)
    rs = store(tmp_path)
    runner = TournamentRunner(cfg, clients, rs, dilemmas=dilemmas)
    est = estimate_tournament(cfg, runner.schedule, dilemmas, runner.infos)
    finished, _ = await run(runner)
    assert finished.tournament.status == TournamentStatus.COMPLETE
    rounds = tournament_rounds(rs, runner.tournament_id)
    assert len(rounds) == 12 * 2
    assert_no_self_judging(rounds)
    by_exchange: dict[str, list[Round]] = defaultdict(list)
    for r in rounds:
        by_exchange[r.exchange_id or r.id].append(r)
    assert len(by_exchange) == 12
    for group in by_exchange.values():
        assert len(group) == 2  # every model not playing judged it
        assert len({r.judge_model for r in group}) == 2
        originals = [r for r in group if not any(p.reused_from for p in r.phases)]
        assert len(originals) == 1
        copies = [r for r in group if r is not originals[0]]
        for c in copies:
            for pt in (PhaseType.PRESENTATION, PhaseType.RESPONSE, PhaseType.REBUTTAL, PhaseType.CONSISTENCY_TEST):
                assert c.phase(pt).reused_from == originals[0].id
                assert c.phase(pt).response == originals[0].phase(pt).response
            # the extra judge started as soon as phases 1-4 were in, alongside the primary judgment
            assert c.phase(PhaseType.JUDGMENT).timestamp < originals[0].phase(PhaseType.JUDGMENT).finished_at
    # phases 1-4 ran once per exchange: calls per model equal the dry run's (3 + 1 + 2 judges per exchange)
    assert {n: c.calls for n, c in clients.items()} == {m: sum(c.values()) for m, c in est.calls.items()}
    assert sum(c.calls for c in clients.values()) == 12 * (4 + 2)
    assert calls_in_rounds(rounds) == {m: Counter(c) for m, c in est.calls.items()}


class Tracker(ModelClient):
    """Counts calls in flight per provider, independently of the runner's own limiters."""

    def __init__(self, inner: ModelClient, provider: str, live: Counter[str], peak: Counter[str]) -> None:
        self.inner, self.name, self.provider, self.model = inner, inner.name, provider, inner.model
        self.supports_json_schema = inner.supports_json_schema
        self.max_concurrency = getattr(inner, "max_concurrency", None)
        self.live, self.peak = live, peak

    async def stream(self, prompt: str, system_prompt: str, **kw: Any) -> AsyncIterator[StreamItem]:
        for key in (self.provider, self.name):
            self.live[key] += 1
            self.peak[key] = max(self.peak[key], self.live[key])
        try:
            async for item in self.inner.stream(prompt, system_prompt, **kw):
                yield item
        finally:
            for key in (self.provider, self.name):
                self.live[key] -= 1


async def test_per_provider_and_model_limits_hold(tmp_path: Path, dilemmas: list[Any]) -> None:
    live: Counter[str] = Counter()
    peak: Counter[str] = Counter()
    providers = {"a": "openai", "b": "openai", "c": "anthropic", "d": "google"}
    clients = {n: Tracker(ScriptedClient(n, latency_s=0.01), p, live, peak) for n, p in providers.items()}
    cfg = config(models=list(providers), dilemmas=two(dilemmas), concurrency=32,
                 limits={"providers": {"openai": 2, "anthropic": 1}, "models": {"d": 3}})
    rs = store(tmp_path)
    runner = TournamentRunner(cfg, clients, rs, dilemmas=dilemmas)
    finished, _ = await run(runner)
    assert finished.tournament.status == TournamentStatus.COMPLETE
    assert peak["openai"] == 2  # reached, never exceeded
    assert peak["anthropic"] == 1
    assert 1 < peak["google"] <= 3


async def test_a_models_own_limit_never_holds_a_provider_slot(tmp_path: Path, dilemmas: list[Any]) -> None:
    live: Counter[str] = Counter()
    peak: Counter[str] = Counter()
    policy = RetryPolicy(stall_timeout_s=None)
    slow_one = RetryingClient(ScriptedClient("a", latency_s=0.01), policy, max_concurrency=1)
    clients = {
        "a": Tracker(slow_one, "openai", live, peak),
        "b": Tracker(ScriptedClient("b", latency_s=0.01), "openai", live, peak),
        "c": Tracker(ScriptedClient("c", latency_s=0.01), "anthropic", live, peak),
    }
    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas), concurrency=12,
                 limits={"providers": {"openai": 2}})
    finished, _ = await run(TournamentRunner(cfg, clients, store(tmp_path), dilemmas=dilemmas))
    assert finished.tournament.status == TournamentStatus.COMPLETE
    assert peak["a"] == 1  # a's calls waited for a's slot before taking one of openai's
    assert peak["openai"] == 2


async def test_a_tournament_limits_each_call_in_one_layer(tmp_path: Path, dilemmas: list[Any]) -> None:
    """The tournament takes a model's limit over from the provider layer: its model limiter is the smaller of
    tournament.toml's and the client's own, and the client it wraps holds no semaphore of its own."""
    policy = RetryPolicy(stall_timeout_s=None)
    inner = {n: ScriptedClient(n, latency_s=0.005) for n in "abc"}
    clients = {"a": RetryingClient(inner["a"], policy, max_concurrency=2),
               "b": RetryingClient(inner["b"], policy, max_concurrency=5),
               "c": RetryingClient(inner["c"], policy)}
    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas), concurrency=12, limits={"models": {"b": 3}})
    runner = TournamentRunner(cfg, clients, store(tmp_path), dilemmas=dilemmas)
    wrapped = {n: c.inner for n, c in runner.clients.items()}  # type: ignore[attr-defined]
    assert all(isinstance(w, RetryingClient) and not w.max_concurrency for w in wrapped.values())
    assert all(wrapped[n].inner is inner[n] for n in "abc")  # same model, same retries, no second limit
    assert clients["a"].max_concurrency == 2  # the caller's client keeps its limit for use outside
    finished, _ = await run(runner)
    assert finished.tournament.status == TournamentStatus.COMPLETE
    lims = runner.model_limiters
    assert {n: lims[n].max_limit for n in lims} == {"a": 2, "b": 3}
    assert lims["a"].max_in_use == 2 and 1 < lims["b"].max_in_use <= 3


async def test_a_failing_model_leaves_its_rounds_incomplete_and_the_rest_complete(
    tmp_path: Path, dilemmas: list[Any]
) -> None:
    clients = scripted("abc", latency_s=0.002)
    clients["d"] = ScriptedClient("d", faults=[ScriptedFault(kind="auth", times=10**6, message="bad key")])
    cfg = config(models=["a", "b", "c", "d"], dilemmas=two(dilemmas)[:1])
    rs = store(tmp_path)
    runner = TournamentRunner(cfg, clients, rs, dilemmas=dilemmas)
    finished, _ = await run(runner)
    assert finished.tournament.status == TournamentStatus.INCOMPLETE
    rounds = tournament_rounds(rs, runner.tournament_id)
    assert len(rounds) == 12
    for r in rounds:
        if "d" in (r.team_a_model, r.team_b_model, r.judge_model):
            assert r.status in (RoundStatus.INCOMPLETE, RoundStatus.FAILED)
            failed = [p for p in r.phases if p.status == PhaseStatus.FAILED]
            assert failed and all(p.model_id == "d" and p.response == "" for p in failed)
        else:
            assert r.status == RoundStatus.COMPLETE
    complete = [r for r in rounds if r.status == RoundStatus.COMPLETE]
    assert complete and all("d" not in (r.team_a_model, r.team_b_model, r.judge_model) for r in complete)
    assert finished.progress.incomplete == 12 - len(complete)


async def test_budget_stop_then_resume_with_larger_budget(tmp_path: Path, dilemmas: list[Any]) -> None:
    def clients() -> dict[str, ScriptedClient]:
        return scripted("abc", latency_s=0.003, price_in=2.0, price_out=8.0)

    base = dict(models=["a", "b", "c"], dilemmas=two(dilemmas), concurrency=3, expected_output_tokens=300)
    rs = store(tmp_path)
    # what the whole tournament costs
    full = clients()
    f_full, _ = await run(TournamentRunner(config(**base, name="full"), full, store(tmp_path / "x"),
                                           dilemmas=dilemmas))
    total = f_full.progress.cost_usd
    assert total > 0

    first = clients()
    cfg = config(**base, budget_usd=round(total * 0.4, 6))
    runner = TournamentRunner(cfg, first, rs, dilemmas=dilemmas)
    finished, _ = await run(runner)
    assert finished.tournament.status == TournamentStatus.STOPPED_BUDGET
    assert finished.progress.cost_usd <= cfg.budget_usd
    assert "--budget" in runner.resume_hint(budget=10)
    rounds = tournament_rounds(rs, runner.tournament_id)
    assert 0 < sum(r.status == RoundStatus.COMPLETE for r in rounds) < 12
    assert rs.load_tournament(runner.tournament_id).status == TournamentStatus.STOPPED_BUDGET

    second = clients()
    runner2 = TournamentRunner(cfg, second, rs, dilemmas=dilemmas, budget_usd=total * 3)
    assert runner2.tournament_id == runner.tournament_id
    finished2, _ = await run(runner2)
    assert finished2.tournament.status == TournamentStatus.COMPLETE
    rounds = tournament_rounds(rs, runner.tournament_id)
    assert len(rounds) == 12 and all(r.status == RoundStatus.COMPLETE for r in rounds)
    # a refused call never reached the model, and nothing was played twice
    made = {n: first[n].calls + second[n].calls for n in "abc"}
    assert made == {n: full[n].calls for n in "abc"}
    assert finished2.progress.cost_usd == pytest.approx(total, rel=1e-6)


async def test_cancel_then_resume_continues_without_duplicates(tmp_path: Path, dilemmas: list[Any]) -> None:
    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas), concurrency=2)
    rs = store(tmp_path)
    runner = TournamentRunner(cfg, scripted("abc", latency_s=0.02), rs, dilemmas=dilemmas)
    seen = 0
    async for ev in runner.run():
        if isinstance(ev, RoundCompleted):
            seen += 1
            if seen == 3:
                runner.cancel()
        last = ev
    assert isinstance(last, TournamentFinished)
    assert last.tournament.status == TournamentStatus.INCOMPLETE
    partial = tournament_rounds(rs, runner.tournament_id)
    assert any(r.status != RoundStatus.COMPLETE for r in partial)  # in-flight rounds saved as they stood

    clients = scripted("abc")
    finished, _ = await run(TournamentRunner(cfg, clients, rs, dilemmas=dilemmas))
    assert finished.tournament.status == TournamentStatus.COMPLETE
    rounds = tournament_rounds(rs, runner.tournament_id)
    assert len(rounds) == 12 and all(r.status == RoundStatus.COMPLETE for r in rounds)
    assert all([p.phase_type for p in r.phases] == list(PHASE_ORDER) for r in rounds)
    assert all(p.status == PhaseStatus.COMPLETE and p.response for r in rounds for p in r.phases)
    # the resumed run only made the calls that were missing
    complete_before = sum(r.status == RoundStatus.COMPLETE for r in partial)
    assert sum(c.calls for c in clients.values()) <= (12 - complete_before) * 5


async def test_rate_limits_slow_the_provider_down_and_the_round_completes(
    tmp_path: Path, dilemmas: list[Any]
) -> None:
    fast = RetryPolicy(attempts=4, backoff_s=0.01, backoff_max_s=0.02, stall_timeout_s=None)
    limited = ScriptedClient("a", faults=[ScriptedFault(kind="rate_limit", times=3)])
    clients: dict[str, ModelClient] = {
        "a": RetryingClient(limited, fast),
        "b": RetryingClient(ScriptedClient("b"), fast),
        "c": RetryingClient(ScriptedClient("c"), fast),
    }
    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas)[:1])
    runner = TournamentRunner(cfg, clients, store(tmp_path), dilemmas=dilemmas)
    finished, _ = await run(runner)
    assert finished.tournament.status == TournamentStatus.COMPLETE
    assert runner.provider_limiters["scripted"].backoffs >= 1


# -- the adaptive limiter ------------------------------------------------------------------------------
async def test_adaptive_limiter_halves_pauses_and_recovers() -> None:
    lim = AdaptiveLimiter("p", 4)
    live = 0
    peak = 0

    async def call(i: int) -> None:
        nonlocal live, peak
        async with lim:
            live += 1
            peak = max(peak, live)
            await asyncio.sleep(0.005)
            live -= 1

    await asyncio.gather(*(call(i) for i in range(20)))
    assert peak == 4
    lim.backoff(0.05)
    assert lim.limit == 2
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await lim.acquire()
    assert loop.time() - t0 >= 0.04  # paused
    lim.release()
    tasks = [asyncio.create_task(call(i)) for i in range(6)]
    await asyncio.sleep(0.002)
    assert live == 2  # the halved limit holds while the first calls run
    await asyncio.gather(*tasks)
    await asyncio.gather(*(call(i) for i in range(60)))
    assert lim.limit == 4  # grew back after successes

    unlimited = AdaptiveLimiter("q", None)
    await asyncio.gather(*(unlimited.acquire() for _ in range(8)))
    unlimited.backoff(0.0)
    assert unlimited.limit == 4
    for _ in range(8):
        unlimited.release()
    for _ in range(20):
        await unlimited.acquire()
        unlimited.release()
    assert unlimited.limit is None


def test_summary_leaves_missing_scores_out() -> None:
    from ebtui.core.records import Judgment, Scores

    full = {c: 6 for c in Scores.model_fields if c != "schema_version"}
    r1 = Round(dilemma_id="d", team_a_model="x", team_b_model="y", judge_model="z",
               judgment=Judgment(team_a_scores=Scores(**full), team_b_scores=Scores(principle_articulation=2)))
    r2 = Round(dilemma_id="d", team_a_model="y", team_b_model="x", judge_model="z", judgment=None)
    s = summarize_rounds([r1, r2])
    assert s.rounds == 2 and s.scored_rounds == 1
    assert s.missing_scores == 6
    assert s.by_model["x"] == (6.0, 1)
    assert s.by_model["y"] == (2.0, 1)
    assert s.matrix[("x", "y")] == (6.0, 2.0, 1)


# -- real SDKs against llmock: a provider answering 429 is slowed down, the others are not ------------
async def test_429s_from_one_provider_back_off_that_provider_only(
    tmp_path: Path, dilemmas: list[Any], llmock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ebtui.config import parse_models
    from ebtui.providers.registry import build_clients

    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    fast = {"backoff_s": 0.05, "backoff_max_s": 0.2, "timeout_s": 10.0, "stall_timeout_s": 5.0, "attempts": 5,
            "max_tokens": 400, "api_key_env": "EBTUI_TEST_KEY"}
    tables = {
        "gpt": {"provider": "openai", "model": "gpt-4o-mini", "base_url": llmock.base_url("openai"), **fast},
        "claude": {"provider": "anthropic", "model": "claude-sonnet-4-6", "base_url": llmock.base_url("anthropic"),
                   **fast},
        "gemini": {"provider": "google", "model": "gemini-2.5-flash", "base_url": llmock.base_url("gemini"), **fast},
    }
    models = parse_models({"models": tables}, None)
    clients = build_clients(models, tables)
    llmock.rate_limit(times=3, retry_after=0.2, provider="openai")
    cfg = config(models=list(tables), dilemmas=two(dilemmas)[:1], concurrency=6)
    runner = TournamentRunner(cfg, clients, store(tmp_path), dilemmas=dilemmas, models_config=models)
    try:
        finished, _ = await run(runner)
    finally:
        for c in clients.values():
            await c.aclose()
    assert finished.tournament.status == TournamentStatus.COMPLETE
    assert runner.provider_limiters["openai"].backoffs >= 1
    assert runner.provider_limiters["anthropic"].backoffs == 0
    assert runner.provider_limiters["google"].backoffs == 0
    # (llmock's verdict is not asserted here: it groups requests by body, and two rounds in which gpt
    # presents the same dilemma send identical bodies, so a concurrent twin looks like an early retry)
    openai_429s = [r for r in llmock.requests if r.provider == "openai" and r.status == 429]
    assert len(openai_429s) == 3


async def test_the_same_tournament_cannot_run_twice_at_once(tmp_path: Path, dilemmas: list[Any]) -> None:
    from ebtui.core.tournament import TournamentBusyError

    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas)[:1])
    rs = store(tmp_path)
    first = TournamentRunner(cfg, scripted("abc", latency_s=0.05), rs, dilemmas=dilemmas)
    second = TournamentRunner(cfg, scripted("abc"), open_store(rs.root), dilemmas=dilemmas)
    gen = first.run()
    await anext(gen)  # TournamentStarted: the first run holds the lock
    with pytest.raises(TournamentBusyError, match="already running"):
        await run(second)
    events = [ev async for ev in gen]
    assert events[-1].tournament.status == TournamentStatus.COMPLETE
    finished, _ = await run(second)  # free again once the first is done
    assert finished.progress.already_done == 6


@pytest.mark.slow
async def test_wall_time_stays_near_the_critical_path(tmp_path: Path, dilemmas: list[Any]) -> None:
    """48 rounds all in flight, each call 0.3 s: the critical path of a round is 4 calls (presentation,
    response, rebuttal — the consistency test runs alongside — and the judgment), so 1.2 s in all."""
    import time

    names = ["a", "b", "c", "d"]
    cfg = config(models=names, dilemmas=[d.id for d in dilemmas[:4]], concurrency=48)
    runner = TournamentRunner(cfg, scripted(names, latency_s=0.3), store(tmp_path), dilemmas=dilemmas)
    t0 = time.perf_counter()
    finished, _ = await run(runner)
    wall = time.perf_counter() - t0
    assert finished.tournament.status == TournamentStatus.COMPLETE
    assert len(runner.schedule) == 48
    assert 1.2 <= wall < 1.2 * 2.5, wall


async def test_a_consumer_that_stops_listening_leaves_a_saved_incomplete_tournament(
    tmp_path: Path, dilemmas: list[Any]
) -> None:
    cfg = config(models=["a", "b", "c"], dilemmas=two(dilemmas), concurrency=2)
    rs = store(tmp_path)
    runner = TournamentRunner(cfg, scripted("abc", latency_s=0.02), rs, dilemmas=dilemmas)
    gen = runner.run()
    async for ev in gen:
        if isinstance(ev, RoundCompleted):
            break
    await gen.aclose()
    saved = rs.load_tournament(runner.tournament_id)
    assert saved.status == TournamentStatus.INCOMPLETE
    rounds = tournament_rounds(rs, runner.tournament_id)
    assert not any(r.status == RoundStatus.RUNNING for r in rounds)
