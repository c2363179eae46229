"""The footer recomposes when the keys it shows change, and only then (a focus change between panes with the
same keys used to rebuild every key widget while text streamed)."""

from __future__ import annotations

import asyncio

from ebtui.core.events import PhaseStarted, RoundFinished, TextDelta
from ebtui.core.records import PhaseType
from ebtui.tui.screens.live import LiveRoundScreen
from ebtui.tui.widgets.footer import Footer
from ebtui.tui.widgets.role_pane import PaneScroll
from tests.support.factories import fixed_round
from tests.support.tui_helpers import started_round, wait_until


def _keys(screen) -> list[tuple[str, str, bool]]:
    """The keys the footer shows: (key, description, enabled), read from its key widgets."""
    footer = screen.query_one(Footer)
    return [(k.key, k.description, not k.disabled) for k in footer.query("FooterKey")]


async def test_focus_between_panes_keeps_the_footer_and_a_new_key_appears_when_the_round_ends(make_app) -> None:
    round_ = fixed_round()
    finish = asyncio.Event()

    async def events():
        yield PhaseStarted(round_.id, PhaseType.PRESENTATION, "scripted")
        while not finish.is_set():
            yield TextDelta(round_.id, PhaseType.PRESENTATION, "the keeper weighs duty against mercy ")
            await asyncio.sleep(0.005)
        yield RoundFinished(round_)

    async with started_round(make_app, events) as (pilot, screen):
        app = pilot.app
        assert isinstance(screen, LiveRoundScreen)
        await wait_until(lambda: screen.view(PhaseType.PRESENTATION).tokens > 0 and _keys(screen))
        shown = _keys(screen)
        assert any(desc == "Cancel round" for _, desc, _ in shown)
        assert not any(desc == "Score card" for _, desc, _ in shown)  # no round to score yet
        widgets = list(screen.query_one(Footer).query("FooterKey"))
        for _ in range(3):
            await pilot.press("tab")
            await pilot.pause()
        assert isinstance(app.focused, PaneScroll)
        await asyncio.sleep(0.2)
        assert list(screen.query_one(Footer).query("FooterKey")) == widgets  # the same widgets: not rebuilt
        assert _keys(screen) == shown
        finish.set()
        await wait_until(lambda: screen.state == "finished")
        await wait_until(lambda: any(desc == "Score card" for _, desc, _ in _keys(screen)))
        assert not any(desc == "Cancel round" for _, desc, _ in _keys(screen))
