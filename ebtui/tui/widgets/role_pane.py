"""One role's pane in the live round: its phases, each streaming into one widget of pre-rendered lines.

Streamed text costs O(new text) per frame: the live screen's pump hands each phase its new text, which is
cut at paragraph boundaries into chunks rendered once; only the unfinished tail is rendered again. The
judge's pane shows progress while the judge writes, then the parsed scores and justifications (`r`: the raw
reply).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, Phase, PhaseStatus, PhaseType
from ebtui.core.safe_text import strip_control
from ebtui.core.views import numbers as num
from ebtui.core.views.phases import PHASE_LABELS
from ebtui.core.views.scores import score_grid

_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
#: a tail longer than this with no paragraph boundary (a long tight list, a code block) is still cut at a line
#: boundary outside a fence, so the text re-rendered per update stays bounded
MAX_TAIL_CHARS = 2000
#: first characters a paragraph cut never falls before: a list item ("1.", "2)", "-", "*", "+"), a code fence
#: ("```", "~~~") or a quote (">"). Rendered apart, a loose list restarts its numbering and a fence or quote
#: loses the blank line Rich puts before it. Checked on the first character alone: while streaming, "2" may
#: not yet be followed by "."
_NO_CUT_BEFORE = frozenset("0123456789-*+`~>")


def _cut_point(before: str, text: str) -> int | None:
    """Where `text` (following `before` in one Markdown document) may be split into two documents: after
    the last blank line outside a code fence, before a line that is not indented and cannot open a list item (so no code block, list item or
    loose list continues across the cut). None if there is no such place."""
    pos = len(text)
    open_before = len(_FENCE.findall(before)) % 2
    while True:
        pos = text.rfind("\n\n", 0, pos)
        if pos < 0:
            return None
        cut = pos + 2
        following = text[cut:cut + 1]
        if (following and following not in " \t\n" and following not in _NO_CUT_BEFORE
                and (open_before + len(_FENCE.findall(text, 0, cut))) % 2 == 0):
            return cut


def _line_cut(text: str) -> int | None:
    """A fallback cut for a long tail with no paragraph boundary: after the last newline outside a fence that
    starts a list item or a plain line (a tight list continues as another list: the same lines on screen)."""
    pos = len(text)
    while True:
        pos = text.rfind("\n", 0, pos)
        if pos <= 0:
            return None
        cut = pos + 1
        following = text[cut:cut + 1]
        if following and following not in " \t\n" and len(_FENCE.findall(text, 0, cut)) % 2 == 0:
            return cut


def _blank(strip: Strip) -> bool:
    return not strip.text.strip()


class StreamLines:
    """Text that grows at its end, kept as pre-rendered lines: the model behind a phase's text.

    `append` costs O(new text): finished chunks are rendered once per width and kept; only the tail after the
    last cut is rendered again. Markdown mode cuts at paragraph boundaries and renders with Rich's Markdown
    (links inert); plain mode (`markdown=False`) cuts at newlines and renders the text as it is. The text
    must already be free of control sequences (the caller strips them); it is never read as markup.
    """

    def __init__(self, *, markdown: bool = True) -> None:
        self.markdown = markdown
        self._chunks: list[str] = []  # sealed text, in order: rendered once per width
        self._tail = ""  # the text after the last cut: rendered again after every append
        self._width = -1
        self._sealed: list[Strip] = []  # the rendered lines of the first `_rendered` chunks
        self._rendered = 0
        self._tail_lines: list[Strip] | None = None  # None: to render
        self._lines: list[Strip] | None = None  # sealed + tail, cached
        self.renders = 0  # pieces of text rendered (for tests of the cost model)
        self.rendered_chars = 0  # characters those renders covered

    @property
    def text(self) -> str:
        return "".join(self._chunks) + self._tail

    @property
    def tail(self) -> str:
        return self._tail

    @property
    def chunks(self) -> list[str]:
        return list(self._chunks)

    def _cut(self, tail: str) -> int | None:
        if not self.markdown:
            return tail.rfind("\n") + 1 or None
        cut = _cut_point("", tail)
        if cut is None and len(tail) > MAX_TAIL_CHARS:
            cut = _line_cut(tail)
        return cut

    def append(self, text: str) -> None:
        if not text:
            return
        tail = self._tail + text
        cut = self._cut(tail)
        if cut:
            self._chunks.append(tail[:cut])
            tail = tail[cut:]
        self._tail = tail
        self._tail_lines = self._lines = None

    def set_text(self, text: str) -> None:
        self._chunks, self._tail = [], ""
        self._sealed, self._rendered, self._tail_lines, self._lines = [], 0, None, None
        self.append(text)

    def _render_text(self, text: str, width: int, console: Console) -> list[Strip]:
        self.renders += 1
        self.rendered_chars += len(text)
        if self.markdown:
            renderable: RenderableType = RichMarkdown(text, hyperlinks=False)
        else:
            renderable = Text(text[:-1] if text.endswith("\n") else text)
        options = console.options.update_width(max(width, 1))
        return [Strip(line).simplify() for line in console.render_lines(renderable, options, pad=False)]

    def _join(self, lines: list[Strip], more: list[Strip]) -> None:
        # Rich puts a blank line between Markdown blocks; documents rendered apart need it back
        if self.markdown and lines and more and not _blank(more[0]):
            lines.append(Strip.blank(0))
        lines.extend(more)

    def lines(self, width: int, console: Console) -> list[Strip]:
        if width != self._width:
            self._width = width
            self._sealed, self._rendered, self._tail_lines, self._lines = [], 0, None, None
        if self._lines is not None:
            return self._lines
        while self._rendered < len(self._chunks):
            self._join(self._sealed, self._render_text(self._chunks[self._rendered], width, console))
            self._rendered += 1
        if self._tail_lines is None:
            self._tail_lines = self._render_text(self._tail, width, console) if self._tail else []
        lines = list(self._sealed)
        self._join(lines, self._tail_lines)
        self._lines = lines
        return lines


def judgment_renderable(judgment: Judgment) -> RenderableType:
    """The parsed judgment, readable: each criterion's scores (a missing one said so, never a number), the
    totals, the review flag and the justifications. Every piece of model text is plain Text (no markup)."""
    view = score_grid(judgment)  # the numbers and the review state of the score card and `rounds show`
    table = Table(box=None, expand=True, pad_edge=False, show_edge=False, padding=(0, 1, 0, 0))
    table.add_column("Criterion", ratio=1, overflow="fold")
    table.add_column("A", justify="right", no_wrap=True)
    table.add_column("B", justify="right", no_wrap=True)

    def cell(value: int | None) -> Text:
        return Text("missing", style="bold red") if value is None else Text(str(value))

    for crit in CRITERIA:
        table.add_row(CRITERION_LABELS[crit], cell(view.cell("a", crit).value), cell(view.cell("b", crit).value))
    ta, tb = view.totals["a"], view.totals["b"]
    table.add_row(Text("Total", style="bold"), Text(str(ta) if ta is not None else "—", style="bold"),
                  Text(str(tb) if tb is not None else "—", style="bold"))
    parts: list[RenderableType] = [table]
    if view.needs_review:
        reasons = "; ".join(strip_control(i.reason.message) for i in view.open_items) or "a score is missing"
        parts.append(Text(f"\n⚠ needs review: {reasons}", style="bold yellow"))
    for title, body in (("Team A", judgment.team_a_justification), ("Team B", judgment.team_b_justification),
                        ("Overall", judgment.overall_analysis)):
        if body:
            parts.append(Text.assemble("\n", (title, "bold"), "\n", strip_control(body)))
    parts.append(Text("\nr: the judge's raw reply", style="dim"))
    return Group(*parts)


class PhaseView(Widget):
    """A phase: its title, an in-place note (retry / failure / progress) and its text, drawn as one widget of
    pre-rendered lines (no child widgets: streaming mounts, styles and lays out nothing).

    `add(text)` only queues; `flush()` (the screen's pump) appends the queue in one piece and repaints the
    lines that changed. When the phase finishes, the core's authoritative text replaces what streamed only
    when the two differ. The judgment's view shows the parsed judgment (`show_judgment`, rendered once)
    instead of the raw reply, which `show_raw(True)` brings back.
    """

    COMPONENT_CLASSES = {"phase-view--title", "phase-view--note", "phase-view--progress"}
    DEFAULT_CSS = """
    PhaseView { height: auto; margin-bottom: 1; }
    PhaseView > .phase-view--title { color: $text-muted; text-style: bold; }
    PhaseView.-pending > .phase-view--title { color: $text-disabled; }
    PhaseView.-running > .phase-view--title { color: $accent; }
    PhaseView.-complete > .phase-view--title { color: $success; }
    PhaseView.-failed > .phase-view--title { color: $error; }
    PhaseView > .phase-view--note { color: $warning; }
    PhaseView.-failed > .phase-view--note { color: $error; }
    PhaseView > .phase-view--progress { color: $text-muted; text-style: italic; }
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
        self.judgment: Judgment | None = None
        self.raw = False  # the judgment: show the raw reply rather than the summary
        self.is_judgment = phase_type == PhaseType.JUDGMENT
        self._pending: list[str] = []
        # the judge's reply is JSON or a scoring sheet: plain text, not Markdown
        self.stream = StreamLines(markdown=not self.is_judgment)
        self.title_text = PHASE_LABELS[phase_type]
        self.note_text = ""
        self._progress = False  # the note is a progress line, not a warning
        self._summary: RenderableType | None = None
        self._head: tuple[int, list[Strip]] | None = None  # (width, title + note lines)
        self._summary_lines: tuple[int, list[Strip]] | None = None
        self._lines: list[Strip] | None = None
        self._width = -1
        self._line_style: Style | None = None  # the widget's style for the repaint under way (render_lines)

    # -- what is shown -----------------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The text received and shown (for the judgment: one key away), without what is still queued."""
        return self.stream.text

    def _body_mode(self) -> str:
        if self.status == PhaseStatus.PENDING:
            return "none"
        if self.is_judgment and not self.raw:
            if self.judgment is not None:
                return "summary"
            if self.status == PhaseStatus.RUNNING:
                return "none"
        return "text"

    def _render_strips(self, renderable: RenderableType, width: int) -> list[Strip]:
        console = self.app.console
        options = console.options.update_width(max(width, 1))
        return [Strip(line).simplify() for line in console.render_lines(renderable, options, pad=False)]

    def _head_lines(self, width: int) -> list[Strip]:
        if self._head is None or self._head[0] != width:
            title = Text(self.title_text, style=self.get_component_rich_style("phase-view--title"))
            lines = self._render_strips(title, width)
            if self.note_text:
                style = "phase-view--progress" if self._progress else "phase-view--note"
                lines += self._render_strips(Text(self.note_text, style=self.get_component_rich_style(style)), width)
            self._head = (width, lines)
        return self._head[1]

    def _all_lines(self, width: int) -> list[Strip]:
        if width != self._width:
            self._width, self._lines = width, None
        if self._lines is not None:
            return self._lines
        lines = list(self._head_lines(width))
        mode = self._body_mode()
        if mode == "text":
            lines += self.stream.lines(width, self.app.console)
        elif mode == "summary" and self._summary is not None:
            if self._summary_lines is None or self._summary_lines[0] != width:
                self._summary_lines = (width, self._render_strips(self._summary, width))
            lines += self._summary_lines[1]
        self._lines = lines
        return lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._all_lines(width))

    def render_lines(self, crop: Region) -> list[Strip]:
        # the widget's style is computed once per repaint, not per line (`rich_style` walks the ancestors)
        self._line_style = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """A pre-rendered line in the theme's colours: the widget's style (background, foreground) goes under
        the line's own styles and pads it to the width. Strip caches both steps per style, so a line kept
        across frames is styled once, and a frame styles only the lines it repaints."""
        width = self.content_size.width
        lines = self._all_lines(width)
        style = self._line_style if self._line_style is not None else self.rich_style
        if y >= len(lines):
            return Strip.blank(width, style)
        return lines[y].crop_extend(0, width, style).apply_style(style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._head = None  # the title's colour follows the state classes and the theme
        self._lines = None

    def _changed(self, *, head: bool = False) -> None:
        """Repaint what changed: from the first line that differs, or everything with a layout when the
        height changed (the lines above the change are kept, so a pump re-renders the new text only)."""
        if head:
            self._head = None
        old = self._lines
        self._lines = None
        if old is None or self._width < 0 or not self.is_mounted:
            self.refresh(layout=True)
            return
        new = self._all_lines(self._width)
        if len(new) != len(old):
            self.refresh(layout=True)
            return
        first = next((i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a is not b and a != b), None)
        if first is not None:
            self.refresh(Region(0, first, self.size.width, len(new) - first))

    # -- state -------------------------------------------------------------------------------------
    def _set_state(self, status: PhaseStatus) -> None:
        self.status = status
        for cls in ("-pending", "-running", "-complete", "-failed", "-skipped", "-cancelled"):
            self.set_class(cls == f"-{status.value}", cls)
        title = PHASE_LABELS[self.phase_type]
        if status == PhaseStatus.RUNNING:
            title = f"▶ {title}"
        elif status == PhaseStatus.COMPLETE:
            title = f"✓ {title}"
        elif status in (PhaseStatus.FAILED, PhaseStatus.SKIPPED, PhaseStatus.CANCELLED):
            title = f"✗ {title} ({status.value})"
        self.title_text = title
        self._update_progress()
        self._changed(head=True)

    def _update_progress(self) -> None:
        """The judgment while it streams: a progress note unless the raw reply was asked for."""
        if not self.is_judgment:
            return
        if self.status == PhaseStatus.RUNNING and not self.raw and self.judgment is None:
            self._set_note("judging… the scores appear when the judge has finished (r: the reply so far)",
                           progress=True)
        elif self._progress:
            self._set_note("")

    def _set_note(self, text: str, *, progress: bool = False) -> None:
        self.note_text = strip_control(text)
        self._progress = progress and bool(text)
        self._changed(head=True)

    def note(self, text: str) -> None:
        self._set_note(text)

    def start(self, now: float, attempt: int = 1) -> None:
        if self.status == PhaseStatus.RUNNING:
            return
        self.started_at = now
        self.attempt = attempt
        self._set_state(PhaseStatus.RUNNING)

    def add(self, text: str) -> None:
        """Queue streamed text (no widget work: the screen's pump calls `flush`)."""
        if self.status != PhaseStatus.RUNNING:
            return
        self.tokens += 1
        self._pending.append(text)

    def flush(self) -> None:
        """Hand the queued text to the stream in one piece; repaint only what changed."""
        if not self._pending or self.status != PhaseStatus.RUNNING:
            return
        # stripped as a whole batch, so an escape sequence split across two deltas is still caught
        text = strip_control("".join(self._pending))
        self._pending.clear()
        if not text:
            return
        self.stream.append(text)
        if self._body_mode() == "text":
            self._changed()

    def _show(self, text: str) -> None:
        """Replace whatever is shown with `text`."""
        self._pending.clear()
        self.stream.set_text(text)
        self._changed()

    def show_judgment(self, judgment: Judgment) -> None:
        """The parsed judgment, rendered once (not per token)."""
        if not self.is_judgment:
            return
        self.judgment = judgment
        self._summary = judgment_renderable(judgment)
        self._summary_lines = None
        self._update_progress()
        self._changed()

    def show_raw(self, raw: bool) -> None:
        self.raw = raw
        self._update_progress()
        self._changed()

    def retry(self, attempt: int, error: str) -> None:
        """The call restarts: what streamed so far is void and goes."""
        self._show("")
        self.tokens = 0
        self.attempt = attempt
        self.note(f"retrying (attempt {attempt}): {error}")

    def finish(self, phase: Phase, now: float) -> None:
        self.finished_at = now
        self.tokens = phase.usage.output_tokens or self.tokens
        self.cost = phase.usage.cost_usd
        final = strip_control(phase.response)
        self.flush()
        if self.text != final:  # the streamed text is not the answer of record (or not all of it)
            self._show(final)
        self.note("")
        self._set_state(PhaseStatus.COMPLETE)

    def fail(self, phase: Phase | None, now: float, status: PhaseStatus = PhaseStatus.FAILED,
             error: str | None = None) -> None:
        """Failed, skipped or cancelled: streamed text is not an answer, so it is cleared."""
        if phase is not None:
            status, error = phase.status, phase.error
        self.finished_at = now if self.started_at is not None else None
        self._show("")
        self._set_state(status)
        self.note(f"{status.value}: {error}" if error else status.value)

    def show_final(self, phase: Phase) -> None:
        """A phase's outcome from the finished round, where its own events did not say (no streaming)."""
        if phase.status == PhaseStatus.COMPLETE:
            self._show(strip_control(phase.response))
            self.tokens = phase.usage.output_tokens
            self.cost = phase.usage.cost_usd
            self._set_state(phase.status)
        else:
            self._show("")
            self._set_state(phase.status)
            self.note(f"{phase.status.value}: {phase.error}" if phase.error else phase.status.value)


#: the focused pane's title style (set inline by PaneScroll on focus, cleared on blur)
FOCUSED_TITLE = Style(reverse=True, bold=True)


class PaneScroll(VerticalScroll):
    """The pane's scrolling body. It follows the end of the text until the reader scrolls up; scrolling back
    to the end follows again. Following is Textual's anchor (the compositor keeps the body at its end in the
    same layout pass as new text), set only while the text overflows the pane: Textual anchors the *bottom*
    of the content, which would bottom-align text that fits. `follow()` runs after every change the pane
    sees (each pump, a resize), so a resize that makes the text fit shows it from the top again, and one that
    makes it overflow keeps the reader's place if they had scrolled up. Home/end/page and up/down keys move
    without animation (Textual animates up/down) and at once (`immediate`: Textual's default defers a scroll
    until after the next refresh, which costs a frame), so the frame a key asks for is the next one.

    Focus restyles this widget only: Textual's default restyles every descendant on a focus change, and no
    rule here depends on the body's focus."""

    def watch_has_focus(self, has_focus: bool) -> None:
        self.app.stylesheet.update_nodes([self], animate=True)
        if isinstance(self.parent, RolePane):  # the live screen says so at once (see its set_focus); this
            self.parent.show_focused(has_focus)  # covers focus that moves any other way

    @property
    def following(self) -> bool:
        """Whether new text will be in view: it fits, or the body is anchored and at its end."""
        return self.max_scroll_y == 0 or (self.is_anchored and self.scroll_y >= self.max_scroll_y)

    def follow(self) -> None:
        """Anchor once the text overflows (a reader who scrolled up has released the anchor: Textual leaves
        them where they are until they scroll back to the end); un-anchor and show the top when it fits."""
        if self.max_scroll_y > 0:
            if not self.is_anchored:
                self.anchor()
        elif self.is_anchored or self.scroll_y != 0:
            self.anchor(False)
            # the compositor may have left a negative offset (bottom-aligned): back to the top
            self.scroll_target_y = 0
            self.scroll_y = 0

    def on_resize(self) -> None:
        self.call_after_refresh(self.follow)

    def action_scroll_home(self) -> None:
        self.scroll_home(animate=False, immediate=True)

    def action_scroll_end(self) -> None:
        self.scroll_end(animate=False, immediate=True)

    def action_scroll_up(self) -> None:
        self.scroll_to(y=self.scroll_y - 1, animate=False, immediate=True)

    def action_scroll_down(self) -> None:
        self.scroll_to(y=self.scroll_y + 1, animate=False, immediate=True)

    def action_page_up(self) -> None:
        self.scroll_to(y=self.scroll_y - self.scrollable_content_region.height, animate=False, immediate=True)

    def action_page_down(self) -> None:
        self.scroll_to(y=self.scroll_y + self.scrollable_content_region.height, animate=False, immediate=True)


class RolePane(Vertical):
    """Team A, Team B or the judge: a title, a throttled status line and the role's phases."""

    DEFAULT_CSS = """
    RolePane { border: round $foreground 25%; border-title-color: $text-muted; height: 1fr; width: 1fr; }
    RolePane.-active { border: round $accent; border-title-color: $accent; }
    RolePane > .pane-status { color: $text-muted; height: auto; max-height: 2; padding: 0 1; }
    RolePane > VerticalScroll { padding: 0 1; }
    """

    def __init__(self, role: str, model: str, phases: tuple[PhaseType, ...], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.role = role
        self.model = model
        self.phase_types = phases
        self.border_title = f"{role} · {strip_control(model)}"
        self._views = [PhaseView(pt) for pt in phases]
        self._status = Static("waiting", classes="pane-status", markup=False)
        self._status_text = "waiting"
        self._body = PaneScroll(*self._views)

    def compose(self) -> ComposeResult:
        yield self._status
        yield self._body

    @property
    def body(self) -> PaneScroll:
        return self._body

    def view(self, phase_type: PhaseType) -> PhaseView:
        return next(v for v in self._views if v.phase_type == phase_type)

    def views(self) -> list[PhaseView]:
        return list(self._views)

    def follow(self) -> None:
        self._body.follow()

    def show_focused(self, focused: bool) -> None:
        """Show whether the keys go to this pane: its title reversed. An inline rule on the pane alone, and only
        the title's row repainted: setting the style property would repaint the pane and everything in it
        (Textual refreshes the children of a restyled node). Idempotent."""
        changed = (self.styles.set_rule("border_title_style", FOCUSED_TITLE) if focused
                   else self.styles.clear_rule("border_title_style"))
        if changed and self.is_mounted:  # the top border's row (a refresh region is relative to the content)
            offset = self.content_offset
            self.refresh(Region(-offset.x, -offset.y, self.outer_size.width, 1))

    def refresh_status(self, clock: Callable[[], float]) -> None:
        """Update the one-line status; called by the screen's pump (every STATUS_INTERVAL_S), never per token."""
        views = self._views
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
            cost = f" · ${num.fixed(sum(costs), 4)}" if costs else ""
            tokens = sum(v.tokens for v in views)
            total = f" · role {tokens} tok" if tokens != current.tokens else ""
            text = f"{label}: {state} · {current.tokens} tok · {num.fixed(elapsed, 1)}s{total}{cost}"
        if self._status_text != text:
            self._status_text = text
            self._status.update(text)
