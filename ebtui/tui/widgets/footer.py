"""Textual's footer, recomposed only when what it shows changes.

Textual's `Footer` rebuilds all its keys whenever the screen's bindings may have changed (every focus
change); this one compares what it would show (key, action, description, group, enabled, tooltip, key
display) with what it shows and recomposes only when they differ.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    """A `textual.widgets.Footer` that skips recomposing when the keys it shows are unchanged."""

    _shown: tuple[tuple[object, ...], ...] | None = None

    def _keys(self, screen: Screen[object]) -> tuple[tuple[object, ...], ...]:
        app = self.app
        return tuple(
            (key, binding.action, binding.description, binding.group, enabled, tooltip, binding.tooltip,
             app.get_key_display(binding))
            for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
            if binding.show or key == app.COMMAND_PALETTE_BINDING
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        will_recompose = screen.app.app_focus and self.is_attached and screen is self.screen
        if will_recompose:
            keys = self._keys(screen)
            if self._bindings_ready and keys == self._shown:
                return
            self._shown = keys
        super().bindings_changed(screen)
