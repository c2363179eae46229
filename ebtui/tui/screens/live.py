"""A round as it happens: Team A, Team B and the judge streaming side by side.

The screen only routes the core's events to panes; the transcript of record lives in the core (and in the
store, which the engine writes after each phase, off the event loop through the store's BackgroundSaver).

The round worker never waits for the screen: it queues each event and goes back to the models, so a round
runs at the models' pace however slowly the terminal paints. A timer (PUMP_INTERVAL_S) drains the queue in
order — text into the panes' buffers, phase changes into the panes — and appends each pane's new text to its
Markdown in one piece, all panes in one batch (one layout, one frame), with the status lines every
STATUS_INTERVAL_S in the same batch. Keys go first: a pump turn is skipped while input is queued or just
after a key (INPUT_QUIET_S), so a key's frame does not wait behind text layout.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual.worker import Worker, WorkerState

from ebtui.core.events import (
    JudgmentParsed,
    PhaseFailed,
    PhaseFinished,
    PhaseRetrying,
    PhaseStarted,
    RoundEvent,
    RoundFinished,
    TextDelta,
)
from ebtui.core.records import PhaseStatus, PhaseType, Round
from ebtui.core.safe_text import strip_control
from ebtui.tui.services import RoundRequest
from ebtui.tui.widgets.role_pane import PhaseView, RolePane

PANE_OF: dict[PhaseType, str] = {
    PhaseType.PRESENTATION: "pane-a",
    PhaseType.REBUTTAL: "pane-a",
    PhaseType.CONSISTENCY_TEST: "pane-a",
    PhaseType.RESPONSE: "pane-b",
    PhaseType.JUDGMENT: "pane-judge",
}
#: how often queued events and text reach the panes (seconds): every pump costs a layout and a frame, so
#: few of them (4 a second) leave the event loop free for keys
PUMP_INTERVAL_S = 0.25
#: how often the pump also recomputes the panes' status lines (tokens, elapsed, cost)
STATUS_INTERVAL_S = 0.5
#: pump turns skipped in a row at most, so a stream of input cannot starve the text
MAX_SKIPS = 2
#: after a key, the text waits this long (seconds) so the key's own frame is not held up by text layout
INPUT_QUIET_S = 0.15


def _input_pending(*pumps: object) -> bool:
    """Whether a key or mouse event waits in one of these message pumps' queues (the app's, the focused
    widget's): the pump then skips its turn, so input is handled (and painted) before more text."""
    for pump in pumps:
        queue = getattr(getattr(pump, "_message_queue", None), "_queue", None)
        if queue and any(isinstance(m, events.InputEvent) for m in queue):
            return True
    return False


