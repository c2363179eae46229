"""The results browser names what it could not read (a visible note beside the count, not only a toast),
and still shows every readable round."""

from __future__ import annotations

import os

from tests.support.factories import fixed_round
from tests.support.tui_helpers import results_open, wait_until


async def test_a_symlink_loop_in_rounds_is_named_and_the_good_rounds_are_shown(make_app, store) -> None:
    store.save_round(fixed_round(round_id="r-aaaaaaaaaaaa", dilemma_index=0))
    store.save_round(fixed_round(round_id="r-bbbbbbbbbbbb", dilemma_index=1))
    store.flush()
    os.symlink("loop.json", store.rounds_dir / "loop.json")
    app = make_app()
    async with results_open(app, (160, 40)) as (pilot, screen, table):
        await wait_until(lambda: table.row_count == 2 and screen.unreadable)
        count = str(screen.query_one("#results-count").render())
        assert "2 of 2 rounds" in count
        assert "1 unreadable file skipped (loop.json)" in count and "ebtui store check" in count
        assert screen.unreadable[0][1].startswith("cannot read:")


async def test_the_rounds_are_shown_when_looking_for_unreadable_files_fails(make_app, store,
                                                                            monkeypatch) -> None:
    store.save_round(fixed_round(round_id="r-aaaaaaaaaaaa", dilemma_index=0))
    store.save_round(fixed_round(round_id="r-bbbbbbbbbbbb", dilemma_index=1))
    store.flush()
    looked: list[bool] = []

    def unreadable(*, deep: bool = True) -> list[tuple[str, str]]:
        looked.append(deep)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store, "unreadable", unreadable)
    app = make_app()
    async with results_open(app, (160, 40)) as (pilot, screen, table):
        await wait_until(lambda: table.row_count == 2 and screen.complete)
        await pilot.pause()
        count = str(screen.query_one("#results-count").render())
        assert looked and "2 of 2 rounds" in count and "unreadable" not in count
        assert screen.unreadable == [] and not app._notifications  # the note is extra: no error either
