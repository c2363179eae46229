"""One role's pane in the live round: its phases, each streaming into Markdown.

Cost model (see benchmarks/RESULTS.md, figure 4): the round's events are only *queued* here; text reaches
the widgets in batches on the live screen's pump (4 a second), never per token, and the three panes' batches
are appended in one `batch_update`, so a pump costs one layout and one frame. Textual's Markdown makes a
widget per block, and every append re-lays out the widget holding them, so a long phase streams into a
chain of Markdown *segments*: once the live segment holds SEGMENT_BLOCKS blocks, the next text starts a new
one at a paragraph boundary, and the sealed segments are rendered once and never touched again.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown, Static

from ebtui.core.records import Phase, PhaseStatus, PhaseType
from ebtui.core.safe_text import strip_control

#: blocks the live Markdown segment may hold before new text starts another segment: few, because every
#: block on screen is a widget to style, lay out and paint at every update (30 here cost 60% more CPU)
SEGMENT_BLOCKS = 3
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)

PHASE_LABELS: dict[PhaseType, str] = {
    PhaseType.PRESENTATION: "Presentation",
    PhaseType.RESPONSE: "Response",
    PhaseType.REBUTTAL: "Rebuttal",
    PhaseType.CONSISTENCY_TEST: "Consistency test",
    PhaseType.JUDGMENT: "Judgment",
}


def _cut_point(before: str, text: str) -> int | None:
    """Where `text` (following `before` in one Markdown document) may be split into two documents: after
    the last blank line outside a code fence, before a line that is not indented (so no code block or list
    item continues across the cut; a loose list may restart there). None if there is no such place."""
    pos = len(text)
    while True:
        pos = text.rfind("\n\n", 0, pos)
        if pos < 0:
            return None
        cut = pos + 2
        following = text[cut:cut + 1]
        if following and following not in " \t\n" and len(_FENCE.findall(before + text[:cut])) % 2 == 0:
            return cut


class SealedMarkdown(Widget):
    """Markdown text that no longer changes, as one widget: rendered once per width (Rich's Markdown
    renderer, links inert) and then only copied to the screen — a handful of Textual Markdown blocks
    would each be a widget to style, measure and paint on every frame."""

    DEFAULT_CSS = """
    SealedMarkdown { height: auto; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.source = text
        self._markdown = RichMarkdown(text, hyperlinks=False)
        self._lines: list[Strip] = []
        self._width = -1

    def _render_for(self, width: int) -> list[Strip]:
        if width != self._width:
            console = self.app.console
            options = console.options.update_width(max(width, 1))
            lines = console.render_lines(self._markdown, options, pad=False)
            self._lines = [Strip(line).simplify() for line in lines]
            self._width = width
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._render_for(width))

    def render_line(self, y: int) -> Strip:
        lines = self._render_for(self.content_size.width)
        return lines[y] if y < len(lines) else Strip.blank(self.content_size.width)


