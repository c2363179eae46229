"""A round as it happens: Team A, Team B and the judge streaming side by side.

The screen only routes the core's events to panes; the transcript of record lives in the core (and in the
store, which the engine writes after each phase, off the event loop through the store's BackgroundSaver).

The round worker never waits for the screen: it queues each event and goes back to the models, so a round
runs at the models' pace however slowly the terminal paints. A timer (PUMP_INTERVAL_S) drains the queue in
order — text into the phases' buffers, phase changes into the panes — and hands each phase its new text in
one piece, all panes in one batch (one layout at most, one frame), with the status lines every
STATUS_INTERVAL_S in the same batch. A pump costs O(new text) (see widgets/role_pane.py), so a key pressed
while text streams waits at most for one short pump and is painted in the next frame.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual.worker import Worker, WorkerState

from ebtui.core import events as ev
from ebtui.core.records import PhaseStatus, PhaseType, Round
from ebtui.core.round import RoundSpec
from ebtui.core.safe_text import strip_control
from ebtui.tui.keys import bindings
from ebtui.tui.services import app_services
from ebtui.tui.widgets.role_pane import PhaseView, RolePane

PANE_OF: dict[PhaseType, str] = {
    PhaseType.PRESENTATION: "pane-a",
    PhaseType.REBUTTAL: "pane-a",
    PhaseType.CONSISTENCY_TEST: "pane-a",
    PhaseType.RESPONSE: "pane-b",
    PhaseType.JUDGMENT: "pane-judge",
}
#: how often queued events and text reach the panes (seconds): each pump renders only the new text (a
#: paragraph at most per phase) and costs one frame; 8 a second reads as continuous streaming and leaves the
#: loop idle most of the time, so a key rarely waits behind a frame
PUMP_INTERVAL_S = 0.125
#: how often the pump also recomputes the panes' status lines (tokens, elapsed, cost)
STATUS_INTERVAL_S = 0.5


class LiveRoundScreen(Screen[None]):
    CSS_PATH = "live.tcss"
    BINDINGS = bindings("live")

    def __init__(self, request: RoundSpec, events: Callable[[], AsyncIterator[ev.RoundEvent]]) -> None:
        super().__init__()
        self.request = request
        self._events = events
        self.round: Round | None = None
        self.round_id: str | None = None
        self.state = "starting"  # starting, running, cancelling, finished, cancelled, failed
        self._inbox: deque[ev.RoundEvent] = deque()
        self._views: dict[PhaseType, PhaseView] = {}
        self._panes: list[RolePane] = []
        self._status_at = float("-inf")  # when the pump last refreshed the status lines (monotonic)
        self._drain_lock = asyncio.Lock()

    def compose(self) -> ComposeResult:
        r = self.request
        yield Header()
        yield Static(Text.assemble((strip_control(r.dilemma.title or r.dilemma.id), "bold"),
                                   ("  blind judge" if r.blind_judge else "", "italic")), id="round-title")
        with Horizontal(id="panes"):
            yield RolePane("Team A", r.team_a, (PhaseType.PRESENTATION, PhaseType.REBUTTAL,
                                               PhaseType.CONSISTENCY_TEST), id="pane-a")
            yield RolePane("Team B", r.team_b, (PhaseType.RESPONSE,), id="pane-b")
            yield RolePane("Judge", r.judge, (PhaseType.JUDGMENT,), id="pane-judge")
        yield Static("", id="round-state", markup=False)
        yield Footer()

    @property
    def clock(self) -> Callable[[], float]:
        return app_services(self).clock

    def on_mount(self) -> None:
        self.sub_title = "Live round"
        self._panes = list(self.query(RolePane))
        self._views = {v.phase_type: v for pane in self._panes for v in pane.views()}
        self.set_interval(PUMP_INTERVAL_S, self._pump)
        self._set_state("running", "Running — x cancels.")
        self.run_round()

    def view(self, phase_type: PhaseType) -> PhaseView:
        return self._views[phase_type]

    def _refresh_status(self) -> None:
        for pane in self._panes:
            pane.refresh_status(self.clock)

    def _set_state(self, state: str, message: str) -> None:
        self.state = state
        self.query_one("#round-state", Static).update(message)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_round":
            return self.state in ("starting", "running", "cancelling")
        if action == "score_card":
            return self.round is not None and self.state != "running"
        if action == "back":
            return self.state != "running"
        return True

    @work(exclusive=True, group="round", exit_on_error=False)
    async def run_round(self) -> None:
        async for event in self._events():
            self._inbox.append(event)  # no screen work here: see the module docstring

    async def _pump(self) -> None:
        """The timer's turn: show what the round said since the last one (one batch, one frame)."""
        if not self._inbox and self.state not in ("running", "cancelling"):
            return
        with self.app.batch_update():
            await self._drain()
            for pane in self._panes:
                self.call_after_refresh(pane.follow)  # once the new text is laid out
            now = time.monotonic()
            if now - self._status_at >= STATUS_INTERVAL_S - 0.01:
                self._status_at = now
                self._refresh_status()

    async def _drain(self) -> None:
        """Show the queued events in order, then hand each phase its new text (one batch)."""
        async with self._drain_lock:
            while self._inbox:
                event = self._inbox.popleft()
                if isinstance(event, ev.TextDelta):
                    self._views[event.phase_type].add(event.text)
                else:
                    self._route(event)
            for view in self._views.values():
                view.flush()

    def _route(self, event: ev.RoundEvent) -> None:
        now = self.clock()
        if isinstance(event, ev.PhaseStarted):
            self.round_id = event.round_id
            self.view(event.phase_type).start(now, event.attempt)
        elif isinstance(event, ev.PhaseRetrying):
            self.view(event.phase_type).retry(event.attempt, event.error)
        elif isinstance(event, ev.PhaseFinished):
            self.view(event.phase.phase_type).finish(event.phase, now)
        elif isinstance(event, ev.PhaseFailed):
            self.view(event.phase.phase_type).fail(event.phase, now)
        elif isinstance(event, ev.JudgmentParsed):
            self.view(PhaseType.JUDGMENT).show_judgment(event.judgment)
        elif isinstance(event, ev.RoundFinished):
            self._finished(event.round)

    def _finished(self, round_: Round) -> None:
        self.round = round_
        self.round_id = round_.id
        for view in self._views.values():
            if view.status in (PhaseStatus.PENDING, PhaseStatus.RUNNING):
                phase = round_.phase(view.phase_type)
                if phase is not None and phase.status != view.status:
                    view.show_final(phase)
        judgment = round_.judgment
        judge_view = self.view(PhaseType.JUDGMENT)
        if judgment is not None and judge_view.judgment is None:
            judge_view.show_judgment(judgment)
        review = " — the judgment needs review" if judgment is not None and judgment.effective_needs_review() else ""
        err = f": {strip_control(round_.error)}" if round_.error else ""
        self._set_state("finished", f"Round {round_.status.value}{err}{review}. s: score card · escape: back.")
        self._refresh_status()
        self.notify(f"Round {round_.status.value}{review}. Press s for the score card.",
                    severity="warning" if review or round_.status.value != "complete" else "information")

    @on(Worker.StateChanged)
    async def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "round":
            return
        if event.state in (WorkerState.CANCELLED, WorkerState.ERROR, WorkerState.SUCCESS):
            await self._drain()  # what the round said before it stopped comes first
        if event.state == WorkerState.CANCELLED:
            now = self.clock()
            for view in self._views.values():
                if view.status in (PhaseStatus.PENDING, PhaseStatus.RUNNING):
                    view.fail(None, now, PhaseStatus.CANCELLED)
            self._set_state("cancelled", "Cancelled — what finished is saved; the round is incomplete. "
                            "escape: back.")
            self._refresh_status()
            self._load_saved()
        elif event.state == WorkerState.ERROR:
            error = strip_control(str(event.worker.error))
            now = self.clock()
            for view in self._views.values():
                if view.status == PhaseStatus.RUNNING:
                    view.fail(None, now, PhaseStatus.FAILED, error)
            self._set_state("failed", f"The round stopped: {error}")
            self._refresh_status()
            self._load_saved()
            self.notify(error, title="Round failed", severity="error", timeout=10)
        elif event.state == WorkerState.SUCCESS and self.state == "running":
            self._set_state("finished", "The round ended without a result.")

    @work(thread=True, group="round-load", exit_on_error=False)
    def _load_saved(self) -> None:
        store = app_services(self).store
        if self.round_id is None or store is None:
            return
        try:
            saved = store.load_round(self.round_id)
        except Exception:  # the engine may not have written anything yet: nothing to show then
            return
        self.app.call_from_thread(self._saved_loaded, saved)

    def _saved_loaded(self, saved: Round) -> None:
        self.round = saved
        self.refresh_bindings()

    def action_cancel_round(self) -> None:
        """Cancel the round's worker, whatever it is doing (a worker not yet started is cancelled too)."""
        cancelled = False
        for worker in self.workers:
            if worker.group == "round" and not worker.is_finished:
                worker.cancel()
                cancelled = True
        if cancelled and self.state == "running":
            self._set_state("cancelling", "Cancelling…")

    def action_toggle_raw(self) -> None:
        """The judge's pane: its raw reply instead of the parsed scores (or back)."""
        view = self.view(PhaseType.JUDGMENT)
        view.show_raw(not view.raw)

    def action_score_card(self) -> None:
        if self.round is None:
            return
        from ebtui.tui.screens.score import ScoreCardScreen

        def corrected(round_: Round | None) -> None:  # overrides made on the card: s shows them next time
            if round_ is not None:
                self.round = round_

        self.app.push_screen(ScoreCardScreen(self.round), corrected)

    def action_back(self) -> None:
        self.dismiss(None)
