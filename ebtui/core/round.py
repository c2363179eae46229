"""The round engine: the one orchestrator of a round, used by the CLI, the TUI and tournaments.
`run_round` is an async generator of events (ebtui.core.events) over the Round it holds: presentation,
response → rebuttal beside the consistency test, judgment; a failed phase never feeds another, and the
round is saved after every phase transition (RoundFinished means it is on disk; cancelling saves it
INCOMPLETE). Rules and recovery (`resume=`): docs/ROUNDS.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ebtui.core import events, prompts
from ebtui.core.events import END, EventQueue, RoundEvent
from ebtui.core.facts import exchange_key, may_resume, seats, speaker
from ebtui.core.judgment import JUDGMENT_SCHEMA, parse_judgment
from ebtui.core.liveness import writer_stamp
from ebtui.core.records import (
    NO_CONSISTENCY_CASE,
    PHASE_ORDER,
    Dilemma,
    Phase,
    PhaseStatus,
    PhaseType,
    Round,
    RoundSettings,
    RoundStatus,
    utcnow,
)
from ebtui.core.replies import clip_error, closing, keep_round, redact, start_call, stop_reason
from ebtui.core.store import BackgroundSaver, ResultsStore, StoreError
from ebtui.providers.base import BAD_FINISH, Completion, Delta, ModelClient, ProviderError, Retrying

log = logging.getLogger(__name__)

#: what each phase needs (all of it transitively)
PHASE_NEEDS: dict[PhaseType, tuple[PhaseType, ...]] = {
    PhaseType.PRESENTATION: (),
    PhaseType.RESPONSE: (PhaseType.PRESENTATION,),
    PhaseType.REBUTTAL: (PhaseType.PRESENTATION, PhaseType.RESPONSE),
    PhaseType.CONSISTENCY_TEST: (PhaseType.PRESENTATION,),
    PhaseType.JUDGMENT: (
        PhaseType.PRESENTATION,
        PhaseType.RESPONSE,
        PhaseType.REBUTTAL,
        PhaseType.CONSISTENCY_TEST,
    ),
}

_ORDER_INDEX = {pt: i for i, pt in enumerate(PHASE_ORDER)}


class RoundSaver(Protocol):
    """What the engine needs of a store (ebtui.core.store.ResultsStore provides it)."""

    def save_round(self, round_: Round) -> object: ...


@dataclass
class RoundSpec:
    """What to play: a dilemma, the two teams and the judge (model names as configured)."""

    dilemma: Dilemma
    team_a: str
    team_b: str
    judge: str
    blind_judge: bool = False
    tournament_id: str | None = None
    schedule_key: str | None = None
    round_id: str | None = None
    max_tokens: int | None = None
    document: str = ""
    #: model -> family for the seats, recorded in the round's settings (see RoundSettings.families)
    families: Mapping[str, str] | None = None
    #: the order the judge reads the teams' material in: "ab" (as it happened) or "ba" (Team B's first)
    judge_order: str = "ab"
    max_reply_chars: int | None = None  #: the longest reply taken, in characters (see ebtui.core.replies)


def _seat_families(spec: RoundSpec) -> dict[str, str] | None:
    fams = spec.families or {}
    seats = {m: fams[m] for m in (spec.team_a, spec.team_b, spec.judge) if fams.get(m)}
    return seats or None


def new_round(spec: RoundSpec) -> Round:
    """A fresh Round record for a spec (status running, no phases yet)."""
    fields: dict[str, str] = {}
    if spec.round_id:
        fields["id"] = spec.round_id
    round_ = Round(
        dilemma_id=spec.dilemma.id,
        dilemma_title=spec.dilemma.title,
        team_a_model=spec.team_a,
        team_b_model=spec.team_b,
        judge_model=spec.judge,
        tournament_id=spec.tournament_id,
        schedule_key=spec.schedule_key,
        blind_judge=spec.blind_judge,
        document=spec.document,
        settings=RoundSettings(
            max_tokens=spec.max_tokens,
            dilemma=spec.dilemma.model_dump(mode="json"),
            writer=writer_stamp(),
            families=_seat_families(spec),
        ),
        **fields,
    )
    round_.exchange_id = round_.id
    return round_


def _done(ph: Phase | None) -> bool:
    """Complete, or a consistency test skipped because the dilemma has none (counts as done, sends nothing)."""
    return ph is not None and (ph.status == PhaseStatus.COMPLETE or ph.error_kind == NO_CONSISTENCY_CASE)


def _kept_phases(round_: Round) -> set[PhaseType]:
    """Phases of a round that can be kept on resume: complete, and everything they need kept too."""
    kept: set[PhaseType] = set()
    for pt in PHASE_ORDER:
        ph = round_.phase(pt)
        if ph is not None and _done(ph) and all(n in kept for n in PHASE_NEEDS[pt]):
            kept.add(pt)
    return kept


class _Engine:
    def __init__(
        self,
        spec: RoundSpec,
        round_: Round,
        clients: Mapping[str, ModelClient],
        store: RoundSaver | None,
        kept: set[PhaseType],
    ) -> None:
        self.spec = spec
        self.round = round_
        self.clients = clients
        self.store = store
        self.background: BackgroundSaver | None = (
            store.background_saver() if isinstance(store, ResultsStore) else None
        )
        self.kept = kept
        self.buffers: dict[PhaseType, list[str]] = {}
        self.emit: Callable[[RoundEvent], None] = lambda ev: None
        self.emit_text: Callable[[str, PhaseType, str], None] = lambda rid, pt, text: None

    # -- bookkeeping -----------------------------------------------------------------------------------
    def save(self) -> None:
        if self.background is not None:
            self.background.save_round(self.round)
        elif self.store is not None:
            self.store.save_round(self.round)

    async def landed(self) -> None:
        """Wait (without blocking the loop) until the round's saves are on disk; raise a failed write."""
        if self.background is not None:
            await asyncio.wrap_future(self.background.landed(self.round.id))

    def landed_now(self, timeout: float = 60.0) -> None:
        """The same, blocking: for the cancellation path, where awaiting could be cancelled again."""
        if self.background is not None:
            self.background.landed(self.round.id).result(timeout)

    def model_for(self, pt: PhaseType) -> str:
        return speaker(pt, seats(self.spec.team_a, self.spec.team_b, self.spec.judge))

    def put_phase(self, phase: Phase) -> None:
        """Insert (or replace) a phase, keeping the list in PHASE_ORDER whatever order phases ran in."""
        phases = [p for p in self.round.phases if p.phase_type != phase.phase_type]
        phases.append(phase)
        phases.sort(key=lambda p: _ORDER_INDEX[p.phase_type])
        self.round.phases = phases

    def response_of(self, pt: PhaseType) -> str:
        ph = self.round.phase(pt)
        assert ph is not None and _done(ph)
        if ph.status != PhaseStatus.COMPLETE:  # no consistency case: the judge is told so
            return "(There was no consistency test: this dilemma has no consistency case.)"
        return ph.response

    def blocking_need(self, pt: PhaseType) -> Phase | PhaseType | None:
        """The first phase this one needs that did not complete (None: it can run)."""
        for need in PHASE_ORDER:
            if need in PHASE_NEEDS[pt]:
                ph = self.round.phase(need)
                if not _done(ph):
                    return ph if ph is not None else need
        return None

    # -- prompts ---------------------------------------------------------------------------------------
    def prompt_for(self, pt: PhaseType) -> str:
        d = self.spec.dilemma
        if pt == PhaseType.PRESENTATION:
            return prompts.presentation_prompt(d)
        pres = self.response_of(PhaseType.PRESENTATION)
        if pt == PhaseType.RESPONSE:
            return prompts.response_prompt(d, pres)
        if pt == PhaseType.REBUTTAL:
            return prompts.rebuttal_prompt(d, pres, self.response_of(PhaseType.RESPONSE))
        if pt == PhaseType.CONSISTENCY_TEST:
            return prompts.consistency_prompt(d, pres)
        return prompts.judgment_prompt(
            d,
            self.spec.team_a,
            pres,
            self.spec.team_b,
            self.response_of(PhaseType.RESPONSE),
            self.response_of(PhaseType.REBUTTAL),
            self.response_of(PhaseType.CONSISTENCY_TEST),
            blind=self.spec.blind_judge,
            order=self.spec.judge_order,
        )

    # -- running ---------------------------------------------------------------------------------------
    async def orchestrate(self, queue: EventQueue) -> None:
        self.emit = queue.put
        self.emit_text = queue.put_text
        try:
            await self.step(PhaseType.PRESENTATION)
            try:
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(self.response_then_rebuttal())
                    tg.create_task(self.step(PhaseType.CONSISTENCY_TEST))
            except ExceptionGroup as eg:  # a store or engine error in one branch: surface it plainly
                raise eg.exceptions[0] from eg
            await self.step(PhaseType.JUDGMENT)
        finally:
            queue.put(END)

    async def response_then_rebuttal(self) -> None:
        await self.step(PhaseType.RESPONSE)
        await self.step(PhaseType.REBUTTAL)

    async def step(self, pt: PhaseType) -> None:
        if pt in self.kept:
            return
        if pt == PhaseType.CONSISTENCY_TEST and not self.spec.dilemma.consistency_case.strip():
            now = utcnow()  # never an empty consistency prompt: the phase is recorded as skipped, visibly
            phase = Phase(phase_type=pt, model_id=self.model_for(pt), status=PhaseStatus.SKIPPED,
                          error="this dilemma has no consistency case", error_kind=NO_CONSISTENCY_CASE,
                          timestamp=now, finished_at=now)
            self.put_phase(phase)
            self.save()
            self.emit(events.PhaseFailed(self.round.id, phase))
            return
        blocker = self.blocking_need(pt)
        if blocker is not None:
            self.skip(pt, blocker)
            return
        await self.run_phase(pt)

    def skip(self, pt: PhaseType, blocker: Phase | PhaseType) -> None:
        if isinstance(blocker, Phase):
            how = {
                PhaseStatus.FAILED: "failed",
                PhaseStatus.SKIPPED: "was skipped",
                PhaseStatus.CANCELLED: "was cancelled",
            }.get(blocker.status, "did not complete")
            need = blocker.phase_type
        else:
            how, need = "did not run", blocker
        now = utcnow()
        phase = Phase(
            phase_type=pt,
            model_id=self.model_for(pt),
            status=PhaseStatus.SKIPPED,
            error=f"needs {need.value}, which {how}",
            timestamp=now,
            finished_at=now,
        )
        self.put_phase(phase)
        self.save()
        self.emit(events.PhaseFailed(self.round.id, phase))

    async def run_phase(self, pt: PhaseType) -> None:
        model = self.model_for(pt)
        client = self.clients[model]
        prompt = self.prompt_for(pt)
        json_schema = JUDGMENT_SCHEMA if pt == PhaseType.JUDGMENT and client.supports_json_schema else None
        phase = Phase(
            phase_type=pt,
            model_id=model,
            prompt=prompt,
            system_prompt=prompts.SYSTEM_PROMPT,
            status=PhaseStatus.RUNNING,
            attempts=1,
            timestamp=utcnow(),
        )
        self.put_phase(phase)
        self.save()
        rid = self.round.id
        self.emit(events.PhaseStarted(rid, pt, model, 1))
        buf = self.buffers[pt] = []
        t0 = time.monotonic()
        completion: Completion | None = None
        append, emit_text = buf.append, self.emit_text  # the per-delta path: kept to two calls
        cap = await start_call(self, rid, model)  # no call once a save failed (see ebtui.core.replies)
        try:
            async with closing(client.stream(
                prompt, prompts.SYSTEM_PROMPT, json_schema=json_schema, max_tokens=self.spec.max_tokens
            )) as stream:
                async for item in stream:
                    if isinstance(item, Delta):
                        text = item.text
                        if text:
                            text = cap.take(text, buf)
                            append(text)
                            emit_text(rid, pt, text)
                    elif isinstance(item, Retrying):
                        buf.clear()
                        cap.reset()
                        phase.attempts = item.attempt
                        self.emit(events.PhaseRetrying(rid, pt, item.attempt, str(item.error), item.delay_s))
                    elif isinstance(item, Completion):
                        completion = item
            if completion is None:
                raise ProviderError("stream", f"{model}: stream ended without a completion", partial_text="".join(buf))
            bad = BAD_FINISH.get(completion.finish_reason)
            if bad is not None:  # the contract says providers raise; be sure anyway
                raise ProviderError(
                    bad,
                    f"{model}: finished with reason {completion.finish_reason!r}",
                    partial_text=completion.text,
                )
            if not completion.text.strip():
                raise ProviderError("empty", f"{model}: empty answer")
            cap.check(completion.text)
        except ProviderError as exc:
            self.fail(phase, str(exc), exc.kind, exc.partial_text or "".join(buf), max(phase.attempts, exc.attempts), t0)
            return
        except asyncio.CancelledError:
            if phase.status == PhaseStatus.RUNNING:
                self.cancel_phase(phase)
                self.save()
            raise
        except Exception as exc:  # a bug in a client must not take the whole round (or tournament) down
            log.exception("%s: unexpected error in %s", model, pt.value)
            self.fail(phase, f"internal: {type(exc).__name__}: {exc}", "internal", "".join(buf), phase.attempts, t0)
            return
        finally:
            self.buffers.pop(pt, None)

        phase.response = redact(completion.text)
        phase.finish_reason = completion.finish_reason
        phase.usage = completion.usage
        phase.latency = completion.latency_s or (time.monotonic() - t0)
        phase.attempts = max(phase.attempts, completion.attempts)
        phase.finished_at = utcnow()
        phase.status = PhaseStatus.COMPLETE
        judgment = None
        if pt == PhaseType.JUDGMENT:
            judgment = parse_judgment(phase.response, team_a_id=self.spec.team_a, team_b_id=self.spec.team_b)
            judgment.judge_model = model
            judgment.order = "ba" if self.spec.judge_order == "ba" else "ab"
            judgment.prompt_version = prompts.JUDGE_PROMPT_VERSION
            judgment.judged_at = phase.finished_at
            judgment.blind = self.spec.blind_judge
            self.round.judgment = judgment
        self.save()
        self.emit(events.PhaseFinished(rid, phase))
        if judgment is not None:
            self.emit(events.JudgmentParsed(rid, judgment))

    def fail(self, phase: Phase, error: str, kind: str, partial: str, attempts: int, t0: float) -> None:
        phase.status = PhaseStatus.FAILED
        phase.error = clip_error(redact(error))
        phase.error_kind = kind
        phase.partial_response = redact(partial)
        phase.response = ""
        phase.attempts = attempts
        phase.latency = time.monotonic() - t0
        phase.finished_at = utcnow()
        self.save()
        self.emit(events.PhaseFailed(self.round.id, phase))

    def cancel_phase(self, phase: Phase) -> None:
        phase.status = PhaseStatus.CANCELLED
        phase.error = "cancelled"
        phase.partial_response = "".join(self.buffers.get(phase.phase_type, ()))
        phase.finished_at = utcnow()

    def interrupt(self, reason: str) -> None:
        """The round stops early (cancelled, closed or broken): mark what was running, save as incomplete."""
        for ph in self.round.phases:
            if ph.status == PhaseStatus.RUNNING:
                self.cancel_phase(ph)
        self.round.status = RoundStatus.INCOMPLETE
        self.round.error = redact(reason)
        self.round.finished_at = utcnow()
        self.save()

    def finish(self) -> None:
        r = self.round
        statuses = {pt: (ph.status if (ph := r.phase(pt)) else None) for pt in PHASE_ORDER}
        if all(_done(r.phase(pt)) for pt in PHASE_ORDER):
            r.status = RoundStatus.COMPLETE
            r.error = None
        else:
            pres = statuses[PhaseType.PRESENTATION]
            r.status = RoundStatus.FAILED if pres == PhaseStatus.FAILED else RoundStatus.INCOMPLETE
            first = next(
                (p for p in r.phases if p.status in (PhaseStatus.FAILED, PhaseStatus.CANCELLED)),
                None,
            )
            r.error = f"{first.phase_type.value} {first.status.value}: {first.error}" if first else "incomplete"
        r.finished_at = utcnow()
        self.save()


