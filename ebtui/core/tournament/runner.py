"""The tournament runner: plays the schedule concurrently, with per-call provider and model limits, the
budget, resume (round ids derive from the schedule key, so nothing is played twice), a dry run and a
summary; a failed round never stops the tournament. The front ends use `TournamentRunner(...).run()`
(an async iterator of progress events) and `cancel()`. Nothing here prints. Rules: docs/TOURNAMENTS.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ebtui.core.events import PhaseFinished, RoundFinished
from ebtui.core.records import (
    PHASE_ORDER,
    Dilemma,
    Phase,
    PhaseStatus,
    PhaseType,
    Round,
    RoundStatus,
    Tournament,
    TournamentStatus,
    utcnow,
)
from ebtui.core.store.files import StoreError
from ebtui.core.tournament.config import TournamentConfig
from ebtui.core.tournament.costs import Budget, configured_families, model_infos, round_cost
from ebtui.core.tournament.events import (
    Progress,
    ProgressUpdated,
    RoundCompleted,
    RoundNotRun,
    TournamentEvent,
    TournamentFinished,
    TournamentStarted,
    summarize_rounds,
)
from ebtui.core.tournament.limits import AdaptiveLimiter, CallStats, build_limited_clients
from ebtui.core.tournament.schedule import Exchange, Schedule, ScheduledRound, ScheduleError, make_schedule
from ebtui.core.views import numbers as num
from ebtui.providers.base import ModelClient

__all__ = [
    "PaceOptions",
    "RunOptions",
    "TournamentBusyError",
    "TournamentRunner",
    "tournament_is_running",
]

if TYPE_CHECKING:
    from ebtui.config import ModelsConfig
    from ebtui.core.round import RoundSaver, RoundSpec
    from ebtui.core.store import ResultsStore

log = logging.getLogger("ebtui.core.tournament")


class PaceOptions(TypedDict, total=False):
    """How a runner reports and saves, as a caller may set it (TournamentRunner's keywords of the same name)."""

    progress_interval_s: float
    write_behind: bool


class RunOptions(PaceOptions, total=False):
    """What a caller may set on a planned tournament's runner (`TournamentPlan.runner`, `runner_for`)."""

    budget_usd: float | None


class TournamentBusyError(Exception):
    """Another process is running this tournament right now (two runs would play the same rounds)."""


class _TournamentLock:
    """An flock held while a tournament runs; the OS drops it when the process dies (even kill -9)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl
        import os

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            tid = self.path.name.removeprefix(".").removesuffix(".lock")
            raise TournamentBusyError(
                f"tournament {tid} is already running in another process (lock {self.path})"
            ) from None
        self._fd = fd

    def release(self) -> None:
        import os

        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def tournament_is_running(store: ResultsStore, tournament_id: str) -> bool:
    """Whether some process is running this tournament now (its lock is held). A tournament saved as
    "running" that is not running was interrupted (killed): run it again to resume it."""
    import fcntl
    import os

    path = store.root / "tournaments" / f".{tournament_id}.lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


class TournamentRunner:
    """Runs (or resumes) a tournament. `async for event in runner.run(): ...`; `runner.cancel()` stops it."""

    def __init__(
        self,
        config: TournamentConfig,
        clients: Mapping[str, ModelClient],
        store: ResultsStore,
        *,
        dilemmas: list[Dilemma],
        schedule: Schedule | None = None,
        models_config: ModelsConfig | None = None,
        tournament_id: str | None = None,
        budget_usd: float | None = None,
        progress_interval_s: float = 0.5,
        write_behind: bool = True,
    ) -> None:
        self.config = config
        self.store = store
        #: where the round engine saves: the store itself, or a write-behind thread in front of it
        self.saver: RoundSaver = store
        self._write_behind = write_behind
        self.dilemmas = {d.id: d for d in dilemmas}
        #: built once: by the plan (passed in) or here from the config
        self.schedule = schedule if schedule is not None else make_schedule(config, dilemmas)
        self.tournament_id = tournament_id or config.tournament_id()
        names = config.all_model_names()
        missing = [n for n in names if n not in clients]
        if missing:
            raise ScheduleError(f"no client for model(s): {', '.join(missing)}")
        self.infos = model_infos(names, clients, models_config)
        self._families = configured_families(self.infos)
        self.budget = Budget(budget_usd if budget_usd is not None else config.budget_usd)
        self.stats = CallStats()
        self.progress_interval_s = progress_interval_s
        limits = build_limited_clients(
            config, clients, self.infos, budget=self.budget, stats=self.stats, on_change=self._changed,
            halted=self.save_failure,
        )
        self.provider_limiters: dict[str, AdaptiveLimiter] = limits.provider_limiters
        self.model_limiters: dict[str, AdaptiveLimiter] = limits.model_limiters
        self.clients: dict[str, ModelClient] = limits.clients
        self.tournament: Tournament | None = None
        self._cancelled = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._queue: asyncio.Queue[TournamentEvent | None] | None = None  # None: the run is over
        self._start = 0.0
        self._done = 0
        self._incomplete = 0
        self._already = 0
        self._ran = 0
        self._rounds_in_flight = 0
        self._dirty = False

    # -- progress -----------------------------------------------------------------------------------
    def _changed(self) -> None:
        self._dirty = True

    def progress(self) -> Progress:
        elapsed = time.monotonic() - self._start if self._start else 0.0
        total = len(self.schedule)
        remaining = total - self._done - self._incomplete
        eta = None
        if self._ran and remaining > 0:
            eta = elapsed / self._ran * remaining
        elif remaining <= 0:
            eta = 0.0
        return Progress(
            total=total, done=self._done, incomplete=self._incomplete, already_done=self._already,
            rounds_in_flight=self._rounds_in_flight, calls_in_flight=self.stats.in_flight,
            input_tokens=self.stats.input_tokens, output_tokens=self.stats.output_tokens,
            cost_usd=self.budget.spent_usd, elapsed_s=elapsed, eta_s=eta,
            budget_usd=self.budget.limit_usd, budget_stopped=self.budget.stopped,
        )

    def _emit(self, event: TournamentEvent) -> None:
        if self._queue is not None:
            self._queue.put_nowait(event)

    # -- control ------------------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop: no new call starts, rounds in flight are cancelled and saved as they stand."""
        self._cancelled = True
        for t in list(self._tasks):
            t.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def resume_hint(self, config_path: str | None = None, budget: float | None = None) -> str:
        cfg = config_path or (str(self.config.source) if self.config.source else "CONFIG")
        extra = f" --budget {num.shown(budget, 'g')}" if budget is not None else ""
        return f"ebtui tournament {cfg} --resume {self.tournament_id}{extra}"

    async def run(self) -> AsyncIterator[TournamentEvent]:
        self._queue = asyncio.Queue()
        main = asyncio.create_task(self._run_all())
        main.add_done_callback(lambda _t: self._queue.put_nowait(None) if self._queue else None)
        try:
            while True:
                try:
                    ev = await asyncio.wait_for(self._queue.get(), self.progress_interval_s)
                except TimeoutError:
                    yield ProgressUpdated(self.progress())
                    continue
                if ev is None:
                    break
                yield ev
            main.result()  # re-raise a crash of the runner itself
        finally:
            if not main.done():  # the consumer stopped early: stop the rounds, let the runner save
                self.cancel()
                try:
                    await asyncio.wait_for(asyncio.shield(main), 30)
                except BaseException:  # noqa: BLE001 - already stopping; cut it short
                    main.cancel()

    async def run_to_end(self, on_event: Callable[[TournamentEvent], None] | None = None) -> Tournament:
        async for ev in self.run():
            if on_event is not None:
                on_event(ev)
        assert self.tournament is not None
        return self.tournament

    # -- internals -----------------------------------------------------------------------------------
    def _existing(self, rid: str) -> Round | None:
        from ebtui.core.store import StoreError

        try:
            if not self.store.round_path(rid).exists():
                return None
            return self.store.load_round(rid)
        except StoreError as exc:  # unreadable: run it again, overwriting the file
            log.warning("round %s: unreadable, running it again: %s", rid, exc)
            return None

    def _tournament_record(self) -> Tournament:
        from ebtui.core.store import StoreError

        prior: Tournament | None = None
        try:
            prior = next((t for t in self.store.list_tournaments() if t.id == self.tournament_id), None)
        except StoreError:
            prior = None
        cfg = self.config.model_dump(mode="json")
        cfg["source"] = str(self.config.source) if self.config.source else None
        t = Tournament(
            id=self.tournament_id,
            name=self.config.display_name(),
            models=self.config.all_model_names(),
            dilemmas=list(self.schedule.dilemma_ids),
            document=str(self.config.document_path() or ""),
            config=cfg,
            total_rounds=len(self.schedule),
        )
        if prior is not None:
            t.created = prior.created
        return t

    async def _run_all(self) -> None:
        lock = _TournamentLock(self.store.root / "tournaments" / f".{self.tournament_id}.lock")
        lock.acquire()  # raises TournamentBusyError when another process runs this tournament
        try:
            await self._run_locked()
        finally:
            lock.release()

    async def _run_locked(self) -> None:
        self._start = time.monotonic()
        self.tournament = self._tournament_record()
        self.tournament.status = TournamentStatus.RUNNING
        self.store.save_tournament(self.tournament)  # a full disk: StoreWriteError before any call

        work: list[tuple[Exchange, dict[str, Round | None]]] = []
        spent = 0.0
        for ex in self.schedule.exchanges:
            existing: dict[str, Round | None] = {}
            for sr in ex.rounds:
                r = self._existing(sr.round_id(self.tournament_id))
                existing[sr.schedule_key] = r
                if r is not None:
                    spent += round_cost(r)
                    if r.status == RoundStatus.COMPLETE:
                        self._done += 1
                        self._already += 1
            if any(r is None or r.status != RoundStatus.COMPLETE for r in existing.values()):
                work.append((ex, existing))
        self.budget.spent_usd = spent
        self._emit(TournamentStarted(self.tournament, self.progress()))

        sem = asyncio.Semaphore(self.config.concurrency)
        # the store's own writer thread (ebtui.core.store.BackgroundSaver): handed to the engine as the saver,
        # so a round's end does not wait for its write either; flushed below
        writer = self.store.background_saver() if self._write_behind and work else None
        errors_before = len(writer.errors) if writer is not None else 0
        self.saver = writer or self.store
        try:
            for ex, existing in work:
                task = asyncio.create_task(self._exchange(ex, existing, sem))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            if self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
        finally:
            if writer is not None:
                await asyncio.shield(asyncio.to_thread(writer.flush))
                self.saver = self.store
        failed = writer.errors[errors_before:] if writer is not None else []
        if failed:
            log.error("%d round save(s) failed; first: %s", len(failed), failed[0])

        rounds = [r for r in (self._existing(sr.round_id(self.tournament_id)) for sr in self.schedule.rounds) if r]
        complete = sum(1 for r in rounds if r.status == RoundStatus.COMPLETE)
        if self.budget.stopped:
            status = TournamentStatus.STOPPED_BUDGET
            self.tournament.note = (f"stopped at the budget of ${num.fixed(self.budget.limit_usd)} "
                                    f"(spent ${num.fixed(self.budget.spent_usd, 4)}); resume with a larger --budget")
        elif complete == len(self.schedule):
            status = TournamentStatus.COMPLETE
            self.tournament.note = ""
        else:
            status = TournamentStatus.INCOMPLETE
            self.tournament.note = (f"{len(self.schedule) - complete} of {len(self.schedule)} rounds not complete"
                                    + (" (cancelled)" if self._cancelled else ""))
        if self.save_failure() is not None:
            status = TournamentStatus.INCOMPLETE
            self.tournament.note = f"stopped: {self.save_failure()}"
        self.tournament.status = status
        self.tournament.finished_at = utcnow()
        try:
            self.store.save_tournament(self.tournament)
        except StoreError:  # the disk is still full: the rounds saved are the record; a re-run resumes
            if self.save_failure() is None:
                raise
        self._emit(TournamentFinished(self.tournament, self.progress(), summarize_rounds(rounds)))

    def _spec(self, sr: ScheduledRound) -> RoundSpec:
        from ebtui.core.round import RoundSpec

        doc = self.config.document_path()
        return RoundSpec(
            dilemma=self.dilemmas[sr.dilemma_id],
            team_a=sr.team_a,
            team_b=sr.team_b,
            judge=sr.judge,
            blind_judge=self.config.blind_judge,
            tournament_id=self.tournament_id,
            schedule_key=sr.schedule_key,
            round_id=sr.round_id(self.tournament_id),
            max_tokens=self.config.max_tokens,
            document=str(doc) if doc else "",
            families=self._families,
            judge_order=self._judge_order(sr),
        )

    def _judge_order(self, sr: ScheduledRound) -> str:
        """The judge's reading order for a scheduled round: the config's, or with "balanced" each judge's rounds
        alternating "ab", "ba", ... in schedule order (deterministic, so a resumed run asks the same)."""
        mode = getattr(self.config, "judge_order", "ab")
        if mode != "balanced":
            return str(mode)
        orders: dict[str, str] | None = getattr(self, "_orders", None)
        if orders is None:
            seen: dict[str, int] = {}
            orders = {}
            for r in self.schedule.rounds:
                n = seen.get(r.judge, 0)
                seen[r.judge] = n + 1
                orders[r.schedule_key] = "ab" if n % 2 == 0 else "ba"
            self._orders = orders
        return orders.get(sr.schedule_key, "ab")

    def _finished_round(self, sr: ScheduledRound, r: Round) -> None:
        self._ran += 1
        if r.status == RoundStatus.COMPLETE:
            self._done += 1
        else:
            self._incomplete += 1
        self._emit(RoundCompleted(r, sr, self.progress()))

    def _not_run(self, sr: ScheduledRound, reason: str) -> None:
        self._ran += 1
        self._incomplete += 1
        self._emit(RoundNotRun(sr, reason, self.progress()))

    def _stopping(self) -> bool:
        return self._cancelled or self.budget.stopped or self.save_failure() is not None

    def save_failure(self) -> str | None:
        """Why nothing more may start: the first save the store could not make (a full disk...). From then
        on no exchange, judge or model call starts; calls in flight end and their rounds stay as last saved."""
        failure = self.store.write_failure
        return str(failure) if failure is not None else None

    async def _exchange(self, ex: Exchange, existing: dict[str, Round | None], sem: asyncio.Semaphore) -> None:
        async with sem:
            if self._stopping():
                return
            self._rounds_in_flight += 1
            try:
                await self._play_exchange(ex, existing)
            finally:
                self._rounds_in_flight -= 1

    async def _play_exchange(self, ex: Exchange, existing: dict[str, Round | None]) -> None:
        """The primary round (phases 1-4 and its judge); a panel's other judges start as soon as
        phases 1-4 are in, alongside the primary judgment, so a panel adds one call to the critical path."""
        from ebtui.core.round import run_round

        primary, *panel = ex.rounds
        todo = [sr for sr in panel
                if (existing.get(sr.schedule_key) or _NOT_COMPLETE).status != RoundStatus.COMPLETE]
        judges: list[asyncio.Task[None]] = []

        def launch(source: Round) -> None:
            judges.extend(asyncio.create_task(self._panel_judge(source, sr)) for sr in todo)

        source = existing.get(primary.schedule_key)
        try:
            if source is None or source.status != RoundStatus.COMPLETE:
                result: Round | None = None
                spec = self._spec(primary)
                seen: dict[PhaseType, Phase] = {}
                try:
                    async for ev in run_round(spec, self.clients, self.saver, resume=source):
                        if isinstance(ev, RoundFinished):
                            result = ev.round
                        elif todo and not judges and isinstance(ev, PhaseFinished):
                            seen[ev.phase.phase_type] = ev.phase
                            if all(pt in seen for pt in _EXCHANGE_PHASES):
                                launch(self._exchange_snapshot(spec, ev.round_id, seen))
                    if result is None:
                        self._not_run(primary, "the round engine ended without a result")
                    else:
                        self._finished_round(primary, result)
                except asyncio.CancelledError:
                    raise
                except StoreError as exc:  # a failed save: no new work starts (see save_failure)
                    self._not_run(primary, f"not saved: {exc}")
                    result = None
                except Exception as exc:  # a bug in one round never stops the tournament
                    log.exception("round %s failed", primary.schedule_key)
                    self._not_run(primary, f"error: {exc}")
                    result = None
                source = result
            if todo and not judges:
                if source is not None and _exchange_ready(source):
                    launch(source)
                else:
                    for sr in todo:
                        self._not_run(sr, "phases 1-4 of its exchange did not complete")
            if judges:
                await asyncio.gather(*judges)
        finally:
            for t in judges:
                if not t.done():
                    t.cancel()

    def _exchange_snapshot(self, spec: RoundSpec, round_id: str, phases: dict[PhaseType, Phase]) -> Round:
        """The exchange so far (phases 1-4), as judge_exchange needs it, before the primary round ends."""
        from ebtui.core.round import new_round

        snapshot = new_round(spec)
        snapshot.id = snapshot.exchange_id = round_id
        snapshot.tournament_id = self.tournament_id
        snapshot.phases = [phases[pt].model_copy(deep=True) for pt in _EXCHANGE_PHASES]
        return snapshot

    async def _panel_judge(self, source: Round, sr: ScheduledRound) -> None:
        from ebtui.core.round import judge_exchange

        if self._stopping():
            return
        rid = sr.round_id(self.tournament_id)
        events = judge_exchange(
            source, sr.judge, self.clients[sr.judge], self.saver,
            blind_judge=self.config.blind_judge,
            tournament_id=self.tournament_id,
            schedule_key=sr.schedule_key,
            dilemma=self.dilemmas[sr.dilemma_id],
            # the deterministic id, so a re-run overwrites this judgment instead of duplicating it
            round_id=rid,
            families=self._families,
            judge_order=self._judge_order(sr),
        )
        result: Round | None = None
        try:
            async for ev in events:
                if isinstance(ev, RoundFinished):
                    result = ev.round
        except asyncio.CancelledError:
            raise
        except StoreError as exc:
            self._not_run(sr, f"not saved: {exc}")
            return
        except Exception as exc:
            log.exception("panel judgment %s failed", sr.schedule_key)
            self._not_run(sr, f"error: {exc}")
            return
        if result is None:
            self._not_run(sr, "the round engine ended without a result")
            return
        result.id = rid
        self._finished_round(sr, result)


class _NotComplete:
    status = RoundStatus.INCOMPLETE


_NOT_COMPLETE = _NotComplete()


_EXCHANGE_PHASES = tuple(pt for pt in PHASE_ORDER if pt != PhaseType.JUDGMENT)


def _exchange_ready(r: Round) -> bool:
    """Phases 1-4 complete: a panel judge can score the exchange."""
    for pt in PHASE_ORDER:
        if pt == PhaseType.JUDGMENT:
            continue
        p = r.phase(pt)
        if p is None or p.status != PhaseStatus.COMPLETE:
            return False
    return True
