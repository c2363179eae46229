"""Command palette entries for ebtui's main actions."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ebtui.tui.actions import AppActions


class EbtuiCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = cast(AppActions, self.app)
        return [
            ("New round", "Pick a dilemma and models and start a round (F2)", app.action_new_round),
            ("Browse results", "Saved rounds, filtered by model, dilemma, judge, status (F3)",
             app.action_browse_results),
            ("Tournament", "Plan, run and analyse a tournament from a tournament.toml (F4)",
             app.action_tournament),
            ("Open document", "Load another dilemma .docx", app.action_open_document),
            ("Switch theme", "Pick a colour theme, built-in or from themes/ (ctrl+t)", app.action_change_theme),
            ("Help", "Keys and screens (F1)", app.action_help),
        ]

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, partial(self.app.call_later, callback), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.call_later, callback), help=help_text)
