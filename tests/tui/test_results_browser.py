from __future__ import annotations

import threading
import time
from typing import Any

from textual.widgets import Input, Select, TabbedContent

from ebtui.tui.screens.results import PAGE_ROWS, PREFETCH_ROWS, ResultFilters, filter_entries
from ebtui.tui.screens.round_view import RoundScreen
from ebtui.tui.widgets.score_card import ScoreCard
from tests.support.factories import fixed_round
from tests.support.tui_helpers import EntriesStore, results_open, synthetic_entries, wait_until


def test_filters_match_like_the_store_fields() -> None:
    entries = synthetic_entries(300)
    assert len(filter_entries(entries, ResultFilters())) == 300
    only = filter_entries(entries, ResultFilters(model="gemini", status="complete", needs_review=False))
    assert only and all("gemini" in (e["team_a"], e["team_b"], e["judge"]) for e in only)
    assert all(e["status"] == "complete" and not e["needs_review"] for e in only)
    by_judge = filter_entries(entries, ResultFilters(judge="local", dilemma="d3"))
    assert by_judge and all(e["judge"] == "local" and e["dilemma_id"].lower().startswith("d3") for e in by_judge)


async def test_browser_stays_responsive_with_3000_rounds(make_app) -> None:
    entries = synthetic_entries(3000)
    app = make_app(store=EntriesStore(entries))
    async with results_open(app, (140, 40)) as (pilot, screen, table):
        await wait_until(lambda: len(screen.entries) == 3000)
        assert table.row_count == PAGE_ROWS
        assert "3000 of 3000" in str(screen.query_one("#results-count").render())
        screen.query_one("#f-model", Input).focus()
        await pilot.pause()
        keys = []
        for ch in "claude":  # every keystroke is answered promptly (the filter runs once, after typing)
            t0 = time.perf_counter()
            await pilot.press(ch)
            keys.append(time.perf_counter() - t0)
        start = time.perf_counter()
        expected = filter_entries(entries, ResultFilters(model="claude"))
        want = sorted(e["id"] for e in expected)
        await wait_until(lambda: sorted(e["id"] for e in screen.matched) == want)
        await pilot.pause()
        elapsed = time.perf_counter() - start
        assert table.row_count == min(PAGE_ROWS, len(expected))
        assert max(keys) < 1.0, f"slow keystrokes: {keys}"
        assert elapsed < 2.0, f"filtering 3000 rounds took {elapsed:.2f}s"
        table.focus()
        await pilot.press("m")
        assert table.row_count == min(2 * PAGE_ROWS, len(expected))
        screen.query_one("#f-review", Select).value = "yes"
        await pilot.pause()
        flagged = filter_entries(entries, ResultFilters(model="claude", needs_review=True))
        assert table.row_count == min(PAGE_ROWS, len(flagged))
        assert [e["id"] for e in screen.shown] == [e["id"] for e in screen.matched[:PAGE_ROWS]]


async def test_find_a_saved_round_and_open_it(make_app, store) -> None:
    store.save_round(fixed_round(round_id="r-aaaaaaaaaaaa", dilemma_index=0))
    store.save_round(fixed_round(round_id="r-bbbbbbbbbbbb", dilemma_index=1, missing=True))
    app = make_app()
    async with results_open(app, (140, 40)) as (pilot, screen, table):
        await wait_until(lambda: table.row_count == 2)
        screen.query_one("#f-dilemma", Input).value = "D2"
        await wait_until(lambda: table.row_count == 1)
        table.focus()
        await pilot.press("enter")
        await wait_until(lambda: isinstance(app.screen, RoundScreen) and app.screen.round is not None)
        round_screen = app.screen
        await pilot.pause()
        transcript = round_screen.query_one("#transcript-body")
        texts = " ".join(str(w.render()) for w in transcript.query(".transcript-heading"))
        for label in ("Presentation", "Response", "Rebuttal", "Consistency test", "Judgment"):
            assert label in texts
        await pilot.press("c")
        await pilot.pause()
        assert round_screen.query_one(TabbedContent).active == "card"
        card = round_screen.query_one(ScoreCard)
        assert card.round.id == "r-bbbbbbbbbbbb"
        assert card.query_one(".card-review").has_class("-shown")


async def test_the_newest_page_shows_before_the_whole_index_is_read(make_app) -> None:
    entries = synthetic_entries(2 * PAGE_ROWS + 100)
    gate = threading.Event()
    store = EntriesStore(entries, full_query_gate=gate)
    app = make_app(store=store)
    async with results_open(app, (140, 40)) as (pilot, screen, table):
        await wait_until(lambda: table.row_count == PAGE_ROWS)
        assert not screen.complete and store.calls[0] == PAGE_ROWS
        newest = max(entries, key=lambda e: (e["ts"], e["id"]))
        assert screen.shown[0]["id"] == newest["id"]
        assert "reading the rest" in str(screen.query_one("#results-count").render())
        table.move_cursor(row=10)
        gate.set()
        await wait_until(lambda: screen.complete)
        await pilot.pause()
        assert f"{len(entries)} of {len(entries)}" in str(screen.query_one("#results-count").render())
        assert table.row_count == PAGE_ROWS and table.cursor_row == 10  # the table was kept, not rebuilt
        # nearing the end of the table adds the next page
        table.focus()
        table.move_cursor(row=PAGE_ROWS - PREFETCH_ROWS)
        await pilot.pause()
        assert table.row_count == 2 * PAGE_ROWS
        assert [e["id"] for e in screen.shown] == [e["id"] for e in screen.matched[: 2 * PAGE_ROWS]]


