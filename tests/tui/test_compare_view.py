"""The Analysis tab's pairwise matrix and rank intervals, and the compare view (two models on one dilemma, side by
side), driven with Textual's pilot over a tournament generated from a planted truth (tests/support/sim_designs.py)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable, Input, Select, Static, TabbedContent

from ebtui.core.analysis import analyse_fit
from ebtui.core.store import ResultsStore
from ebtui.tui.screens.compare import CompareScreen
from ebtui.tui.screens.tournament import TournamentScreen
from ebtui.tui.widgets.pairwise_view import PairwiseView, render_ranks_and_matrix
from tests.support.sim_designs import equal_world, play, round_robin
from tests.support.tui_helpers import pairs_tournament, wait_until


def _plain(widget: Static) -> str:
    content = widget.render()
    return content.plain if isinstance(content, Text) else str(content)


def test_matrix_text_marks_significant_cells_and_blank_pairs() -> None:
    truth = equal_world(3)
    truth.skill = {"m1": 7.6, "m2": 6.4, "m3": 6.3}
    rounds = play(truth, round_robin(list(truth.skill), list(truth.skill), 4), seed=1)
    text = render_ranks_and_matrix(analyse_fit(rounds, families=truth.family, replicates=200).tables).plain
    assert "Ranks (1 = best" in text and "Pairwise: row − column" in text
    row_m1 = next(line for line in text.splitlines() if line.strip().startswith("m1") and "*" in line)
    assert row_m1.count("*") == 2  # m1 is significantly better than both others
    two = play(truth, round_robin(list(truth.skill), list(truth.skill), 2), seed=1)
    blank = render_ranks_and_matrix(analyse_fit(two, families=truth.family, replicates=50).tables).plain
    matrix = [line for line in blank.splitlines() if line.strip()[:2] in ("m1", "m2", "m3") and "·" in line]
    assert len(matrix) == 3 and not any("*" in line for line in matrix)  # no test: no significance mark
    assert "fewer than 3 dilemmas" in blank


async def test_analysis_tab_shows_pairs_and_enter_opens_the_compare_view(make_app, store: ResultsStore) -> None:
    pairs_tournament(store)
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        screen = TournamentScreen()
        app.push_screen(screen)
        await wait_until(lambda: len(screen.saved) == 1, timeout=30)
        screen.query_one("#tournament-path", Input).cursor_blink = False
        screen.query_one(TabbedContent).active = "tab-saved"
        await pilot.pause()
        screen.query_one("#saved-tournaments", DataTable).focus()
        await pilot.press("enter")
        view = screen.query_one(PairwiseView)
        await wait_until(lambda: len(view.pairs) == 3, timeout=60)
        text = _plain(view.query_one("#pairwise-text", Static))
        assert "rank  1" in text and "m1" in text
        assert "Leave one dilemma out" in text
        grid = view.query_one("#pairwise-list", DataTable)
        grid.focus()
        await pilot.press("enter")  # the first pair: m1 v m2
        await wait_until(lambda: isinstance(app.screen, CompareScreen), timeout=30)
        cmp_screen = app.screen
        assert isinstance(cmp_screen, CompareScreen) and (cmp_screen.a, cmp_screen.b) == ("m1", "m2")
        await wait_until(lambda: cmp_screen.result is not None, timeout=60)
        summary = _plain(cmp_screen.query_one("#compare-summary", Static))
        assert "m1 − m2" in summary and "4 dilemmas both played" in summary
        left = _plain(cmp_screen.query_one("#compare-a", Static))
        right = _plain(cmp_screen.query_one("#compare-b", Static))
        assert left.startswith("m1") and right.startswith("m2")
        assert "[bold red]not markup[/]" in left and "\x1b" not in left  # shown as text, control bytes gone
        assert "Clear principle, well defended." in left and "Judge's reasons" in right
        scores = _plain(cmp_screen.query_one("#compare-scores", Static))
        assert "difference" in scores and "consistency" in scores
        first = cmp_screen.query_one("#compare-dilemma", Select).value
        await pilot.press("n")
        await pilot.pause()
        assert cmp_screen.query_one("#compare-dilemma", Select).value == (first + 1) % len(cmp_screen.sides)
        await pilot.press("escape")
        await wait_until(lambda: app.screen is screen, timeout=10)