async def _drive(engine: _Engine) -> AsyncGenerator[RoundEvent, None]:
    for pt in PHASE_ORDER:  # announce what a resumed (or reused) round already has
        ph = engine.round.phase(pt)
        if pt in engine.kept and ph is not None:
            yield events.PhaseFinished(engine.round.id, ph)
    if PhaseType.JUDGMENT in engine.kept and engine.round.judgment is not None:
        yield events.JudgmentParsed(engine.round.id, engine.round.judgment)
    # no save here: the first step saves at once (its phase starting, skipped, or kept through to finish)

    queue = EventQueue()
    task = asyncio.ensure_future(engine.orchestrate(queue))
    take = queue.take
    try:
        while True:
            await queue.wait()
            event = take()
            if event is END:
                break
            yield event
        await task  # surface an engine/store error
        engine.finish()
        await engine.landed()
    except BaseException as exc:
        # cancelled, closed early by the consumer, or an error: save what we have, stop the phases
        stopped = isinstance(exc, asyncio.CancelledError | GeneratorExit | KeyboardInterrupt)
        try:
            engine.interrupt("cancelled" if stopped else stop_reason(exc))
            engine.landed_now()
        except StoreError:  # the store cannot be written (again): the error raised is the first one
            if not isinstance(exc, StoreError):
                raise
        finally:
            keep_round(exc, engine.round)
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait([task])
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: no "never retrieved" warning
        raise
    yield events.RoundFinished(engine.round)


