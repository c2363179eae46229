"""The score card of one round, on a screen of its own."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Header

from ebtui.core.records import Round
from ebtui.tui.keys import bindings
from ebtui.tui.screens.modals import ScoreEditModal
from ebtui.tui.services import app_context
from ebtui.tui.widgets.footer import Footer
from ebtui.tui.widgets.score_card import ScoreCard, ScoreGrid


class ScoreCardScreen(Screen[Round]):
    """Returns the (possibly corrected) round when dismissed."""

    BINDINGS = bindings("score")

    def __init__(self, round_: Round) -> None:
        super().__init__()
        self.round = round_

    def compose(self) -> ComposeResult:
        yield Header()
        yield ScoreCard(self.round, app_context(self), edit_dialog=ScoreEditModal)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Score card"
        self.query_one(ScoreGrid).focus()

    @on(ScoreCard.OverrideSaved)
    def _saved(self, event: ScoreCard.OverrideSaved) -> None:
        self.round = event.round

    def action_back(self) -> None:
        self.dismiss(self.round)