def test_columns_stay_legible_at_80_and_use_the_width_at_160() -> None:
    from ebtui.tui.screens.results import MIN_FLEX, column_layout

    for width in (80, 100, 120, 160, 200):
        layout = column_layout(width)
        assert sum(w + 2 for _, _, w in layout) + 2 <= width, width  # fits without a horizontal scroll
        assert all(w >= min(len(label), MIN_FLEX) for label, _, w in layout), (width, layout)
        assert {"when", "dilemma", "a", "b", "judge", "totals", "status"} <= {k for _, k, _ in layout}
    wide = dict((k, w) for _, k, w in column_layout(160))
    assert "tournament" in wide and wide["a"] >= 18  # the width goes to the names
    assert sum(w + 2 for w in wide.values()) + 2 >= 150


async def test_browser_at_80x24_shows_readable_headers_and_filters(make_app) -> None:
    entries = synthetic_entries(300)
    app = make_app(store=EntriesStore(entries))
    async with results_open(app, (80, 24)) as (pilot, screen, table):
        await wait_until(lambda: table.row_count > 0 and screen.complete)
        await pilot.pause()
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[:5] == ["When", "Dilemma", "Team A", "Team B", "Judge"]
        assert all(c.width >= min(len(str(c.label)), 8) for c in table.columns.values())
        for inp in screen.query(Input):
            assert inp.content_size.width >= 10, (inp.id, inp.content_size)
        # flagged rounds still say so without the review column
        flagged = next(i for i, e in enumerate(screen.shown) if e["needs_review"])
        assert "⚠" in str(table.get_row_at(flagged)[-1])
        await pilot.resize_terminal(160, 50)
        await pilot.pause()
        assert [str(c.label) for c in table.columns.values()][-1] == "Tournament"
        assert table.row_count == len(screen.shown)


def test_warm_up_reads_an_existing_index_ahead_and_creates_no_store(make_app, tmp_path) -> None:
    """A real session reads the store's index after the first frame (so F3's first page does not wait for
    index.json), holding the lock the browser's load takes; where there is no store yet, nothing is opened."""

    class Watched(EntriesStore):
        def query(self, newest_first: bool = False, limit: int | None = None, **filters: Any) -> list[dict[str, Any]]:
            assert app.store_lock.locked(), "the read-ahead must hold the app's store lock"
            return super().query(newest_first, limit, **filters)

    absent = Watched(synthetic_entries(5))
    absent.root = tmp_path / "no-store-yet"
    app = make_app(store=absent)
    app._warm_store()
    assert absent.calls == [] and not absent.root.exists()

    present = Watched(synthetic_entries(5))
    present.root = tmp_path / "store"
    present.root.mkdir()
    (present.root / "index.json").write_text("{}")
    app = make_app(store=present)
    app._warm_store()
    assert present.calls == [1] and not app.store_lock.locked()


async def test_with_the_index_read_ahead_the_newest_page_is_in_the_first_frame(make_app) -> None:
    """Once the warm-up has read the index, F3 puts the newest page in the table as the screen mounts (no
    "Loading…" frame), and reads the rest after that frame; while something holds the store, the thread
    worker reads the page as before (the UI thread never waits for the lock)."""
    from ebtui.tui.screens.results import ResultsScreen

    entries = synthetic_entries(PAGE_ROWS + 50)
    gate = threading.Event()
    store = EntriesStore(entries, full_query_gate=gate)
    app = make_app(store=store)
    app.index_read_ahead = True
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await app.push_screen(ResultsScreen())  # pushed and mounted: the rest is read after its first frame
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        table = screen.query_one("#results-table")
        assert table.row_count == PAGE_ROWS and store.calls == [PAGE_ROWS]
        newest = max(entries, key=lambda e: (e["ts"], e["id"]))
        assert screen.shown[0]["id"] == newest["id"]
        gate.set()
        await wait_until(lambda: screen.complete)
        assert store.calls == [PAGE_ROWS, None]  # the rest, once; the page is not read twice
        assert f"{len(entries)} of {len(entries)}" in str(screen.query_one("#results-count").render())
        await app.pop_screen()
        store.calls.clear()
        with app.store_lock:  # the warm-up (or a reload) is reading the store
            await app.push_screen(ResultsScreen())
            assert app.screen.query_one("#results-table").row_count == 0 and store.calls == []
        await wait_until(lambda: app.screen.complete)
        assert app.screen.query_one("#results-table").row_count == PAGE_ROWS
        assert store.calls == [PAGE_ROWS, None]  # the worker's page, then the rest
