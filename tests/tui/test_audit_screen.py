"""The audit screen under Pilot: skip, back and next, the cursor across both teams, resuming where the person
left off, and the message when there is no audit (the keyboard scoring end to end: test_audit_tmux.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ebtui.core.records import CRITERIA
from ebtui.core.store import ResultsStore
from ebtui.core.usecases import audit as uc
from ebtui.core.usecases.context import open_context
from ebtui.tui.screens.audit import AuditScreen
from tests.support.factories import scored_round
from tests.support.tui_helpers import wait_until


def _fill(store: ResultsStore, n: int = 4) -> uc.Audit:
    for i in range(n):
        store.save_round(scored_round(f"r-s{i}", "d1", "alpha", "beta", "gamma", {c: 5 for c in CRITERIA},
                                      {c: 6 for c in CRITERIA}))
    return uc.draw_audit(open_context(store_obj=store), 3, seed=1)


async def test_skip_back_next_and_resume(make_app: Callable[..., Any], store: ResultsStore) -> None:
    audit = _fill(store)
    ctx = open_context(store_obj=store)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await wait_until(lambda: isinstance(app.screen, AuditScreen) and app.screen.item is not None)
        screen = app.screen
        assert screen.index == 0 and screen.cursor == 0
        await pilot.press("tab")  # Team B's first criterion
        assert screen.cursor == len(CRITERIA)
        await pilot.press("7")
        assert screen.given[("b", CRITERIA[0])] == 7 and screen.cursor == len(CRITERIA) + 1
        await pilot.press("s")  # skip: the next judgment, the skipped one recorded
        assert screen.index == 1
        assert uc.load_audit(ctx, audit.id).skipped == [audit.judgments[0].ref]
        await pilot.press("b")
        assert screen.index == 0 and screen.given == {("b", CRITERIA[0]): 7}
        await pilot.press("n", "n")
        assert screen.index == 2
        await pilot.press("escape")
        assert not isinstance(app.screen, AuditScreen)
        # open again: it resumes at the first judgment neither complete nor skipped
        await pilot.press("f5")
        await wait_until(lambda: isinstance(app.screen, AuditScreen) and app.screen.item is not None)
        assert app.screen.index == 1


async def test_no_audit_says_how_to_draw_one(make_app: Callable[..., Any], store: ResultsStore) -> None:
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await wait_until(lambda: isinstance(app.screen, AuditScreen))
        await pilot.pause()
        shown = str(app.screen.query_one("#audit-progress").render())
        assert "ebtui audit draw" in shown
