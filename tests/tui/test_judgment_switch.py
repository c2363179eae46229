"""The score card switches between a round's judgments (j) and corrects the one shown."""

from __future__ import annotations

from functools import partial

from ebtui.core.records import CRITERIA, Judgment, Scores
from ebtui.tui.widgets.score_card import ScoreCard, ScoreGrid
from tests.support.factories import fixed_round
from tests.support.tui_helpers import edit_score, save_score, score_card_open, wait_until

_wait_until = partial(wait_until, timeout=30.0)


async def test_switch_between_judgments_and_override_the_shown_one(make_app, store) -> None:
    round_ = fixed_round()
    round_.extra_judgments = [Judgment(team_a_scores=Scores(**dict.fromkeys(CRITERIA, 2)),
                                       team_b_scores=Scores(**dict.fromkeys(CRITERIA, 9)), judge_model="judge-two",
                                       key="j-second", origin="rejudge", order="ba", repeat=1)]
    async with score_card_open(make_app, store, round_) as (app, pilot):
        card = app.screen.query_one(ScoreCard)
        grid = card.query_one(ScoreGrid)
        first = str(grid.get_cell("consistency", "a"))
        assert "judgment 1 of 2" in str(card.query_one(".card-header").render())
        await pilot.press("j")
        await pilot.pause()
        header = str(card.query_one(".card-header").render())
        assert "judgment 2 of 2" in header and "Team B read first" in header and "judge-two" in header
        assert str(grid.get_cell("consistency", "a")).startswith("2") and first != str(grid.get_cell("consistency", "a"))
        grid.focus()
        grid.move_cursor(row=list(CRITERIA).index("consistency"), column=1)
        modal = await edit_score(app, pilot)
        await save_score(app, pilot, modal, "5", "second judge misread")
        await _wait_until(lambda: not store.load_round(round_.id).extra_judgments[0].active_overrides() == {})
        saved = store.load_round(round_.id)
        assert saved.extra_judgments[0].effective_scores("a").consistency == 5
        assert saved.judgment is not None and not saved.judgment.overrides  # the round's own untouched
        await pilot.press("j")
        await pilot.pause()
        assert "judgment 1 of 2" in str(card.query_one(".card-header").render())


def test_the_browser_row_shows_how_many_judgments_a_round_has(store) -> None:
    from ebtui.tui.screens.results import entry_row

    round_ = fixed_round()
    store.save_round(round_)
    one = store.query()[0]
    assert "×" not in str(entry_row(one)[4])
    round_.extra_judgments = [Judgment(judge_model="judge-two", key=f"j-{i}", origin="rejudge") for i in range(2)]
    store.save_round(round_)
    entry = store.query()[0]
    assert entry["judgments"] == 3
    assert str(entry_row(entry)[4]).endswith("×3")


async def test_the_analysis_tab_lists_the_judge_bias_tables(make_app, store) -> None:
    from textual.widgets import DataTable, Select

    from tests.support.factories import write_snapshot_tournament
    from tests.support.tui_helpers import open_snapshot_tournament

    write_snapshot_tournament(store)
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await open_snapshot_tournament(app, pilot)
        keys = {t.key for t in screen.analysis["as_judged"]}
        assert {"style_coefficients", "style_models", "judge_order", "agreement_with_own_view", "reliability_alpha",
                "reliability_test_retest", "criteria_structure"} <= keys
        screen.query_one("#analysis-table-select", Select).value = "judge_order"
        await pilot.pause()
        grid = screen.query_one("#analysis-table", DataTable)
        assert grid.row_count == 3  # one row per judge of the trio
        assert "effect" in [str(c.label) for c in grid.columns.values()]
