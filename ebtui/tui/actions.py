"""The app-wide actions screens and the command palette call (EbtuiApp has them): a protocol, so that the
modules the app imports need not import the app back."""

from __future__ import annotations

from typing import Protocol


class AppActions(Protocol):
    def action_new_round(self) -> None: ...

    def action_browse_results(self) -> None: ...

    def action_tournament(self) -> None: ...

    def action_open_document(self) -> None: ...

    def action_change_theme(self) -> None: ...

    def action_help(self) -> None: ...
