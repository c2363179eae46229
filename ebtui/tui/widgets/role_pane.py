"""One role's pane in the live round: its phases, each streaming into its own Markdown widget."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from ebtui.core.records import Phase, PhaseStatus, PhaseType
from ebtui.core.safe_text import strip_control

#: how often queued text is handed to the Markdown widget while a phase streams
FLUSH_INTERVAL_S = 0.05

PHASE_LABELS: dict[PhaseType, str] = {
    PhaseType.PRESENTATION: "Presentation",
    PhaseType.RESPONSE: "Response",
    PhaseType.REBUTTAL: "Rebuttal",
    PhaseType.CONSISTENCY_TEST: "Consistency test",
    PhaseType.JUDGMENT: "Judgment",
}


class PhaseView(Vertical):
    """A phase's title, an in-place note (retry / failure) and the streamed text.

    Text is appended through a MarkdownStream (it batches appends the widget cannot keep up with); when
    the phase finishes the stream stops and the widget is set once to the core's authoritative text.
    """

    DEFAULT_CSS = """
    PhaseView { height: auto; margin-bottom: 1; }
    PhaseView > .phase-title { color: $text-muted; text-style: bold; }
    PhaseView.-pending > .phase-title { color: $text-disabled; }
    PhaseView.-running > .phase-title { color: $accent; }
    PhaseView.-complete > .phase-title { color: $success; }
    PhaseView.-failed > .phase-title { color: $error; }
    PhaseView > .phase-note { color: $warning; display: none; }
    PhaseView > .phase-note.-shown { display: block; }
    PhaseView.-failed > .phase-note { color: $error; }
    PhaseView > Markdown { margin: 0; padding: 0; }
    PhaseView.-pending > Markdown { display: none; }
    """

    def __init__(self, phase_type: PhaseType) -> None:
        super().__init__(classes="-pending", id=f"phase-{phase_type.value}")
        self.phase_type = phase_type
        self.status = PhaseStatus.PENDING
        self.tokens = 0
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self.cost: float | None = None
        self.attempt = 1
        self._stream: MarkdownStream | None = None
        self._pending: list[str] = []
        self._last_flush = 0.0

    def compose(self) -> ComposeResult:
        yield Static(PHASE_LABELS[self.phase_type], classes="phase-title", markup=False)
        yield Static("", classes="phase-note", markup=False)
        yield Markdown("", open_links=False)

    @property
    def markdown(self) -> Markdown:
        return self.query_one(Markdown)

    @property
    def text(self) -> str:
        return self.markdown.source

    def _set_state(self, status: PhaseStatus) -> None:
        self.status = status
        self.set_classes(f"-{status.value}")
        title = PHASE_LABELS[self.phase_type]
        if status == PhaseStatus.RUNNING:
            title = f"▶ {title}"
        elif status == PhaseStatus.COMPLETE:
            title = f"✓ {title}"
        elif status in (PhaseStatus.FAILED, PhaseStatus.SKIPPED, PhaseStatus.CANCELLED):
            title = f"✗ {title} ({status.value})"
        self.query_one(".phase-title", Static).update(title)

    def note(self, text: str) -> None:
        note = self.query_one(".phase-note", Static)
        note.update(Text(strip_control(text)))
        note.set_class(bool(text), "-shown")

    def start(self, now: float, attempt: int = 1) -> None:
        if self.status == PhaseStatus.RUNNING:
            return
        self.started_at = now
        self.attempt = attempt
        self._set_state(PhaseStatus.RUNNING)

    async def write(self, text: str) -> None:
        """Queue streamed text; it reaches the widget in batches (about 20 a second), not per token."""
        if self.status != PhaseStatus.RUNNING:
            return
        self.tokens += 1
        self._pending.append(text)
        if time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S:
            await self.flush()

    async def flush(self) -> None:
        if not self._pending or self.status != PhaseStatus.RUNNING:
            return
        # stripped as a whole, so an escape sequence split across two deltas is still caught
        text = strip_control("".join(self._pending))
        self._pending.clear()
        self._last_flush = time.monotonic()
        if self._stream is None:  # created on the first text, so a stream that never ran is never stopped
            self._stream = Markdown.get_stream(self.markdown)
        await self._stream.write(text)

    async def _stop_stream(self) -> None:
        self._pending.clear()  # whatever happens next replaces the text: the final answer, or nothing
        if self._stream is None:
            return
        stream, self._stream = self._stream, None
        try:
            await stream.stop()
        except asyncio.CancelledError:
            # MarkdownStream.stop() re-raises the cancel of its own task when that task had not started
            # yet; only a cancel aimed at us (the round worker) may propagate.
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise

    async def retry(self, attempt: int, error: str) -> None:
        """The call restarts: what streamed so far is void and goes."""
        await self._stop_stream()
        await self.markdown.update("")
        self.tokens = 0
        self.attempt = attempt
        self.note(f"retrying (attempt {attempt}): {error}")

    async def finish(self, phase: Phase, now: float) -> None:
        await self._stop_stream()
        self.finished_at = now
        self.tokens = phase.usage.output_tokens or self.tokens
        self.cost = phase.usage.cost_usd
        await self.markdown.update(strip_control(phase.response))
        self.note("")
        self._set_state(PhaseStatus.COMPLETE)

    async def fail(self, phase: Phase | None, now: float, status: PhaseStatus = PhaseStatus.FAILED,
                   error: str | None = None) -> None:
        """Failed, skipped or cancelled: streamed text is not an answer, so it is cleared."""
        await self._stop_stream()
        if phase is not None:
            status, error = phase.status, phase.error
        self.finished_at = now if self.started_at is not None else None
        await self.markdown.update("")
        self.note(f"{status.value}: {error}" if error else status.value)
        self._set_state(status)

    def show_final(self, phase: Phase) -> None:
        """A finished phase from a saved round (no streaming)."""
        if phase.status == PhaseStatus.COMPLETE:
            self.markdown.update(strip_control(phase.response))
            self.tokens = phase.usage.output_tokens
            self.cost = phase.usage.cost_usd
        else:
            self.note(f"{phase.status.value}: {phase.error}" if phase.error else phase.status.value)
        self._set_state(phase.status)


class RolePane(Vertical):
    """Team A, Team B or the judge: a title, a throttled status line and the role's phases."""

    DEFAULT_CSS = """
    RolePane { border: round $panel-lighten-2; height: 1fr; width: 1fr; }
    RolePane.-active { border: round $accent; }
    RolePane > .pane-status { color: $text-muted; height: auto; max-height: 2; padding: 0 1; }
    RolePane > VerticalScroll { padding: 0 1; }
    """

    def __init__(self, role: str, model: str, phases: tuple[PhaseType, ...], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.role = role
        self.model = model
        self.phase_types = phases
        self.border_title = f"{role} · {strip_control(model)}"
        self._follow_from = 0.0  # where we last scrolled to; above it, the reader has scrolled up

    def compose(self) -> ComposeResult:
        yield Static("waiting", classes="pane-status", markup=False)
        with VerticalScroll():
            for pt in self.phase_types:
                yield PhaseView(pt)

    def view(self, phase_type: PhaseType) -> PhaseView:
        return self.query_one(f"#phase-{phase_type.value}", PhaseView)

    def views(self) -> list[PhaseView]:
        return list(self.query(PhaseView))

    def refresh_status(self, clock: Callable[[], float]) -> None:
        """Update the one-line status; called on a timer (~10 Hz), never per token."""
        views = self.views()
        running = [v for v in views if v.status == PhaseStatus.RUNNING]
        self.set_class(bool(running), "-active")
        current = running[0] if running else next(
            (v for v in reversed(views) if v.status != PhaseStatus.PENDING), None)
        if current is None:
            text = "waiting"
        else:
            label = PHASE_LABELS[current.phase_type]
            end = current.finished_at if current.finished_at is not None else clock()
            elapsed = end - current.started_at if current.started_at is not None else 0.0
            state = current.status.value if current.status != PhaseStatus.RUNNING else "streaming"
            if current.status == PhaseStatus.RUNNING and current.attempt > 1:
                state = f"streaming, attempt {current.attempt}"
            costs = [v.cost for v in views if v.cost is not None]
            cost = f" · ${sum(costs):.4f}" if costs else ""
            tokens = sum(v.tokens for v in views)
            text = f"{label}: {state} · {tokens} tok · {elapsed:.1f}s{cost}"
        if running:
            # follow the text as it streams, unless the reader has scrolled up to read
            body = self.query_one(VerticalScroll)
            if body.scroll_y >= self._follow_from - 1:
                body.scroll_end(animate=False, immediate=False)
                self._follow_from = body.max_scroll_y
        status = self.query_one(".pane-status", Static)
        if str(status.render()) != text:
            status.update(text)
