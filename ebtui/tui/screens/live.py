"""A round as it happens: Team A, Team B and the judge streaming side by side.

The screen only routes the core's events to panes; the transcript of record lives in the core and the
store. The round worker queues each event and never waits for the screen; a timer drains the queue and
hands one pane its new text per tick, in turn, so a frame repaints one pane, not the whole screen (why:
docs/BENCHMARKS.md, "Why the live screen is fast").
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header, Static
from textual.worker import Worker, WorkerState

from ebtui.core import events as ev
from ebtui.core.records import PHASE_SPEAKER, PhaseStatus, PhaseType, Round
from ebtui.core.review import needs_review
from ebtui.core.safe_text import strip_control
from ebtui.core.views.phases import seat_phases
from ebtui.tui.keys import bindings
from ebtui.tui.services import app_context
from ebtui.tui.widgets.footer import Footer
from ebtui.tui.widgets.role_pane import PhaseView, RolePane

if TYPE_CHECKING:
    from ebtui.core.usecases.play import RoundSpec

PANE_OF: dict[PhaseType, str] = {pt: f"pane-{seat}" for pt, seat in PHASE_SPEAKER.items()}
#: how often each pane receives its new text (seconds): a turn renders only the new text (a paragraph at most
#: per phase) and costs one frame of one pane; 8 a second reads as continuous streaming and leaves the loop
#: idle most of the time, so a key rarely waits behind a frame. The timer ticks len(panes) times as often,
#: one pane a tick
PUMP_INTERVAL_S = 0.125
#: how often the pump also recomputes the panes' status lines (tokens, elapsed, cost)
STATUS_INTERVAL_S = 0.5


class LiveRoundScreen(Screen[None]):
    CSS_PATH = "live.tcss"
    BINDINGS = bindings("live")
    #: Textual repaints the whole screen when focus moves (its `focused` reactive repaints); here what focus
    #: changes repaints itself (the panes' titles, their focus styles, the footer when its keys change), and a
    #: whole-screen frame while text streams is what a key pressed meanwhile would wait for
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

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
        self._status_at: dict[int, float] = {}  # pane index -> when its status line was refreshed (monotonic)
        self._turn = 0  # the pane whose turn it is
        self._drain_lock = asyncio.Lock()

    def compose(self) -> ComposeResult:
        r = self.request
        yield Header()
        yield Static(Text.assemble((strip_control(r.dilemma.title or r.dilemma.id), "bold"),
                                   ("  blind judge" if r.blind_judge else "", "italic")), id="round-title")
        with Horizontal(id="panes"):
            yield RolePane("Team A", r.team_a, seat_phases("a"), id="pane-a")
            yield RolePane("Team B", r.team_b, seat_phases("b"), id="pane-b")
            yield RolePane("Judge", r.judge, seat_phases("judge"), id="pane-judge")
        yield Static("", id="round-state", markup=False)
        yield Footer()

    @property
    def clock(self) -> Callable[[], float]:
        return app_context(self).clock

    def on_mount(self) -> None:
        self.sub_title = "Live round"
        self._panes = list(self.query(RolePane))
        self._views = {v.phase_type: v for pane in self._panes for v in pane.views()}
        self.set_interval(PUMP_INTERVAL_S / max(len(self._panes), 1), self._pump)
        self._set_state("running", "Running — x cancels.")
        self.run_round()

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        """Move focus, and show it in the panes' titles at once: Textual tells the widgets by messages handled
        after the frame that follows the key, and the frame after that comes up to two frame periods later.
        The titles are marked before Textual posts those messages, so that their repaint reaches the screen
        ahead of the bodies' and lands in the same frame (Textual focuses `widget` unless it is not
        focusable, when focus stays where it is)."""
        focused = widget if widget is None or widget.focusable else self.focused
        for pane in self._panes:
            pane.show_focused(pane.body is focused)
        super().set_focus(widget, scroll_visible, from_app_focus)

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
        """The timer's turn: route what the round said since the last tick, then show one pane its new text
        (and, every STATUS_INTERVAL_S, its status line): one frame repaints that pane alone."""
        if not self._inbox and self.state not in ("running", "cancelling"):
            return
        turn = self._turn % len(self._panes)
        pane = self._panes[turn]
        self._turn += 1
        with self.app.batch_update():
            await self._drain(flush=pane.views())
            self.call_after_refresh(pane.follow)  # once the new text is laid out
            now = time.monotonic()
            if now - self._status_at.get(turn, float("-inf")) >= STATUS_INTERVAL_S - 0.01:
                self._status_at[turn] = now
                pane.refresh_status(self.clock)

    async def _drain(self, flush: list[PhaseView] | None = None) -> None:
        """Show the queued events in order, then hand the phases in `flush` (all when None) their new text."""
        async with self._drain_lock:
            while self._inbox:
                event = self._inbox.popleft()
                if isinstance(event, ev.TextDelta):
                    self._views[event.phase_type].add(event.text)
                else:
                    self._route(event)
            for view in self._views.values() if flush is None else flush:
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
        review = " — the judgment needs review" if needs_review(judgment) else ""
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
        from ebtui.core.usecases.rounds import load_round

        if self.round_id is None:
            return
        try:
            saved = load_round(app_context(self), self.round_id)
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
