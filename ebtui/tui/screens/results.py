"""Saved rounds from the store's index, filtered in memory; Enter opens one.

A big store opens fast: the newest page comes first (`query(limit=PAGE_ROWS, newest_first=True)`) and is on
screen while the rest of the index is read in the same thread worker; the table then grows a page at a
time as the cursor nears its end (or with m), since a DataTable measures every row it holds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Select, Static

from ebtui.core.records import RoundStatus
from ebtui.core.safe_text import strip_control
from ebtui.tui.actions import AppActions
from ebtui.tui.keys import bindings
from ebtui.tui.services import app_context
from ebtui.tui.widgets.footer import Footer

if TYPE_CHECKING:
    from ebtui.core.usecases.rounds import IndexEntry

#: (label, key, fixed width or None for a share of what is left, priority: dropped first when narrow)
COLUMNS = (("When", "when", 16, 0), ("Dilemma", "dilemma", None, 0), ("Team A", "a", None, 0),
           ("Team B", "b", None, 0), ("Judge", "judge", None, 0), ("A : B", "totals", 7, 0),
           ("Status", "status", 10, 0), ("Review", "review", 8, 1), ("Tournament", "tournament", None, 2))
#: a column shared out of the leftover width never gets less than this (a name cut to 2-3 letters says nothing)
MIN_FLEX = 8
#: rows put in the table at once: a DataTable measures every cell it holds, so the first page is small (about
#: three screens, on screen fast) and more are added as the cursor nears the end (or with m)
PAGE_ROWS = 100
#: rows from the end of the table at which the next page is added
PREFETCH_ROWS = 30


def column_layout(width: int) -> list[tuple[str, str, int]]:
    """The columns that fit `width` cells, with their widths: fixed ones as they are, the rest sharing what is
    left, never under MIN_FLEX. When that does not fit, the tournament column goes, then the review column
    (its flag moves into the status) and the date loses its year."""
    for level in (0, 1, 2):
        cols = [c for c in COLUMNS if c[3] <= 2 - level]
        compact = level == 2
        fixed = {k: (11 if k == "when" and compact else 12 if k == "status" and compact else w)
                 for _, k, w, _ in cols if w is not None}
        flex = [k for _, k, w, _ in cols if w is None]
        left = width - 2 - sum(fixed.values()) - 2 * len(cols)  # 2: the scrollbar; 2 per column: cell padding
        if left // len(flex) >= MIN_FLEX or compact:
            share, extra = divmod(max(left, MIN_FLEX * len(flex)), len(flex))
            widths = {k: share + (1 if i < extra else 0) for i, k in enumerate(flex)}
            widths.update(fixed)
            return [(label, k, widths[k]) for label, k, _, _ in cols]
    raise AssertionError("unreachable")


REVIEW_CHOICES = [("needs review", "yes"), ("reviewed / fine", "no")]


@dataclass(frozen=True)
class ResultFilters:
    """Substring filters (case-insensitive) over index entries; None/"" means any."""

    model: str = ""
    dilemma: str = ""
    judge: str = ""
    tournament: str = ""
    status: str | None = None
    needs_review: bool | None = None

    def matches(self, e: IndexEntry) -> bool:
        def has(value: object, needle: str) -> bool:
            return needle in str(value or "").lower()

        if self.model and not any(has(e.get(k), self.model) for k in ("team_a", "team_b", "judge")):
            return False
        if self.dilemma and not (has(e.get("dilemma_id"), self.dilemma) or has(e.get("dilemma_title"), self.dilemma)):
            return False
        if self.judge and not has(e.get("judge"), self.judge):
            return False
        if self.tournament and not has(e.get("tournament_id"), self.tournament):
            return False
        if self.status and e.get("status") != self.status:
            return False
        return self.needs_review is None or bool(e.get("needs_review")) == self.needs_review


def filter_entries(entries: Iterable[IndexEntry], filters: ResultFilters) -> list[IndexEntry]:
    if filters == ResultFilters():  # no filter (the browser as F3 opens it): no test per entry on the UI thread
        return list(entries)
    return [e for e in entries if filters.matches(e)]


def _total(e: IndexEntry, team: str) -> str:
    total = e.get(f"total_{team}")
    return "—" if total is None else str(total)


def entry_row(e: IndexEntry, keys: tuple[str, ...] | None = None) -> tuple[Text | str, ...]:
    """A row of the table: the cells of `keys` (default: every column). Without a review column the status
    carries the review flag."""
    s = strip_control
    keys = keys or tuple(c[1] for c in COLUMNS)
    status: Text | str = str(e.get("status") or "")
    if e.get("imported") or re.match(r"eb-[A-Za-z0-9]{1,8}-[0-9a-f]{12}$", str(e.get("id") or "")):
        status = f"{status} ⇩"  # imported from another runner (`ebtui import`); the round view names the source
    if e.get("needs_review") and "review" not in keys:
        status = Text.assemble(str(status), (" ⚠", "bold yellow"))
    cells: dict[str, Text | str] = {
        "when": str(e.get("timestamp") or "")[:16].replace("T", " ")[(5 if "compact" in keys else 0):],
        "dilemma": Text(s(str(e.get("dilemma_id") or ""))),
        "a": Text(s(str(e.get("team_a") or ""))),
        "b": Text(s(str(e.get("team_b") or ""))),
        # a round with several judgments (`ebtui rejudge`) shows how many: "judge ×3"
        "judge": Text.assemble(s(str(e.get("judge") or "")),
                               (f" ×{e['judgments']}" if int(e.get("judgments") or 0) > 1 else "", "bold")),
        "totals": f"{_total(e, 'a')} : {_total(e, 'b')}",
        "status": status,
        "review": Text("⚠ review", style="bold yellow") if e.get("needs_review") else Text(""),
        "tournament": Text(s(str(e.get("tournament_id") or ""))),
    }
    return tuple(cells[k] for k in keys if k != "compact")


def store_lock(node: Screen[None]) -> AbstractContextManager[object]:
    """The app's lock over opening the store and reading its index (EbtuiApp.store_lock), or none."""
    lock = getattr(node.app, "store_lock", None)
    return cast("AbstractContextManager[object]", lock) if lock is not None else nullcontext()


