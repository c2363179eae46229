"""Snapshot tests of one screen state each, at one size in the default theme: the setup screen at 80x24 and
160x50, the compare view, and the tournament screen's charts of a fixed, pre-built tournament.

Update after an intended change with `pytest tests/snapshots --snapshot-update` and look at the SVGs in
__snapshots__ before committing them."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from ebtui.core.store import ResultsStore
from ebtui.tui.screens.compare import CompareScreen
from tests.support.factories import write_snapshot_tournament
from tests.support.tui_helpers import (
    on_rounding_boundary,
    open_snapshot_tournament,
    pairs_tournament,
    settle,
    wait_until,
)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_setup_snapshot(snap_compare, make_app, size: tuple[int, int]) -> None:
    assert snap_compare(make_app(snapshot=True), terminal_size=size, run_before=settle)


def test_compare_view_snapshot(snap_compare, make_app, store: ResultsStore) -> None:
    rounds = pairs_tournament(store)
    app = make_app(snapshot=True)
    screen_result: list[Any] = []

    async def run(pilot) -> None:  # noqa: ANN001 - Textual's Pilot
        screen = CompareScreen(rounds, "m1", "m3")
        app.push_screen(screen)
        await wait_until(lambda: screen.result is not None, timeout=60)
        screen_result.append(screen.result)
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 40), run_before=run)
    got = screen_result[0]
    shown = [got["diff"], got["ci_low"], got["ci_high"], *(c["diff"] for c in got["criteria"])]
    assert None not in shown[:3] and not on_rounding_boundary(shown), "the snapshot's figures must not rest on x.xx5"


def test_tournament_screen_charts_snapshot(snap_compare, make_app, store: ResultsStore) -> None:
    write_snapshot_tournament(store)
    app = make_app(snapshot=True)

    async def run(pilot: Pilot) -> None:
        screen = await open_snapshot_tournament(app, pilot)
        screen.query_one(TabbedContent).active = "tab-charts"
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run)
