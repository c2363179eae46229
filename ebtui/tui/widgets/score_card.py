"""The judgment as a grid (criteria × teams) with totals, justifications, analysis and the raw reply. Each
cell is marked by how its score was read; the focused cell's source text and review reasons show under the
grid. A cell can be corrected by hand (a note is required) or accepted as parsed, through
ebtui.core.usecases.review (what the CLI calls), saved in a thread worker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Markdown, Static

from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, Round, Team
from ebtui.core.safe_text import strip_control
from ebtui.core.views.scores import KIND_LABELS, ScoreCell, ScoreGridView, score_grid
from ebtui.tui.keys import bindings

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext
    from ebtui.core.usecases.review import Reviewed

#: the dialog asking for a corrected score: (team, criterion, parsed, current value, current note) -> a screen
#: whose result is (value or None to clear, note), or None when the human cancels
EditDialog = Callable[[Team, str, int | None, int | None, str], Screen[tuple[int | None, str] | None]]

TEAMS: tuple[Team, ...] = ("a", "b")


def _cell(c: ScoreCell, colors: dict[str, str]) -> Text:
    review = (" ?", f"bold {colors['accent']}") if c.review == "open" else ("", "")
    accepted = (" ✓", "dim") if c.action == "accept" else ("", "")
    mark = (f" {c.mark}", "dim")
    if c.override is not None:
        judge = "—" if c.parsed is None else str(c.parsed)
        return Text.assemble((f"{c.override.value}", "bold"), (" ✎", colors["accent"]), (f" (judge {judge})", "dim"),
                             mark, review)
    if c.parsed is None:
        return Text.assemble(("missing", f"bold {colors['error']}"), mark, accepted, review)
    return Text.assemble(str(c.parsed), mark, accepted, review)


def describe_cell(c: ScoreCell) -> Text:
    """The focused cell: how its score was read, the exact source text, and its review reasons."""
    kind = KIND_LABELS.get(c.kind, ("?", c.kind))[1]
    out = Text.assemble((f"Team {c.team.upper()} · {CRITERION_LABELS[c.criterion]}", "bold"), f" — {kind}")
    if c.note:
        out.append(f" ({strip_control(c.note)})", style="dim")
    if c.source:
        out.append("\n  “")
        out.append(strip_control(c.source).replace("\n", " ")[:300], style="italic")
        out.append("”")
    for reason in c.reasons:
        out.append(f"\n  {'✓' if c.review != 'open' else '⚠'} {strip_control(reason)}")
    if c.action == "accept":
        out.append("\n  accepted as parsed by a human", style="dim")
    return out


def _missing(view: ScoreGridView, *teams: Team) -> int:
    """Scores still missing after overrides (the judge gave none and no human set one)."""
    return sum(1 for (team, _), cell in view.cells.items() if team in teams and cell.value is None)


def _total(view: ScoreGridView, team: Team, colors: dict[str, str]) -> Text:
    total = view.totals[team]
    if total is None:
        missing = _missing(view, team)
        return Text(f"— ({missing} missing)", style=f"bold {colors['error']}")
    return Text(f"{total} / 70", style="bold")


class ScoreGrid(DataTable[Text | str]):
    """Criteria down, teams across; Enter (or e) on a team's cell asks to edit it."""

    DEFAULT_CSS = """
    ScoreGrid { height: auto; max-height: 12; }
    """

    @dataclass
    class EditRequested(Message):
        team: Team
        criterion: str

    @dataclass
    class Focused(Message):
        """The cursor is on a team's score (None: on a label or total)."""
        selected: tuple[Team, str] | None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="cell", zebra_stripes=True)

    def on_mount(self) -> None:
        self.add_column("Criterion", key="criterion")
        self.add_column("Team A", key="a")
        self.add_column("Team B", key="b")

    def show(self, judgment: Judgment, colors: dict[str, str], view: ScoreGridView | None = None) -> None:
        view = view or score_grid(judgment)
        coordinate = self.cursor_coordinate
        self.clear()
        for crit in CRITERIA:
            self.add_row(CRITERION_LABELS[crit], *(_cell(view.cell(t, crit), colors) for t in TEAMS), key=crit)
        self.add_row(Text("Total", style="bold"), *(_total(view, t, colors) for t in TEAMS), key="total")
        self.cursor_coordinate = coordinate if coordinate.column else coordinate._replace(column=1)

    @on(DataTable.CellHighlighted)
    def _highlighted(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        self.post_message(self.Focused(self._selected()))

    def selected(self) -> tuple[Team, str] | None:
        return self._selected()

    def _selected(self) -> tuple[Team, str] | None:
        row_key, col_key = self.coordinate_to_cell_key(self.cursor_coordinate)
        if col_key.value in TEAMS and row_key.value in CRITERIA:
            return col_key.value, row_key.value
        return None

    @on(DataTable.CellSelected)
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        self.request_edit()

    def request_edit(self) -> None:
        selected = self._selected()
        if selected is None:
            self.app.notify("Pick a Team A or Team B score to edit.", severity="warning")
            return
        self.post_message(self.EditRequested(*selected))


class ScoreCard(Vertical):
    """A round's score card. `context` may be None (read-only); edits go through ebtui.core.usecases.review."""

    DEFAULT_CSS = """
    ScoreCard { height: 1fr; }
    ScoreCard .card-header { padding: 0 1; height: auto; }
    ScoreCard .card-review { padding: 0 1; height: auto; max-height: 40%; display: none; }
    ScoreCard .card-review.-shown { display: block; }
    ScoreCard #review-text { color: $warning; height: auto; }
    ScoreCard #cell-source { padding: 0 1; height: auto; min-height: 2; color: $text-muted; }
    ScoreCard #card-main { width: 1fr; padding: 0 1; }
    ScoreCard #card-raw { width: 1fr; border-left: vkey $panel-lighten-2; padding: 0 1; display: none; }
    ScoreCard.-raw #card-raw { display: block; }
    ScoreCard .card-heading { text-style: bold; color: $primary; margin-top: 1; }
    ScoreCard Markdown { margin: 0; padding: 0; }
    """

    BINDINGS = bindings("scorecard")

    @dataclass
    class OverrideSaved(Message):
        round: Round

    def __init__(self, round_: Round, context: AppContext | None, *, edit_dialog: EditDialog,
                 id: str | None = None) -> None:
        """`edit_dialog(team, criterion, parsed, current value, current note)` is the screen that asks a human
        for a corrected score (the screen holding the card passes it: a widget opens no screen's modal)."""
        super().__init__(id=id)
        self.round = round_
        self.context = context
        self.edit_dialog = edit_dialog
        #: which of the round's judgments is shown (Round.all_judgments(); 0: its own, when it has one)
        self.index = 0

    def current(self) -> Judgment | None:
        """The judgment shown (None: the round has none)."""
        js = self.round.all_judgments()
        return js[min(self.index, len(js) - 1)] if js else None

    def _key(self) -> str:
        """The shown judgment's key for ebtui.core.judgment_overrides ("": the round's own)."""
        j = self.current()
        return "" if j is None or j is self.round.judgment else j.key

    def action_next_judgment(self) -> None:
        n = len(self.round.all_judgments())
        if n <= 1:
            self.app.notify("This round has one judgment (ebtui rejudge adds more).", severity="information")
            return
        self.index = (self.index + 1) % n
        self.show(self.round)

    def compose(self) -> ComposeResult:
        yield Static("", classes="card-header")
        # the review checklist scrolls in its own box: on a small terminal its end stays reachable
        with VerticalScroll(classes="card-review"):
            yield Static("", id="review-text", markup=False)
        with Horizontal():
            with VerticalScroll(id="card-main"):
                yield ScoreGrid(id="score-grid")
                yield Static("", id="cell-source", markup=False)
                yield Static("Team A justification", classes="card-heading", markup=False)
                yield Markdown("", id="just-a", open_links=False)
                yield Static("Team B justification", classes="card-heading", markup=False)
                yield Markdown("", id="just-b", open_links=False)
                yield Static("Overall analysis", classes="card-heading", markup=False)
                yield Markdown("", id="analysis", open_links=False)
            with VerticalScroll(id="card-raw"):
                yield Static("Raw judge reply", classes="card-heading", markup=False)
                yield Static("", id="raw-reply", markup=False)

    def on_mount(self) -> None:
        self.show(self.round)

    def _colors(self) -> dict[str, str]:
        theme = self.app.current_theme
        return {"error": theme.error or "red", "accent": theme.accent or "yellow"}

    def show(self, round_: Round) -> None:
        self.round = round_
        r = round_
        shown = self.current()
        judgment = shown or Judgment()
        judges = r.all_judgments()
        header = Text.assemble(
            (strip_control(r.dilemma_title or r.dilemma_id), "bold"), "  ",
            (f"Team A {strip_control(r.team_a_model)} · Team B {strip_control(r.team_b_model)} · "
             f"judge {strip_control(judgment.judge_model or r.judge_model)}", "dim"), "  ",
            (f"[{r.status.value}]", "italic"),
        )
        if len(judges) > 1:
            header.append(f"\njudgment {self.index + 1} of {len(judges)}"
                          f" · {'Team B read first' if judgment.order == 'ba' else 'Team A read first'}"
                          + (f" · re-judged, repeat {judgment.repeat}" if judgment.origin == "rejudge" else
                             " · the round's own") + "  (j: next judgment)", style="bold")
        if shown is None:
            header.append("  no judgment", style="bold")
        elif judgment.parse_method:
            header.append(f"  read as: {judgment.parse_method}", style="dim")
        self.query_one(".card-header", Static).update(header)
        view = score_grid(shown)
        self.view = view
        missing = _missing(view, *TEAMS)
        review = self.query_one(".card-review", VerticalScroll)
        if shown is not None and view.needs_review:
            lines = [f"⚠ needs review: {len(view.open_items)} of {len(view.items)} item(s) open"
                     + (f" — {missing} score(s) missing" if missing else "")]
            lines += [f"  [{'x' if i.addressed else ' '}] {strip_control(i.reason.message)}" for i in view.items]
            lines.append("  On a cell: Enter (or e) sets a score by hand (a note is required); a accepts it as parsed.")
            self.query_one("#review-text", Static).update(Text("\n".join(lines)))
            review.add_class("-shown")
        else:
            review.remove_class("-shown")
        grid = self.query_one(ScoreGrid)
        grid.show(judgment, self._colors(), view)
        self._describe(grid.selected())
        self.query_one("#just-a", Markdown).update(strip_control(judgment.team_a_justification) or "*none given*")
        self.query_one("#just-b", Markdown).update(strip_control(judgment.team_b_justification) or "*none given*")
        self.query_one("#analysis", Markdown).update(strip_control(judgment.overall_analysis) or "*none given*")
        self.query_one("#raw-reply", Static).update(Text(strip_control(judgment.raw_response) or "(empty)"))

    def _describe(self, selected: tuple[Team, str] | None) -> None:
        target = self.query_one("#cell-source", Static)
        if selected is None or not getattr(self, "view", None):
            target.update("")
            return
        target.update(describe_cell(self.view.cell(*selected)))

    @on(ScoreGrid.Focused)
    def _focused(self, event: ScoreGrid.Focused) -> None:
        self._describe(event.selected)

    def _correctable(self, no_judgment: str) -> AppContext | None:
        """The context to save a correction through now (None, and a warning saying why, when there is none)."""
        if self.current() is None:
            self.app.notify(no_judgment, severity="warning")
        elif self.context is None:
            self.app.notify("Read-only: no results store.", severity="warning")
        return self.context if self.current() is not None else None

    def action_accept(self) -> None:
        from ebtui.core.usecases.review import accept

        selected = self.query_one(ScoreGrid).selected()
        if selected is None:
            self.app.notify("Pick a Team A or Team B score to accept.", severity="warning")
            return
        ctx = self._correctable("This round has no judgment to accept; score it by hand (Enter).")
        if ctx is None:
            return
        round_id, (team, criterion), key = self.round.id, selected, self._key()
        self._save("acceptance", lambda: accept(ctx, round_id, team, criterion, "accepted in the score card",
                                                judgment_key=key), "Accepted as parsed.")

    def action_toggle_raw(self) -> None:
        self.toggle_class("-raw")

    def action_edit(self) -> None:
        self.query_one(ScoreGrid).request_edit()

    @on(ScoreGrid.EditRequested)
    def _edit(self, event: ScoreGrid.EditRequested) -> None:
        from ebtui.core.usecases.review import correct

        judgment, ctx = self.current(), self._correctable("This round has no judgment to correct.")
        if judgment is None or ctx is None:
            return
        parsed = judgment.parsed_scores(event.team).as_dict()[event.criterion]
        current = judgment.active_overrides().get((event.team, event.criterion))
        round_id, team, criterion, key = self.round.id, event.team, event.criterion, self._key()

        def done(result: tuple[int | None, str] | None) -> None:
            if result is not None:
                value, note = result
                self._save("override", lambda: correct(ctx, round_id, team, criterion, value, note,
                                                       clear=value is None, judgment_key=key))

        self.app.push_screen(
            self.edit_dialog(team, criterion, parsed, current.value if current else None,
                             current.note if current else ""),
            done,
        )

    @work(thread=True, exclusive=True, group="override", exit_on_error=False)
    def _save(self, what: str, review: Callable[[], Reviewed], message: str = "Override saved.") -> None:
        """Save a correction through ebtui.core.usecases.review, off the UI thread; a store error is a message."""
        try:
            updated = review().round
        except Exception as exc:  # a store error is reported, never a crash of the card
            self.app.call_from_thread(self.app.notify, f"Could not save the {what}: {exc}", severity="error")
            return
        self.app.call_from_thread(self._saved, updated, message)

    def _saved(self, updated: Round, message: str = "Override saved.") -> None:
        self.show(updated)
        self.post_message(self.OverrideSaved(updated))
        self.app.notify(message)
