"""The round engine with the scripted model: order, overlap, failures, cancellation, resume, panels."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ebtui.core import prompts
from ebtui.core.events import (
    JudgmentParsed,
    PhaseFailed,
    PhaseFinished,
    PhaseRetrying,
    PhaseStarted,
    RoundFinished,
    TextDelta,
)
from ebtui.core.records import CRITERIA, PHASE_ORDER, PhaseStatus, PhaseType, Round, RoundStatus
from ebtui.core.round import judge_exchange, play_round, run_round
from ebtui.providers.base import ModelClient
from ebtui.providers.retry import RetryingClient, RetryPolicy
from ebtui.providers.scripted import ScriptedClient, ScriptedFault
from tests.support.factories import memory_trust, round_spec, scripted_clients

DILEMMA = memory_trust()

REBUTTAL_MARK = "# Your task: Team A's rebuttal"
ERROR_MARK = "ZX-rebuttal-exploded-42"


class RecordingStore:
    """Keeps a deep copy of the round at every save, to check what a crash at any point would leave."""

    def __init__(self) -> None:
        self.snapshots: list[Round] = []

    def save_round(self, round_: Round) -> None:
        self.snapshots.append(round_.model_copy(deep=True))


async def collect(agen: Any) -> list[Any]:
    return [ev async for ev in agen]


async def test_a_complete_round() -> None:
    store = RecordingStore()
    events = await collect(run_round(round_spec(), scripted_clients(), store))
    final = events[-1]
    assert isinstance(final, RoundFinished)
    r = final.round
    assert r.status == RoundStatus.COMPLETE and r.error is None
    assert [p.phase_type for p in r.phases] == list(PHASE_ORDER)
    for ph in r.phases:
        assert ph.status == PhaseStatus.COMPLETE
        assert ph.prompt.startswith(prompts.dilemma_block(DILEMMA))
        assert ph.system_prompt == prompts.SYSTEM_PROMPT
        assert ph.response.strip()
        assert ph.finished_at is not None and ph.finished_at >= ph.timestamp
        assert ph.usage.input_tokens > 0 and ph.usage.output_tokens > 0
        assert ph.latency is not None and ph.latency >= 0
        assert ph.attempts == 1 and ph.finish_reason == "stop"
    speakers = {p.phase_type: p.model_id for p in r.phases}
    assert speakers == {
        PhaseType.PRESENTATION: "alpha",
        PhaseType.RESPONSE: "beta",
        PhaseType.REBUTTAL: "alpha",
        PhaseType.CONSISTENCY_TEST: "alpha",
        PhaseType.JUDGMENT: "judge",
    }
    # each phase's prompt carries the earlier phases' answers it needs
    pres = r.phase("presentation").response
    assert pres in r.phase("response").prompt and pres in r.phase("rebuttal").prompt
    assert r.phase("response").response in r.phase("rebuttal").prompt
    for pt in ("presentation", "response", "rebuttal", "consistency_test"):
        assert r.phase(pt).response in r.phase("judgment").prompt
    # the judgment was parsed from the judge's structured answer
    assert r.judgment is not None and r.judgment.judge_model == "judge"
    assert not r.judgment.needs_review
    for team in ("a", "b"):
        scores = r.judgment.parsed_scores(team).as_dict()
        assert set(scores) == set(CRITERIA) and all(1 <= v <= 10 for v in scores.values())
    assert sum(isinstance(e, JudgmentParsed) for e in events) == 1
    assert sum(isinstance(e, PhaseStarted) for e in events) == 5
    assert sum(isinstance(e, PhaseFinished) for e in events) == 5
    # text deltas add up to each phase's response
    for ph in r.phases:
        streamed = "".join(e.text for e in events if isinstance(e, TextDelta) and e.phase_type == ph.phase_type)
        assert streamed == ph.response
    # saved at every transition: 5 starts + 5 finishes + the final save (+ the initial one)
    assert len(store.snapshots) >= 11
    assert store.snapshots[-1].status == RoundStatus.COMPLETE


async def test_consistency_test_overlaps_response_and_rebuttal() -> None:
    # about 100 tokens per phase at 1000 tokens/s: ~0.1 s each
    cl = scripted_clients(alpha=ScriptedClient("alpha", tokens_per_second=1000),
                 beta=ScriptedClient("beta", tokens_per_second=1000))
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    events = await collect(run_round(round_spec(), cl))
    elapsed = loop.time() - t0
    r = events[-1].round
    resp, reb, cons = r.phase("response"), r.phase("rebuttal"), r.phase("consistency_test")
    # the consistency test started before the response finished, and finished before the rebuttal did
    assert cons.timestamp < resp.finished_at
    assert cons.finished_at < reb.finished_at
    assert resp.timestamp < cons.finished_at
    # in the event stream, consistency-test text arrives between the response's first and last pieces
    kinds = [(i, e.phase_type) for i, e in enumerate(events) if isinstance(e, TextDelta)]
    resp_idx = [i for i, pt in kinds if pt == PhaseType.RESPONSE]
    cons_idx = [i for i, pt in kinds if pt == PhaseType.CONSISTENCY_TEST]
    assert any(resp_idx[0] < i < resp_idx[-1] for i in cons_idx)
    # and the round took less than the phases' summed latency
    total = sum(p.latency for p in r.phases)
    assert elapsed < total - 0.5 * cons.latency


def _retrying(client: ModelClient, attempts: int = 2) -> RetryingClient:
    return RetryingClient(client, RetryPolicy(attempts=attempts, backoff_s=0.0, backoff_max_s=0.0))


async def test_failed_rebuttal_leaves_the_round_incomplete_and_never_passes_the_error_on() -> None:
    alpha = ScriptedClient("alpha", faults=[ScriptedFault(kind="server", match=REBUTTAL_MARK, times=10,
                                                          message=ERROR_MARK)])
    store = RecordingStore()
    events = await collect(run_round(round_spec(), scripted_clients(alpha=_retrying(alpha, 3)), store))
    r = events[-1].round
    reb = r.phase("rebuttal")
    assert reb.status == PhaseStatus.FAILED
    assert reb.error_kind == "server" and ERROR_MARK in reb.error
    assert reb.response == "" and reb.attempts == 3
    retries = [e for e in events if isinstance(e, PhaseRetrying)]
    assert [e.attempt for e in retries] == [2, 3] and all(e.phase_type == PhaseType.REBUTTAL for e in retries)
    assert r.phase("consistency_test").status == PhaseStatus.COMPLETE
    assert r.phase("presentation").status == PhaseStatus.COMPLETE
    assert r.phase("response").status == PhaseStatus.COMPLETE
    judg = r.phase("judgment")
    assert judg.status == PhaseStatus.SKIPPED and judg.error == "needs rebuttal, which failed"
    assert judg.prompt == "" and r.judgment is None
    assert r.status == RoundStatus.INCOMPLETE and ERROR_MARK in (r.error or "")
    # the error text is in the error fields only: no prompt, response or event text carries it
    for ph in r.phases:
        assert ERROR_MARK not in ph.prompt and ERROR_MARK not in ph.response
        assert ERROR_MARK not in ph.partial_response
    assert not any(ERROR_MARK in e.text for e in events if isinstance(e, TextDelta))
    assert store.snapshots[-1].status == RoundStatus.INCOMPLETE
    failed = [e.phase.phase_type for e in events if isinstance(e, PhaseFailed)]
    assert failed == [PhaseType.REBUTTAL, PhaseType.JUDGMENT]


async def test_failure_mid_stream_keeps_partial_text_out_of_the_response() -> None:
    beta = ScriptedClient("beta", faults=[ScriptedFault(kind="stream", match="", times=1, after_tokens=5,
                                                        message=ERROR_MARK)])
    r = await play_round(round_spec(), scripted_clients(beta=beta))
    resp = r.phase("response")
    assert resp.status == PhaseStatus.FAILED and resp.error_kind == "stream"
    assert resp.response == "" and resp.partial_response.strip()
    assert resp.partial_response not in r.phase("rebuttal").prompt  # the rebuttal never ran
    assert r.phase("rebuttal").status == PhaseStatus.SKIPPED
    assert r.phase("rebuttal").error == "needs response, which failed"
    assert r.phase("judgment").error == "needs response, which failed"
    assert r.phase("consistency_test").status == PhaseStatus.COMPLETE
    assert r.status == RoundStatus.INCOMPLETE


async def test_failed_presentation_fails_the_round() -> None:
    alpha = ScriptedClient("alpha", faults=[ScriptedFault(kind="auth", times=5, message=ERROR_MARK)])
    r = await play_round(round_spec(), scripted_clients(alpha=alpha))
    assert r.status == RoundStatus.FAILED
    assert r.phase("presentation").status == PhaseStatus.FAILED
    for pt in ("response", "rebuttal", "consistency_test", "judgment"):
        assert r.phase(pt).status == PhaseStatus.SKIPPED
        assert r.phase(pt).error == "needs presentation, which failed"


async def test_truncation_is_a_failure_not_content() -> None:
    r = await play_round(round_spec(max_tokens=5), scripted_clients())
    pres = r.phase("presentation")
    assert pres.status == PhaseStatus.FAILED and pres.error_kind == "truncated"
    assert pres.response == "" and pres.partial_response
    assert r.status == RoundStatus.FAILED


async def test_cancellation_saves_the_round_incomplete() -> None:
    store = RecordingStore()
    seen: list[Any] = []
    started = asyncio.Event()

    async def consume() -> None:
        async for ev in run_round(round_spec(), scripted_clients(beta=ScriptedClient("beta", tokens_per_second=50)), store):
            seen.append(ev)
            if isinstance(ev, TextDelta) and ev.phase_type == PhaseType.RESPONSE:
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = store.snapshots[-1]
    assert last.status == RoundStatus.INCOMPLETE and last.error == "cancelled"
    assert last.phase("presentation").status == PhaseStatus.COMPLETE
    resp = last.phase("response")
    assert resp.status == PhaseStatus.CANCELLED and resp.response == ""
    assert resp.partial_response  # what had streamed is kept for the record
    assert last.phase("judgment") is None  # never started
    assert not any(isinstance(e, RoundFinished) for e in seen)


async def test_closing_the_event_stream_early_saves_incomplete() -> None:
    store = RecordingStore()
    agen = run_round(round_spec(), scripted_clients(alpha=ScriptedClient("alpha", tokens_per_second=200)), store)
    async for ev in agen:
        if isinstance(ev, TextDelta):
            break
    await agen.aclose()
    last = store.snapshots[-1]
    assert last.status == RoundStatus.INCOMPLETE
    assert last.phase("presentation").status == PhaseStatus.CANCELLED


async def test_resume_continues_from_the_first_missing_phase() -> None:
    alpha = ScriptedClient("alpha", faults=[ScriptedFault(kind="server", match=REBUTTAL_MARK, times=1)])
    first = await play_round(round_spec(), scripted_clients(alpha=alpha))
    assert first.status == RoundStatus.INCOMPLETE
    kept = {pt: first.phase(pt).model_copy(deep=True) for pt in ("presentation", "response", "consistency_test")}

    fresh = scripted_clients()
    store = RecordingStore()
    events = await collect(run_round(round_spec(), fresh, store, resume=first))
    r = events[-1].round
    assert r.id == first.id and r.status == RoundStatus.COMPLETE
    assert [p.phase_type for p in r.phases] == list(PHASE_ORDER)
    for pt, before in kept.items():
        assert r.phase(pt) == before  # untouched
    # only the rebuttal and the judgment were asked for
    assert fresh["alpha"].calls == 1 and fresh["beta"].calls == 0 and fresh["judge"].calls == 1
    started = [e.phase_type for e in events if isinstance(e, PhaseStarted)]
    assert started == [PhaseType.REBUTTAL, PhaseType.JUDGMENT]
    # the kept phases are announced first, so a front end can show them
    assert [e.phase.phase_type for e in events[:3]] == [PhaseType.PRESENTATION, PhaseType.RESPONSE,
                                                         PhaseType.CONSISTENCY_TEST]
    assert first.status == RoundStatus.INCOMPLETE  # the caller's record is not mutated


async def test_resume_of_a_killed_round_reruns_the_phase_in_flight() -> None:
    store = RecordingStore()
    await play_round(round_spec(), scripted_clients(), store)
    # what a kill -9 during the rebuttal leaves on disk: the rebuttal running, the round running
    crashed = next(s for s in store.snapshots
                   if s.phase("rebuttal") is not None and s.phase("rebuttal").status == PhaseStatus.RUNNING)
    assert crashed.status == RoundStatus.RUNNING
    fresh = scripted_clients()
    r = await play_round(round_spec(), fresh, resume=crashed)
    assert r.status == RoundStatus.COMPLETE
    assert fresh["beta"].calls == 0 and fresh["judge"].calls == 1
    assert fresh["alpha"].calls == (1 if crashed.phase("consistency_test").status == PhaseStatus.COMPLETE else 2)


async def test_prose_judge_needs_review_and_invents_no_score() -> None:
    r = await play_round(round_spec(), scripted_clients(judge=ScriptedClient("judge", judge_mode="prose")))
    assert r.status == RoundStatus.COMPLETE  # the judge answered: the phase is complete
    assert r.phase("judgment").status == PhaseStatus.COMPLETE
    j = r.judgment
    assert j is not None and j.needs_review and j.review_reasons
    for team in ("a", "b"):
        assert all(v is None for v in j.parsed_scores(team).as_dict().values())
    assert j.raw_response == r.phase("judgment").response


async def test_judge_asked_for_json_schema_only_when_supported() -> None:
    seen: dict[str, Any] = {}

    class Recording(ScriptedClient):
        def stream(self, prompt: str, system_prompt: str, *, json_schema: Any = None, max_tokens: Any = None):
            seen[self.name] = json_schema
            return super().stream(prompt, system_prompt, json_schema=json_schema, max_tokens=max_tokens)

    class NoSchema(Recording):
        supports_json_schema = False

    await play_round(round_spec(), scripted_clients(judge=Recording("judge")))
    assert seen["judge"] and "team_a" in seen["judge"].get("properties", {})
    await play_round(round_spec(), scripted_clients(judge=NoSchema("judge")))
    assert seen["judge"] is None


async def test_blind_judge_sees_no_model_ids() -> None:
    r = await play_round(round_spec(blind_judge=True), scripted_clients())
    jp = r.phase("judgment").prompt
    assert "alpha" not in jp and "beta" not in jp
    assert r.blind_judge
    r2 = await play_round(round_spec(), scripted_clients())
    assert "alpha" in r2.phase("judgment").prompt and "beta" in r2.phase("judgment").prompt


async def test_judge_exchange_reuses_phases_one_to_four() -> None:
    source = await play_round(round_spec(tournament_id="t-1"), scripted_clients())
    store = RecordingStore()
    other = ScriptedClient("judge2")
    events = await collect(judge_exchange(source, "judge2", other, store, tournament_id="t-1", schedule_key="k2",
                                          round_id="r-panel-2"))
    r = events[-1].round
    assert r.id == "r-panel-2" and store.snapshots[-1].id == "r-panel-2"
    assert r.id != source.id and r.exchange_id == source.exchange_id == source.id
    assert r.judge_model == "judge2" and r.schedule_key == "k2" and r.status == RoundStatus.COMPLETE
    for pt in ("presentation", "response", "rebuttal", "consistency_test"):
        assert r.phase(pt).reused_from == source.id
        assert r.phase(pt).response == source.phase(pt).response
    assert r.phase("judgment").reused_from is None and r.phase("judgment").model_id == "judge2"
    assert r.judgment is not None and r.judgment.judge_model == "judge2"
    assert other.calls == 1
    assert [e.phase_type for e in events if isinstance(e, PhaseStarted)] == [PhaseType.JUDGMENT]
    # usage of reused phases is not counted twice
    assert r.total_usage() == r.phase("judgment").usage


async def test_missing_client_is_reported_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="judge"):
        await collect(run_round(round_spec(), {"alpha": ScriptedClient("alpha"), "beta": ScriptedClient("beta")}))


async def test_an_event_handler_gets_each_event_once_in_its_own_method() -> None:
    """RoundEventHandler: the dispatch a consumer may subclass; every event of a real round reaches exactly
    the method named for its kind, in order (a failed phase goes to on_phase_failed, not on_phase_finished)."""
    from ebtui.core.events import RoundEventHandler

    class Recorder(RoundEventHandler):
        def __init__(self) -> None:
            self.seen: list[tuple[str, Any]] = []

        def on_phase_started(self, event: PhaseStarted) -> None:
            self.seen.append(("started", event))

        def on_text(self, event: TextDelta) -> None:
            self.seen.append(("text", event))

        def on_phase_finished(self, event: PhaseFinished) -> None:
            self.seen.append(("finished", event))

        def on_phase_failed(self, event: PhaseFailed) -> None:
            self.seen.append(("failed", event))

        def on_judgment(self, event: JudgmentParsed) -> None:
            self.seen.append(("judgment", event))

        def on_round_finished(self, event: RoundFinished) -> None:
            self.seen.append(("round", event))

    kind = {PhaseStarted: "started", TextDelta: "text", PhaseFinished: "finished", PhaseFailed: "failed",
            JudgmentParsed: "judgment", RoundFinished: "round"}
    failing = ScriptedClient("alpha", faults=[ScriptedFault(kind="auth", match=REBUTTAL_MARK, times=5)])
    for c in (scripted_clients(), scripted_clients(alpha=failing)):
        events = await collect(run_round(round_spec(), c, RecordingStore()))
        rec = Recorder()
        for ev in events:
            rec.handle(ev)
        assert rec.seen == [(kind[type(ev)], ev) for ev in events if type(ev) in kind]
        assert rec.seen[-1][0] == "round"
    assert any(k == "failed" for k, _ in rec.seen)  # the second round's rebuttal failed
    retry = PhaseRetrying("r", PhaseType.RESPONSE, 2, "server: boom", 0.1)
    assert RoundEventHandler().handle(retry) is None  # an unhandled kind is a no-op, never an error