def _check_clients(spec: RoundSpec, clients: Mapping[str, ModelClient], needed: set[PhaseType]) -> None:
    seat_map = seats(spec.team_a, spec.team_b, spec.judge)
    names = {pt: speaker(pt, seat_map) for pt in needed}
    missing = sorted({n for n in names.values() if n not in clients})
    if missing:
        raise ValueError(f"no client for model(s): {', '.join(missing)}")


async def run_round(
    spec: RoundSpec,
    clients: Mapping[str, ModelClient],
    store: RoundSaver | None = None,
    *,
    resume: Round | None = None,
) -> AsyncGenerator[RoundEvent, None]:
    """Play (or resume) one round, yielding its events; the last event is RoundFinished.

    `clients` maps model names (spec.team_a, spec.team_b, spec.judge) to clients. With `resume`, the
    round keeps its id and its completed phases and continues from the first missing or failed one.
    """
    if resume is not None:
        if not may_resume(resume, spec.dilemma.id, spec.team_a, spec.team_b):
            raise ValueError(f"round {resume.id} does not match the spec (dilemma or teams differ)")
        round_ = resume.model_copy(deep=True)
        kept = _kept_phases(round_)
        if PhaseType.JUDGMENT not in kept:
            round_.judge_model = spec.judge
        round_.phases = [p for p in round_.phases if p.phase_type in kept]
        if PhaseType.JUDGMENT not in kept:
            round_.judgment = None
        round_.status = RoundStatus.RUNNING
        round_.error = None
        round_.finished_at = None
        round_.exchange_id = exchange_key(round_)
        if round_.settings.dilemma is None:
            round_.settings.dilemma = spec.dilemma.model_dump(mode="json")
        round_.settings.writer = writer_stamp()
    else:
        round_ = new_round(spec)
        kept = set()
    _check_clients(spec, clients, set(PHASE_ORDER) - kept)
    # closing the inner generator explicitly: a consumer that stops early (aclose) must reach its cleanup now
    async with contextlib.aclosing(_drive(_Engine(spec, round_, clients, store, kept))) as stream:
        async for event in stream:
            yield event


