from __future__ import annotations

from textual.widgets import Input

from ebtui.core.review import needs_review
from ebtui.tui.screens.score import ScoreCardScreen
from ebtui.tui.widgets.score_card import ScoreCard, ScoreGrid
from tests.support.factories import fixed_round
from tests.support.tui_helpers import edit_score, played_round, save_score, score_card_open


async def test_a_missing_score_is_corrected_by_hand(make_app, store) -> None:
    app = make_app(judge_mode="prose")  # the judge answers prose: every score missing
    async with played_round(app) as (pilot, live):
        assert live.state == "finished"
        round_id = live.round.id
        await pilot.press("s")
        await pilot.pause()
        card_screen = app.screen
        assert isinstance(card_screen, ScoreCardScreen)
        card = card_screen.query_one(ScoreCard)
        assert card.query_one(".card-review").has_class("-shown")  # needs review, highlighted
        grid = card_screen.query_one(ScoreGrid)
        assert "missing" in str(grid.get_cell("principle_articulation", "a"))
        # the cursor starts on Team A's first criterion; Enter edits it
        modal = await edit_score(app, pilot)
        # out of range is refused and the dialog stays
        modal.query_one("#score-value", Input).value = "11"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is modal
        assert "1 to 10" in str(modal.query_one("#score-error").render())
        await save_score(app, pilot, modal, "7", "judge gave prose; scored from its text")
        await pilot.pause()
        assert app.screen is card_screen
        saved = store.load_round(round_id)
        overrides = saved.judgment.active_overrides()
        ov = overrides[("a", "principle_articulation")]
        assert ov.value == 7 and ov.note.startswith("judge gave prose")
        assert saved.judgment.team_a_scores.principle_articulation is None  # the parsed value stays missing
        cell = str(grid.get_cell("principle_articulation", "a"))
        assert "7" in cell and "judge —" in cell  # override shown with the parsed value beside it


async def test_raw_reply_toggles_beside_the_card(make_app, store) -> None:
    round_ = fixed_round(texts={"judgment": "RAW [bold red]judge[/] reply"})
    async with score_card_open(make_app, store, round_, size=(140, 45)) as (app, pilot):
        card = app.screen.query_one(ScoreCard)
        raw = card.query_one("#card-raw")
        assert not raw.display
        await pilot.press("r")
        await pilot.pause()
        assert raw.display
        assert "RAW [bold red]judge[/] reply" in str(card.query_one("#raw-reply").render())
        assert "52 / 70" in str(card.query_one(ScoreGrid).get_cell("total", "a"))


PROSE_READ_REPLY = "\n".join([
    "## Team A",
    "Principle articulation: 8", "Consistency was steady across the test, so I'd probably give it 6/10.",
    "Stakeholder recognition: 7", "Uncertainty integration: 6", "Framework awareness: 7",
    "Intellectual honesty: 8", "Constructive engagement: 7",
    "## Team B",
    "| Criterion | Score | Max |", "|---|---|---|",
    "| Principle articulation | 6 | 10 |", "| Consistency | 7 | 10 |", "| Stakeholder recognition | 8 | 10 |",
    "| Uncertainty integration | 7 | 10 |", "| Framework awareness | 9 | 10 |", "| Intellectual honesty | 6 | 10 |",
    "| Constructive engagement | 8 | 10 |",
])


async def test_cells_show_provenance_and_a_guess_is_accepted_as_parsed(make_app, store) -> None:
    from ebtui.core.judgment import parse_judgment

    round_ = fixed_round(texts={"judgment": PROSE_READ_REPLY})
    round_.judgment = parse_judgment(PROSE_READ_REPLY, team_a_id="scripted", team_b_id="local")
    assert round_.judgment.team_a_scores.consistency == 6 and round_.judgment.team_b_scores.framework_awareness == 9
    async with score_card_open(make_app, store, round_, size=(140, 50)) as (app, pilot):
        card = app.screen.query_one(ScoreCard)
        grid = card.query_one(ScoreGrid)
        # every cell is marked by how it was read: L labelled line, P prose (open for review), T table
        assert str(grid.get_cell("principle_articulation", "a")).split() == ["8", "L"]
        assert str(grid.get_cell("consistency", "a")).split() == ["6", "P", "?"]
        assert str(grid.get_cell("framework_awareness", "b")).split() == ["9", "T"]
        assert card.query_one(".card-review").has_class("-shown")
        # focus shows the exact source line
        grid.move_cursor(row=1, column=1)
        await pilot.pause()
        shown = str(card.query_one("#cell-source").render())
        assert "prose" in shown and "so I'd probably give it 6/10" in shown
        grid.move_cursor(row=4, column=2)
        await pilot.pause()
        assert "| Framework awareness | 9 | 10 |" in str(card.query_one("#cell-source").render())
        # a accepts the focused guess as parsed: recorded, and the round leaves the review queue
        grid.move_cursor(row=1, column=1)
        await pilot.pause()
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        saved = store.load_round(round_.id).judgment
        assert [(o.kind, o.team, o.criterion, o.value) for o in saved.overrides] == [("accept", "a", "consistency", 6)]
        assert not needs_review(saved)
        assert not card.query_one(".card-review").has_class("-shown")
        assert str(grid.get_cell("consistency", "a")).split() == ["6", "P", "✓"]


async def test_an_override_needs_a_note(make_app, store) -> None:
    round_ = fixed_round(missing=True)
    async with score_card_open(make_app, store, round_, size=(140, 50)) as (app, pilot):
        modal = await edit_score(app, pilot)
        modal.query_one("#score-value", Input).value = "7"
        await pilot.click("#save")
        await pilot.pause()
        assert app.screen is modal  # refused: no note
        assert "note is required" in str(modal.query_one("#score-error").render())
        assert modal.query_one("#score-note", Input).has_focus  # the note field is where to type next
        modal.query_one("#score-note", Input).value = "the judge gave prose only"
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        saved = store.load_round(round_.id).judgment
        assert saved.active_overrides()[("a", "principle_articulation")].value == 7
        assert needs_review(saved)  # 13 scores still missing


async def test_the_live_screen_reopens_the_card_with_the_override_made_on_it(make_app, store) -> None:
    app = make_app(judge_mode="prose")  # every score missing
    async with played_round(app) as (pilot, live):
        assert live.state == "finished"
        await pilot.press("s")
        await pilot.pause()
        modal = await edit_score(app, pilot)
        await save_score(app, pilot, modal, "6", "scored from the prose")
        await pilot.pause()
        await pilot.press("escape")  # back to the live screen
        await pilot.pause()
        assert app.screen is live
        assert live.round is not None and live.round.judgment is not None
        assert live.round.judgment.effective_scores("a").principle_articulation == 6
        await pilot.press("s")  # the card again: it shows the override, not the round as first finished
        await pilot.pause()
        cell = str(app.screen.query_one(ScoreGrid).get_cell("principle_articulation", "a"))
        assert "6" in cell and "judge —" in cell