class PhaseView(Vertical):
    """A phase's title, an in-place note (retry / failure) and its text in one or more Markdown segments.

    `add(text)` only queues; `flush()` (the screen's pump) appends the queue to the live segment's Markdown
    in one piece — the pump does what a `MarkdownStream` would (gather fragments while the widget is busy),
    and appending directly lets the screen put all three panes' appends in one batch, i.e. one frame. When
    the phase finishes, the core's authoritative text replaces what streamed only when the two differ.
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
        self._pending: list[str] = []
        self._sealed: list[str] = []  # the text of the sealed segments, in order
        self._live_text = ""  # the text handed to the live (last) segment

    def compose(self) -> ComposeResult:
        yield Static(PHASE_LABELS[self.phase_type], classes="phase-title", markup=False)
        yield Static("", classes="phase-note", markup=False)
        yield Markdown("", open_links=False)

    @property
    def markdown(self) -> Markdown:
        """The live (last) Markdown segment."""
        return self.query(Markdown).last()

    @property
    def segments(self) -> list[Widget]:
        """The sealed segments, then the live one."""
        return [*self.query(SealedMarkdown), self.markdown]

    @property
    def text(self) -> str:
        """The text shown (every segment's), without what is still queued."""
        return "".join(self._sealed) + self._live_text

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

    def add(self, text: str) -> None:
        """Queue streamed text (no widget work: the screen's timer calls `flush`)."""
        if self.status != PhaseStatus.RUNNING:
            return
        self.tokens += 1
        self._pending.append(text)

    async def flush(self) -> None:
        """Hand the queued text to the live segment (a new segment first when the live one is full)."""
        if not self._pending or self.status != PhaseStatus.RUNNING:
            return
        # stripped as a whole batch, so an escape sequence split across two deltas is still caught
        text = strip_control("".join(self._pending))
        self._pending.clear()
        if not text:
            return
        live = self.markdown
        if len(live.children) >= SEGMENT_BLOCKS:
            cut = _cut_point(self._live_text, text)
            if cut is not None:
                await self._write(text[:cut])
                await self._seal()
                text = text[cut:]
        await self._write(text)

    async def _seal(self) -> None:
        """Turn the live segment's text into one widget rendered once, and empty the live segment."""
        live, sealed = self.markdown, self._live_text
        self._sealed.append(sealed)
        self._live_text = ""
        with self.app.batch_update():
            await self.mount(SealedMarkdown(sealed), before=live)
            await live.update("")

    async def _write(self, text: str) -> None:
        if not text:
            return
        self._live_text += text
        await self.markdown.append(text)

    async def _show(self, text: str) -> None:
        """Replace whatever is shown with `text` (one segment)."""
        self._pending.clear()
        sealed = list(self.query(SealedMarkdown))
        if sealed:
            await self.remove_children(sealed)
        self._sealed, self._live_text = [], text
        await self.markdown.update(text)

    async def retry(self, attempt: int, error: str) -> None:
        """The call restarts: what streamed so far is void and goes."""
        await self._show("")
        self.tokens = 0
        self.attempt = attempt
        self.note(f"retrying (attempt {attempt}): {error}")

    async def finish(self, phase: Phase, now: float) -> None:
        self.finished_at = now
        self.tokens = phase.usage.output_tokens or self.tokens
        self.cost = phase.usage.cost_usd
        final = strip_control(phase.response)
        await self.flush()
        if self.text != final:  # the streamed text is not the answer of record (or not all of it)
            await self._show(final)
        self.note("")
        self._set_state(PhaseStatus.COMPLETE)

    async def fail(self, phase: Phase | None, now: float, status: PhaseStatus = PhaseStatus.FAILED,
                   error: str | None = None) -> None:
        """Failed, skipped or cancelled: streamed text is not an answer, so it is cleared."""
        if phase is not None:
            status, error = phase.status, phase.error
        self.finished_at = now if self.started_at is not None else None
        await self._show("")
        self.note(f"{status.value}: {error}" if error else status.value)
        self._set_state(status)

    async def show_final(self, phase: Phase) -> None:
        """A phase's outcome from the finished round, where its own events did not say (no streaming)."""
        if phase.status == PhaseStatus.COMPLETE:
            await self._show(strip_control(phase.response))
            self.tokens = phase.usage.output_tokens
            self.cost = phase.usage.cost_usd
        else:
            await self._show("")
            self.note(f"{phase.status.value}: {phase.error}" if phase.error else phase.status.value)
        self._set_state(phase.status)


class PaneScroll(VerticalScroll):
    """The pane's scrolling body. Focus restyles this widget only: Textual's default restyles every
    descendant on a focus change, i.e. every Markdown block of the pane (seconds with a long transcript),
    and no rule here depends on the body's focus."""

    def watch_has_focus(self, _has_focus: bool) -> None:
        self.app.stylesheet.update_nodes([self], animate=True)


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
        # kept, not queried: a query walks every Markdown block below
        self._views = [PhaseView(pt) for pt in phases]
        self._status = Static("waiting", classes="pane-status", markup=False)
        self._status_text = "waiting"
        self._body = PaneScroll(*self._views)

    def compose(self) -> ComposeResult:
        yield self._status
        yield self._body

    def view(self, phase_type: PhaseType) -> PhaseView:
        return next(v for v in self._views if v.phase_type == phase_type)

    def views(self) -> list[PhaseView]:
        return list(self._views)

    def follow(self) -> None:
        """Keep the end of the streaming text in view (called once per pump), unless the reader has scrolled
        up. The body is anchored once its text overflows it: the compositor then keeps it at the end in the
        same layout pass as the new text (one frame per update, not a second frame to scroll). Scrolling up
        releases the anchor, scrolling back to the end restores it. Not anchored while the text fits, where
        an anchor would bottom-align it."""
        body = self._body
        if body.max_scroll_y > 0:
            if not body.is_anchored:
                body.anchor()
        elif body.is_anchored:
            body.anchor(False)

    def refresh_status(self, clock: Callable[[], float]) -> None:
        """Update the one-line status; called by the screen's pump (every STATUS_INTERVAL_S), never per token."""
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
            # the phase's own tokens and time; the pane's (the role's) totals when it has played several phases
            costs = [v.cost for v in views if v.cost is not None]
            cost = f" · ${sum(costs):.4f}" if costs else ""
            tokens = sum(v.tokens for v in views)
            total = f" · role {tokens} tok" if tokens != current.tokens else ""
            text = f"{label}: {state} · {current.tokens} tok · {elapsed:.1f}s{total}{cost}"
        if self._status_text != text:
            self._status_text = text
            self._status.update(text)
