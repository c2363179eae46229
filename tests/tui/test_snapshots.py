"""Snapshot tests: each screen at 120×40 built from fixed records (no clocks, blink, animations or random ids).

Update after an intended change with `pytest tests/tui/test_snapshots.py --snapshot-update` and look at the
SVGs in __snapshots__ before committing them.
"""

from __future__ import annotations

import asyncio

from textual.pilot import Pilot
from textual.widgets import Input
from tui_helpers import EntriesStore, events_from_round, fixed_round, synthetic_entries

from ebtui.tui.screens.modals import HelpModal, ScoreEditModal
from ebtui.tui.screens.round_view import RoundScreen
from ebtui.tui.screens.score import ScoreCardScreen

SIZE = (120, 40)


async def _settle(pilot: Pilot) -> None:
    app = pilot.app
    await pilot.pause()  # let a just-pushed screen mount its inputs first
    for screen in app.screen_stack:
        for field in screen.query(Input):
            field.cursor_blink = False
    await pilot.pause()
    app.clear_notifications()
    await pilot.pause()


def test_setup_screen(snap_compare, make_app) -> None:
    assert snap_compare(make_app(snapshot=True), terminal_size=SIZE, run_before=_settle)


def test_live_round_screen(snap_compare, make_app) -> None:
    round_ = fixed_round()
    app = make_app(snapshot=True, run_round=lambda request, clients, store: events_from_round(round_))

    async def run(pilot: Pilot) -> None:
        await pilot.press("ctrl+r")
        while getattr(app.screen, "state", "") != "finished":
            await asyncio.sleep(0.05)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_score_card_needing_review(snap_compare, make_app, store) -> None:
    round_ = fixed_round(missing=True)
    store.save_round(round_)
    round_ = store.apply_override(round_.id, "a", "consistency", 6, "read from the prose")
    app = make_app(snapshot=True)

    async def run(pilot: Pilot) -> None:
        app.push_screen(ScoreCardScreen(round_))
        await pilot.pause()
        await pilot.press("r")
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_score_edit_modal(snap_compare, make_app) -> None:
    app = make_app(snapshot=True)

    async def run(pilot: Pilot) -> None:
        app.push_screen(ScoreEditModal("b", "framework_awareness", None, None))
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_results_browser(snap_compare, make_app) -> None:
    app = make_app(snapshot=True, store=EntriesStore(synthetic_entries(60)))

    async def run(pilot: Pilot) -> None:
        await pilot.press("f3")
        while len(getattr(app.screen, "entries", [])) < 60:
            await asyncio.sleep(0.05)
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_round_transcript(snap_compare, make_app) -> None:
    round_ = fixed_round()
    app = make_app(snapshot=True)

    async def run(pilot: Pilot) -> None:
        app.push_screen(RoundScreen(round_.id, round_))
        await pilot.pause()
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_help(snap_compare, make_app) -> None:
    app = make_app(snapshot=True)

    async def run(pilot: Pilot) -> None:
        app.push_screen(HelpModal())
        await _settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)