class ResultsScreen(Screen[None]):
    # styles: results.tcss, read with the app's (EbtuiApp.CSS_PATH), not on the first push
    BINDINGS = bindings("results")

    @dataclass
    class EntriesLoaded(Message):
        entries: list[IndexEntry]
        complete: bool = True  # False: only the newest page; the rest follows
        unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason), skipped

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[IndexEntry] = []
        self.shown: list[IndexEntry] = []
        self.matched: list[IndexEntry] = []
        self._debounce: Timer | None = None
        self.limit = PAGE_ROWS
        self.complete = False  # every index entry is loaded (not only the newest page)
        self.unreadable: list[tuple[str, str]] = []  # round files the store could not read (skipped)
        self.column_keys: tuple[str, ...] = ()
        self._layout_width = -1

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield Input(placeholder="model", id="f-model")
            yield Input(placeholder="dilemma", id="f-dilemma")
            yield Input(placeholder="judge", id="f-judge")
            yield Input(placeholder="tournament", id="f-tournament")
            yield Select([(s.value, s.value) for s in RoundStatus], prompt="any status", id="f-status")
            yield Select(REVIEW_CHOICES, prompt="review: any", id="f-review")
        yield Static("Loading…", id="results-count", markup=False)
        yield DataTable(id="results-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Results"
        table = self.query_one(DataTable)
        self._set_columns(self.size.width or self.app.size.width)
        table.focus()
        first = self._first_page_now()
        if first is None:
            self.action_reload()
        else:  # rows in the screen's first frame; the rest of the index once that frame is painted (_loaded)
            self._loaded(self.EntriesLoaded(first, complete=False))

    def _first_page_now(self) -> list[IndexEntry] | None:
        """The newest page, at once on the UI thread, when the app has read the index ahead (it is in memory:
        a few milliseconds) and nothing holds the store; else None (the thread worker reads it)."""
        if not getattr(self.app, "index_read_ahead", False):
            return None
        lock = getattr(self.app, "store_lock", None)
        if lock is None or not lock.acquire(blocking=False):
            return None
        from ebtui.core.usecases.rounds import list_rounds

        try:
            return list_rounds(app_context(self), newest_first=True, limit=PAGE_ROWS, with_unreadable=False).entries
        except Exception:  # noqa: BLE001 - the worker reads it again and says what is wrong
            return None
        finally:
            lock.release()

    def _set_columns(self, width: int) -> bool:
        """Columns for this width (fixed widths: the table then never measures thousands of cells to size
        them). True if they changed."""
        layout = column_layout(width)
        keys = tuple(k for _, k, _ in layout)
        keys += ("compact",) if "review" not in keys else ()
        if keys == self.column_keys and width == self._layout_width:
            return False
        self.column_keys, self._layout_width = keys, width
        self.set_class(width < 110, "-narrow")
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for label, key, w in layout:
            table.add_column(label, key=key, width=w)
        return True

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._layout_width and self._set_columns(event.size.width):
            self.query_one(DataTable).add_rows([entry_row(e, self.column_keys) for e in self.shown])

    def action_reload(self) -> None:
        self.query_one("#results-count", Static).update("Loading…")
        self._load()

    @work(thread=True, exclusive=True, group="results-load", exit_on_error=False)
    def _load(self, shown: list[IndexEntry] | None = None) -> None:
        """The newest page; when there may be more, it is shown and the rest is read once its frame is painted
        (`_loaded` calls this again with `shown`: the page on screen), with the round files that cannot be read.
        """
        from ebtui.core.usecases.rounds import list_rounds, unreadable_rounds

        ctx = app_context(self)
        try:
            if shown is None:
                with store_lock(self):  # the app's warm-up may be reading the index: wait for it, not twice
                    first = list_rounds(ctx, newest_first=True, limit=PAGE_ROWS, with_unreadable=False).entries
                if len(first) == PAGE_ROWS:  # there may be more: this page first, on screen before the rest
                    self.post_message(self.EntriesLoaded(first, complete=False))
                    return
                entries = first
            else:
                entries = list_rounds(ctx, newest_first=True, with_unreadable=False).entries
        except Exception as exc:  # an unreadable store is a message, not a crash
            self.app.call_from_thread(self.notify, f"Could not read the results store: {exc}", severity="error")
            entries = []
        try:
            unreadable = unreadable_rounds(ctx)
        except Exception:  # noqa: BLE001 - the note is extra; the rounds above are what matters
            unreadable = []
        self.post_message(self.EntriesLoaded(entries, unreadable=unreadable))

    @on(EntriesLoaded)
    def _loaded(self, event: EntriesLoaded) -> None:
        first_page_shown = not self.complete and bool(self.shown)
        self.entries = event.entries
        self.complete = event.complete
        if event.complete:
            self.unreadable = event.unreadable
        if first_page_shown and event.complete:
            matched = filter_entries(self.entries, self.current_filters())
            if [e["id"] for e in matched[: len(self.shown)]] == [e["id"] for e in self.shown]:
                self.matched = matched  # the table already holds the right rows: keep it (and the cursor)
                self._show_count()
                return
        self.apply_filters(keep_limit=event.complete)
        if not event.complete:  # the newest page: the rest of the index once its frame is painted
            self.call_after_refresh(self.call_after_refresh, self._load, event.entries)

    def current_filters(self) -> ResultFilters:
        def text(id_: str) -> str:
            return self.query_one(f"#{id_}", Input).value.strip().lower()

        status = self.query_one("#f-status", Select).value
        review = self.query_one("#f-review", Select).value
        return ResultFilters(
            model=text("f-model"),
            dilemma=text("f-dilemma"),
            judge=text("f-judge"),
            tournament=text("f-tournament"),
            status=None if status is Select.NULL else str(status),
            needs_review=None if review is Select.NULL else review == "yes",
        )

    def apply_filters(self, *, keep_limit: bool = False) -> None:
        if not keep_limit:
            self.limit = PAGE_ROWS
        self.matched = filter_entries(self.entries, self.current_filters())
        self.shown = self.matched[: self.limit]
        table = self.query_one(DataTable)
        table.clear()
        table.add_rows([entry_row(e, self.column_keys) for e in self.shown])
        self._show_count()

    def _show_count(self) -> None:
        if not self.complete:
            count = f"newest {len(self.shown)} rounds shown; reading the rest of the index…"
        else:
            count = f"{len(self.matched)} of {len(self.entries)} rounds"
            if len(self.shown) < len(self.matched):
                count += f" (newest {len(self.shown)} in the table; more as you scroll, or m)"
            if not self.entries and not self.unreadable:
                count = "No saved rounds yet — start one with F2."
            if self.unreadable:
                n = len(self.unreadable)
                names = ", ".join(strip_control(os.path.basename(p)) for p, _ in self.unreadable[:2]) + (", …" if n > 2 else "")
                count += (f"  ·  {n} unreadable file{'s' if n > 1 else ''} skipped ({names}): "
                          "`ebtui store check` names them")
        self.query_one("#results-count", Static).update(count + ("  ·  enter opens a round" if self.shown else ""))

    def action_more(self) -> None:
        """Add the next page of matching rounds to the table (without rebuilding it)."""
        if len(self.shown) >= len(self.matched):
            return
        self.limit += PAGE_ROWS
        page = self.matched[len(self.shown): self.limit]
        self.shown = self.shown + page
        self.query_one(DataTable).add_rows([entry_row(e, self.column_keys) for e in page])
        self._show_count()

    @on(DataTable.RowHighlighted, "#results-table")
    def _near_the_end(self, event: DataTable.RowHighlighted) -> None:
        if event.cursor_row >= len(self.shown) - PREFETCH_ROWS:
            self.action_more()

    @on(Input.Changed)
    def _text_changed(self) -> None:
        # typing fast should filter once, not once per key
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(0.15, self.apply_filters)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.apply_filters()
        self.query_one(DataTable).focus()

    @on(Select.Changed)
    def _select_changed(self) -> None:
        self.apply_filters()

    @on(DataTable.RowSelected, "#results-table")
    def _open(self, event: DataTable.RowSelected) -> None:
        index = event.cursor_row
        if not 0 <= index < len(self.shown):
            return
        from ebtui.tui.screens.round_view import RoundScreen

        self.app.push_screen(RoundScreen(self.shown[index]["id"]), lambda _: self.action_reload())

    def action_back(self) -> None:
        cast(AppActions, self.app).action_new_round()