class LiveRoundScreen(Screen[None]):
    CSS_PATH = "live.tcss"
    BINDINGS = [
        Binding("x", "cancel_round", "Cancel round", id="live.cancel"),
        Binding("s", "score_card", "Score card", id="live.score"),
        Binding("escape", "back", "Back", id="live.back"),
    ]

    def __init__(self, request: RoundRequest, events: Callable[[], AsyncIterator[RoundEvent]]) -> None:
        super().__init__()
        self.request = request
        self._events = events
        self.round: Round | None = None
        self.round_id: str | None = None
        self.state = "starting"  # starting, running, cancelling, finished, cancelled, failed
        self._inbox: deque[RoundEvent] = deque()
        self._drain_lock = asyncio.Lock()
        self._views: dict[PhaseType, PhaseView] = {}
        self._panes: list[RolePane] = []
        self._skipped = 0  # pump turns skipped in a row for pending input
        self._last_input = float("-inf")  # when the last key reached this screen (monotonic)
        self._status_at = float("-inf")  # when the pump last refreshed the status lines (monotonic)

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
        return self.app.services.clock  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        self.sub_title = "Live round"
        # looked up once: a query walks every Markdown block of the panes
        self._panes = list(self.query(RolePane))
        self._views = {v.phase_type: v for pane in self._panes for v in pane.views()}
        self.set_interval(PUMP_INTERVAL_S, self._pump)
        self._set_state("running", "Running — x cancels.")
        self.run_round()

    def on_key(self, _event: events.Key) -> None:
        # keys bubble here from the focused pane (not stopped: bindings still run)
        self._last_input = time.monotonic()

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
            return self.state == "running"
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
        """The timer's turn: drain, unless input is waiting (it goes first; the text waits one turn)."""
        recent = time.monotonic() - self._last_input < INPUT_QUIET_S
        if self._skipped < MAX_SKIPS and (recent or _input_pending(self.app, self.app.focused)):
            self._skipped += 1
            return
        self._skipped = 0
        with self.app.batch_update():
            await self._drain()
            for pane in self._panes:
                pane.follow()
            now = time.monotonic()
            if now - self._status_at >= STATUS_INTERVAL_S - 0.01:
                self._status_at = now
                self._refresh_status()

    async def _drain(self) -> None:
        """Show the queued events in order, then append each pane's new text to its Markdown (one batch)."""
        async with self._drain_lock:
            while self._inbox:
                event = self._inbox.popleft()
                if isinstance(event, TextDelta):
                    self._views[event.phase_type].add(event.text)
                else:
                    await self._route(event)
            with self.app.batch_update():
                for view in self._views.values():
                    await view.flush()

    async def _route(self, event: RoundEvent) -> None:
        now = self.clock()
        if isinstance(event, PhaseStarted):
            self.round_id = event.round_id
            self.view(event.phase_type).start(now, event.attempt)
        elif isinstance(event, PhaseRetrying):
            await self.view(event.phase_type).retry(event.attempt, event.error)
        elif isinstance(event, PhaseFinished):
            await self.view(event.phase.phase_type).finish(event.phase, now)
        elif isinstance(event, PhaseFailed):
            await self.view(event.phase.phase_type).fail(event.phase, now)
        elif isinstance(event, JudgmentParsed):
            pass  # shown on the score card once the round is saved
        elif isinstance(event, RoundFinished):
            await self._finished(event.round)

    async def _finished(self, round_: Round) -> None:
        self.round = round_
        self.round_id = round_.id
        for view in self._views.values():
            if view.status in (PhaseStatus.PENDING, PhaseStatus.RUNNING):
                phase = round_.phase(view.phase_type)
                if phase is not None and phase.status != view.status:
                    await view.show_final(phase)
        judgment = round_.judgment
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
                    await view.fail(None, now, PhaseStatus.CANCELLED)
            self._set_state("cancelled", "Cancelled — what finished is saved; the round is incomplete. "
                            "escape: back.")
            self._refresh_status()
            self._load_saved()
        elif event.state == WorkerState.ERROR:
            error = strip_control(str(event.worker.error))
            now = self.clock()
            for view in self._views.values():
                if view.status == PhaseStatus.RUNNING:
                    await view.fail(None, now, PhaseStatus.FAILED, error)
            self._set_state("failed", f"The round stopped: {error}")
            self._refresh_status()
            self._load_saved()
            self.notify(error, title="Round failed", severity="error", timeout=10)
        elif event.state == WorkerState.SUCCESS and self.state == "running":
            self._set_state("finished", "The round ended without a result.")

    @work(thread=True, group="round-load", exit_on_error=False)
    def _load_saved(self) -> None:
        store = self.app.services.store  # type: ignore[attr-defined]
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
        for worker in self.workers:
            if worker.group == "round" and worker.is_running:
                worker.cancel()
                self._set_state("cancelling", "Cancelling…")

    def action_score_card(self) -> None:
        if self.round is None:
            return
        from ebtui.tui.screens.score import ScoreCardScreen

        self.app.push_screen(ScoreCardScreen(self.round))

    def action_back(self) -> None:
        self.dismiss(None)