async def judge_exchange(
    source: Round,
    judge: str,
    client: ModelClient,
    store: RoundSaver | None = None,
    *,
    blind_judge: bool = False,
    tournament_id: str | None = None,
    schedule_key: str | None = None,
    dilemma: Dilemma | None = None,
    round_id: str | None = None,
    families: Mapping[str, str] | None = None,
    judge_order: str = "ab",
) -> AsyncGenerator[RoundEvent, None]:
    """Judge an existing exchange again (a judge panel): a new Round sharing the source's phases 1-4.

    The new round has `reused_from` set on the copied phases and the source's exchange id; only the
    judgment runs. The dilemma comes from the source round's snapshot unless given; `round_id` pins the
    new round's id (tournaments use deterministic ids so a re-run overwrites rather than duplicates).
    """
    if dilemma is None:
        snapshot = source.settings.dilemma
        if not snapshot:
            raise ValueError(f"round {source.id} carries no dilemma snapshot; pass dilemma=")
        dilemma = Dilemma.model_validate(snapshot)
    exchange = [pt for pt in PHASE_ORDER if pt != PhaseType.JUDGMENT]
    for pt in exchange:
        ph = source.phase(pt)
        if ph is None or ph.status != PhaseStatus.COMPLETE:
            raise ValueError(f"round {source.id}: {pt.value} is not complete, nothing to judge")
    spec = RoundSpec(
        dilemma=dilemma,
        team_a=source.team_a_model,
        team_b=source.team_b_model,
        judge=judge,
        blind_judge=blind_judge,
        tournament_id=tournament_id,
        schedule_key=schedule_key,
        round_id=round_id,
        max_tokens=source.settings.max_tokens,
        document=source.document,
        families={**(source.settings.families or {}), **(families or {})},
        judge_order=judge_order,
    )
    round_ = new_round(spec)
    round_.exchange_id = exchange_key(source)
    for pt in exchange:
        ph = source.phase(pt)
        assert ph is not None
        copied = ph.model_copy(deep=True)
        copied.reused_from = ph.reused_from or source.id
        round_.phases.append(copied)
    engine = _Engine(spec, round_, {judge: client}, store, set(exchange))
    async with contextlib.aclosing(_drive(engine)) as stream:
        async for event in stream:
            yield event


async def play_round(
    spec: RoundSpec,
    clients: Mapping[str, ModelClient],
    store: RoundSaver | None = None,
    *,
    resume: Round | None = None,
    on_event: Callable[[RoundEvent], object] | None = None,
) -> Round:
    """Run a round to the end and return it (events passed to on_event, if given)."""
    result: Round | None = None
    async with contextlib.aclosing(run_round(spec, clients, store, resume=resume)) as stream:
        async for event in stream:
            if on_event is not None:
                on_event(event)
            if isinstance(event, events.RoundFinished):
                result = event.round
    assert result is not None
    return result
