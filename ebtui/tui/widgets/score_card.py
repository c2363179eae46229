"""The judgment as a grid (criteria × teams) with totals, justifications, analysis and the raw reply.

A cell can be corrected by hand: the override is saved through the store in a thread worker (the UI never
waits on a file write) and the judge's parsed value stays visible beside it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Markdown, Static

from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, Round, Team
from ebtui.core.safe_text import strip_control

TEAMS: tuple[Team, ...] = ("a", "b")


def _cell(judgment: Judgment, team: Team, criterion: str, colors: dict[str, str]) -> Text:
    parsed = judgment.parsed_scores(team).as_dict()[criterion]
    override = judgment.active_overrides().get((team, criterion))
    if override is not None:
        judge = "—" if parsed is None else str(parsed)
        return Text.assemble((f"{override.value}", "bold"), (" ✎", colors["accent"]), (f" (judge {judge})", "dim"))
    if parsed is None:
        return Text("missing", style=f"bold {colors['error']}")
    return Text(str(parsed))


def _total(judgment: Judgment, team: Team, colors: dict[str, str]) -> Text:
    scores = judgment.effective_scores(team)
    total = scores.total()
    if total is None:
        return Text(f"— ({len(scores.missing())} missing)", style=f"bold {colors['error']}")
    return Text(f"{total} / 70", style="bold")


class ScoreGrid(DataTable):
    """Criteria down, teams across; Enter (or e) on a team's cell asks to edit it."""

    DEFAULT_CSS = """
    ScoreGrid { height: auto; max-height: 12; }
    """

    class EditRequested(Message):
        def __init__(self, team: Team, criterion: str) -> None:
            super().__init__()
            self.team = team
            self.criterion = criterion

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="cell", zebra_stripes=True)

    def on_mount(self) -> None:
        self.add_column("Criterion", key="criterion")
        self.add_column("Team A", key="a")
        self.add_column("Team B", key="b")

    def show(self, judgment: Judgment, colors: dict[str, str]) -> None:
        coordinate = self.cursor_coordinate
        self.clear()
        for crit in CRITERIA:
            self.add_row(CRITERION_LABELS[crit], *(_cell(judgment, t, crit, colors) for t in TEAMS), key=crit)
        self.add_row(Text("Total", style="bold"), *(_total(judgment, t, colors) for t in TEAMS), key="total")
        self.cursor_coordinate = coordinate if coordinate.column else coordinate._replace(column=1)

    def _selected(self) -> tuple[Team, str] | None:
        row_key, col_key = self.coordinate_to_cell_key(self.cursor_coordinate)
        if col_key.value in TEAMS and row_key.value in CRITERIA:
            return col_key.value, row_key.value  # type: ignore[return-value]
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
    """A round's score card. `store` may be None (read-only); edits go through `store.apply_override`."""

    DEFAULT_CSS = """
    ScoreCard { height: 1fr; }
    ScoreCard .card-header { padding: 0 1; height: auto; }
    ScoreCard .card-review { padding: 0 1; color: $warning; height: auto; display: none; }
    ScoreCard .card-review.-shown { display: block; }
    ScoreCard #card-main { width: 1fr; padding: 0 1; }
    ScoreCard #card-raw { width: 1fr; border-left: vkey $panel-lighten-2; padding: 0 1; display: none; }
    ScoreCard.-raw #card-raw { display: block; }
    ScoreCard .card-heading { text-style: bold; color: $primary; margin-top: 1; }
    ScoreCard Markdown { margin: 0; padding: 0; }
    """

    BINDINGS = [
        Binding("e", "edit", "Edit score", id="scorecard.edit"),
        Binding("r", "toggle_raw", "Raw reply", id="scorecard.raw"),
    ]

    class OverrideSaved(Message):
        def __init__(self, round_: Round) -> None:
            super().__init__()
            self.round = round_

    def __init__(self, round_: Round, store: Any | None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.round = round_
        self.store = store

    def compose(self) -> ComposeResult:
        yield Static("", classes="card-header")
        yield Static("", classes="card-review")
        with Horizontal():
            with VerticalScroll(id="card-main"):
                yield ScoreGrid(id="score-grid")
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
        judgment = r.judgment or Judgment()
        header = Text.assemble(
            (strip_control(r.dilemma_title or r.dilemma_id), "bold"), "  ",
            (f"Team A {strip_control(r.team_a_model)} · Team B {strip_control(r.team_b_model)} · "
             f"judge {strip_control(r.judge_model)}", "dim"), "  ",
            (f"[{r.status.value}]", "italic"),
        )
        if r.judgment is None:
            header.append("  no judgment", style="bold")
        elif judgment.parse_method:
            header.append(f"  read as: {judgment.parse_method}", style="dim")
        self.query_one(".card-header", Static).update(header)
        reasons = list(judgment.review_reasons)
        missing = sum(len(judgment.effective_scores(t).missing()) for t in TEAMS)
        review = self.query_one(".card-review", Static)
        if r.judgment is not None and judgment.effective_needs_review():
            lines = ["⚠ needs review" + (f" — {missing} score(s) missing" if missing else "")]
            lines += [f"  • {strip_control(reason)}" for reason in reasons]
            lines.append("  Select a cell and press Enter (or e) to set a score by hand.")
            review.update(Text("\n".join(lines)))
            review.add_class("-shown")
        else:
            review.remove_class("-shown")
        self.query_one(ScoreGrid).show(judgment, self._colors())
        self.query_one("#just-a", Markdown).update(strip_control(judgment.team_a_justification) or "*none given*")
        self.query_one("#just-b", Markdown).update(strip_control(judgment.team_b_justification) or "*none given*")
        self.query_one("#analysis", Markdown).update(strip_control(judgment.overall_analysis) or "*none given*")
        self.query_one("#raw-reply", Static).update(Text(strip_control(judgment.raw_response) or "(empty)"))

    def action_toggle_raw(self) -> None:
        self.toggle_class("-raw")

    def action_edit(self) -> None:
        self.query_one(ScoreGrid).request_edit()

    @on(ScoreGrid.EditRequested)
    def _edit(self, event: ScoreGrid.EditRequested) -> None:
        from ebtui.tui.screens.modals import ScoreEditModal

        if self.round.judgment is None:
            self.app.notify("This round has no judgment to correct.", severity="warning")
            return
        if self.store is None:
            self.app.notify("Read-only: no results store.", severity="warning")
            return
        judgment = self.round.judgment
        parsed = judgment.parsed_scores(event.team).as_dict()[event.criterion]
        current = judgment.active_overrides().get((event.team, event.criterion))
        team, criterion = event.team, event.criterion

        def done(result: tuple[int | None, str] | None) -> None:
            if result is not None:
                self._save_override(team, criterion, result[0], result[1])

        self.app.push_screen(
            ScoreEditModal(team, criterion, parsed, current.value if current else None,
                           current.note if current else ""),
            done,
        )

    @work(thread=True, exclusive=True, group="override", exit_on_error=False)
    def _save_override(self, team: Team, criterion: str, value: int | None, note: str) -> None:
        try:
            updated = self.store.apply_override(self.round.id, team, criterion, value, note)
        except Exception as exc:  # a store error is reported, never a crash of the card
            self.app.call_from_thread(self.app.notify, f"Could not save the override: {exc}", severity="error")
            return
        self.app.call_from_thread(self._saved, updated)

    def _saved(self, updated: Round) -> None:
        self.show(updated)
        self.post_message(self.OverrideSaved(updated))
        self.app.notify("Override saved.")
