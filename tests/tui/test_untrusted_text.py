"""Model output is shown as text: no Rich markup interpreted, no terminal control sequences passed on."""

from __future__ import annotations

import html
import re

from ebtui.core.records import PhaseType
from ebtui.tui.widgets.score_card import ScoreCard
from tests.support.factories import fixed_round
from tests.support.tui_helpers import replayed_round, score_card_open

HOSTILE = (
    "[bold red]x[/] and [link=http://evil]y[/link] "
    "\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07clip \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ nul\x00byte "
    + "L" * 10_000
)
CONTROL = ("\x1b", "\x00", "\x07", "\x9b", "\x9d")


def _screen_text(app) -> str:
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


async def test_hostile_model_text_is_inert_in_the_live_panes(make_app) -> None:
    round_ = fixed_round(texts={"presentation": HOSTILE, "response": HOSTILE})
    round_.judgment.team_a_justification = HOSTILE
    async with replayed_round(make_app, round_) as (pilot, screen):
        app = pilot.app
        for scroller in screen.query("RolePane VerticalScroll"):
            scroller.release_anchor()
            scroller.scroll_home(animate=False)
        await pilot.pause()
        for pt in (PhaseType.PRESENTATION, PhaseType.RESPONSE):
            text = screen.view(pt).text
            assert not any(c in text for c in CONTROL)
            assert "[bold red]x[/]" in text and "[link=http://evil]y[/link]" in text
        shown = _screen_text(app)
        assert not any(c in shown for c in CONTROL)
        # Rich markup was not interpreted: the brackets are on screen as typed
        assert "[bold red]x[/]" in shown


async def test_hostile_text_on_the_score_card_is_literal(make_app, store) -> None:
    round_ = fixed_round(texts={"judgment": HOSTILE})
    round_.judgment.overall_analysis = HOSTILE
    async with score_card_open(make_app, store, round_) as (app, pilot):
        await pilot.press("r")
        await pilot.pause()
        card = app.screen.query_one(ScoreCard)
        raw = str(card.query_one("#raw-reply").render())
        assert "[bold red]x[/]" in raw and not any(c in raw for c in CONTROL)
        analysis = card.query_one("#analysis").source
        assert not any(c in analysis for c in CONTROL)
