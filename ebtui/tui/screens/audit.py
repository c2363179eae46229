"""The human audit's scoring screen: one drawn judgment at a time, blind — the round's transcript (both teams,
every phase) beside the rubric; nothing of the judge (scores, reasons, overrides, which model judged or which
models debated). Digits score the current criterion (0 = 10); scores are saved as they are given, as the
person's own ratings in the audit's file (the judgment and its overrides are never touched). docs/AUDIT.md."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static

from ebtui.core.records import CRITERIA, CRITERION_LABELS
from ebtui.core.safe_text import strip_control
from ebtui.core.usecases import audit as uc
from ebtui.errors import UsageError
from ebtui.tui.keys import bindings
from ebtui.tui.services import app_context
from ebtui.tui.widgets.footer import Footer

CELLS = [(t, c) for t in ("a", "b") for c in CRITERIA]


def transcript_text(item: uc.BlindItem) -> Text:
    out = Text()
    out.append(strip_control(item.dilemma_title) + "\n", style="bold")
    if item.dilemma_text:
        out.append(strip_control(item.dilemma_text) + "\n")
    for title, team, text in item.phases:
        out.append(f"\n{title} · {team}\n", style="bold underline")
        out.append(strip_control(text) + "\n")
    return out


def rubric_text(item: uc.BlindItem, given: dict[tuple[str, str], int], cursor: int) -> Text:
    out = Text()
    w = max(len(v) for v in CRITERION_LABELS.values())
    out.append(f"{'criterion':<{w}}  Team A  Team B\n", style="bold")
    for c in CRITERIA:
        out.append(f"{CRITERION_LABELS[c]:<{w}}")
        for t in ("a", "b"):
            v = given.get((t, c))
            cell = f"{'·' if v is None else v:>6}"
            here = CELLS[cursor] == (t, c)
            out.append("  ")
            out.append(f"[{cell.strip():>4}]" if here else cell, style="reverse" if here else "")
        out.append("\n")
    out.append("\n1-9 and 0 (= 10) score the marked cell; ↑↓ criterion, tab team; s skip, b back, n next", style="dim")
    return out


class AuditScreen(Screen[None]):
    BINDINGS = bindings("audit")
    DEFAULT_CSS = """
    AuditScreen #audit-progress { height: auto; padding: 0 1; }
    AuditScreen #audit-body { height: 1fr; }
    AuditScreen #audit-transcript-pane { width: 3fr; border: round $panel; padding: 0 1; }
    AuditScreen #audit-rubric-pane { width: 2fr; min-width: 46; border: round $panel; padding: 0 1; }
    """

    def __init__(self, audit_id: str | None = None) -> None:
        super().__init__()
        self.audit_id = audit_id
        self.audit: uc.Audit | None = None
        self.index = 0
        self.cursor = 0
        self.item: uc.BlindItem | None = None
        self.given: dict[tuple[str, str], int] = {}
        self.rater = uc.default_rater()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="audit-progress")
        with Horizontal(id="audit-body"):
            with VerticalScroll(id="audit-transcript-pane"):
                yield Static("", id="audit-transcript")
            with VerticalScroll(id="audit-rubric-pane"):
                yield Static("", id="audit-rubric")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Human audit (blind)"
        ctx = app_context(self)
        try:
            audit = uc.load_audit(ctx, self.audit_id) if self.audit_id else uc.current_audit(ctx)
        except UsageError as exc:
            self._message(str(exc))
            return
        if audit is None or not audit.judgments:
            self._message("No audit to score: draw one with `ebtui audit draw --n N` (docs/AUDIT.md).")
            return
        self.audit = audit
        self.show(uc.resume_index(audit))

    def _message(self, text: str) -> None:
        self.query_one("#audit-progress", Static).update(Text(strip_control(text), style="bold"))

    def show(self, index: int) -> None:
        assert self.audit is not None
        self.index = max(0, min(index, len(self.audit.judgments) - 1))
        try:
            self.item = uc.blind_item(app_context(self), self.audit, self.index)
        except UsageError as exc:
            self._message(str(exc))
            return
        self.given = dict(self.item.given)
        self.cursor = next((i for i, cell in enumerate(CELLS) if cell not in self.given), 0)
        self.query_one("#audit-transcript", Static).update(transcript_text(self.item))
        self.query_one("#audit-transcript-pane", VerticalScroll).scroll_home(animate=False)
        self._refresh()

    def _refresh(self) -> None:
        if self.audit is None or self.item is None:
            return
        done = self.audit.done()
        ref = f"{self.item.round_id}#{self.item.judgment_id}"
        skipped = " · skipped before" if ref in self.audit.skipped else ""
        self._message(f"Audit {self.audit.id}: {done} of {len(self.audit.judgments)} scored · judgment "
                      f"{self.index + 1} of {len(self.audit.judgments)}{skipped} · rater {self.rater or '?'}")
        self.query_one("#audit-rubric", Static).update(rubric_text(self.item, self.given, self.cursor))

    def on_key(self, event: events.Key) -> None:
        if event.character is None or not event.character.isdigit() or self.item is None or self.audit is None:
            return
        event.stop()
        score = int(event.character) or 10
        team, crit = CELLS[self.cursor]
        try:
            self.audit = uc.rate(app_context(self), self.audit.id,
                                 {(self.item.round_id, self.item.judgment_id, team, crit): score}, rater=self.rater)
        except UsageError as exc:
            self.notify(strip_control(str(exc)), severity="error")
            return
        self.given[(team, crit)] = score
        if len(self.given) == len(CELLS):
            if self.index + 1 < len(self.audit.judgments):
                self.show(self.index + 1)
                return
            self.notify("Every drawn judgment is scored.")
        self.cursor = next((i for i in list(range(self.cursor + 1, len(CELLS))) + list(range(self.cursor + 1))
                            if CELLS[i] not in self.given), self.cursor)
        self._refresh()

    def action_move(self, by: int) -> None:
        self.cursor = (self.cursor + by) % len(CELLS)
        self._refresh()

    def action_switch_team(self) -> None:
        self.cursor = (self.cursor + len(CRITERIA)) % len(CELLS)
        self._refresh()

    def action_skip(self) -> None:
        if self.audit is None or self.item is None:
            return
        uc.skip(app_context(self), self.audit.id, f"{self.item.round_id}#{self.item.judgment_id}")
        self.audit = uc.load_audit(app_context(self), self.audit.id)
        self.show(self.index + 1 if self.index + 1 < len(self.audit.judgments) else 0)

    def action_previous(self) -> None:
        if self.audit is not None:
            self.show(self.index - 1)

    def action_next(self) -> None:
        if self.audit is not None:
            self.show(self.index + 1)

    def action_leave(self) -> None:
        self.dismiss(None)
