"""The analyses' columnar source beside the store: `<store>/columns/facts.parquet`, one row per judgment of a
round holding its facts (ebtui.core.analysis.frame.judgment_facts), never a transcript. The round files stay the truth; this
file is a cache of a pure function of them, refreshed round by round from each file's size and mtime in the
store's index (and from the store's save hook within a process), replaced atomically.
Why Parquet, and the staleness rules: docs/STORE.md.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from ebtui.core.analysis import source_read, source_write
from ebtui.core.analysis.frame import (
    FACTS_VERSION,
    NC,
    SLOTS,
    Facts,
)
from ebtui.core.analysis.source_read import arrow_numbers, arrow_table, read_files, rows_of, schema
from ebtui.core.analysis.source_write import StreamedFile, lexicon_stamp
from ebtui.core.liveness import interrupted
from ebtui.core.records import RoundStatus

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import DTypeLike

    from ebtui.core.store import ResultsStore

log = logging.getLogger("ebtui.core.analysis")

FILE = "columns/facts.parquet"
#: rounds the save hook keeps (their bytes as written) until the next sync
SAVED_MAX = 1024


class SyncNote(TypedDict, total=False):
    """What a sync did (`FactsSource.last_sync`): rounds re-read from files, taken from the save hook,
    dropped, whether the whole file was (re)built and whether the index was read."""

    rebuilt: bool
    from_hook: int
    from_files: int
    dropped: int
    index_read: bool


def _release() -> None:
    """Hand memory Arrow's allocator keeps after a read back to the system (it would count as peak)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _indices(rows: Sequence[int] | np.ndarray) -> pa.Array:
    import pyarrow as pa

    return arrow_numbers(np.asarray(rows, dtype=np.int64), pa.int64())


def _fixed(col: pa.ChunkedArray | pa.Array, dtype: DTypeLike, shape: tuple[int, ...]) -> np.ndarray:
    """A fixed-size binary Arrow column as a numpy array [rows, *shape]."""
    arr = col.combine_chunks() if hasattr(col, "combine_chunks") else col
    n = len(arr)
    if n == 0:
        return np.zeros((0, *shape), dtype=dtype)
    width = arr.type.byte_width
    buf = arr.buffers()[1]
    raw = np.frombuffer(buf, dtype=np.uint8)[arr.offset * width:(arr.offset + n) * width]
    out: np.ndarray = raw.view(dtype).reshape(n, *shape).copy()
    return out


def _column(col: pa.ChunkedArray | pa.Array, dtype: DTypeLike) -> np.ndarray:
    """A numeric or boolean Arrow column as a numpy array (from its buffers: to_numpy imports pandas)."""
    arr = col.combine_chunks() if hasattr(col, "combine_chunks") else col
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=dtype)
    buf = arr.buffers()[1]
    if dtype is bool:
        bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
        return bits[arr.offset:arr.offset + n].astype(bool)
    return np.frombuffer(buf, dtype=dtype)[arr.offset:arr.offset + n].copy()


def _valid(arr: pa.Array) -> np.ndarray:
    """An Arrow array's validity as booleans (all True without a validity buffer)."""
    buf = arr.buffers()[0]
    if buf is None:
        return np.ones(len(arr), dtype=bool)
    bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
    return bits[arr.offset:arr.offset + len(arr)].astype(bool)


def facts_of_table(table: pa.Table) -> Facts:
    """Facts from the Parquet table's columns (in its row order)."""

    def strings(name: str) -> np.ndarray:
        """A string column as an object array, each distinct value one str object (most columns repeat a
        few names: 130,000 rows of them would otherwise be 130,000 strings each)."""
        col = table.column(name)
        if not len(col):
            return np.empty(0, dtype=object)
        coded = col.combine_chunks().dictionary_encode()
        values = np.empty(len(coded.dictionary) + 1, dtype=object)
        values[:-1] = coded.dictionary.to_pylist()  # (the last: None, for a null)
        ind = coded.indices
        idx = _column(ind, np.int32)
        if ind.null_count:  # (nulls: the last value; pyarrow's fill_null imports pandas)
            idx[~_valid(ind)] = len(values) - 1
        out: np.ndarray = values[idx]
        return out

    status = strings("status")
    writers = table.column("writer").to_pylist()
    for i, w in enumerate(writers):
        if w is not None and interrupted(str(status[i]), json.loads(w)):
            status[i] = RoundStatus.INCOMPLETE.value
    quotes = table.column("quotes") if "quotes" in table.column_names else None
    return Facts(
        id=strings("id"), exchange=strings("exchange"), dilemma=strings("dilemma"), title=strings("title"),
        team_a=strings("team_a"), team_b=strings("team_b"), judge=strings("judge"),
        tournament=strings("tournament"), status=status,
        ts=_column(table.column("ts"), np.float64), timestamp=strings("timestamp"),
        judged=_column(table.column("judged"), bool),
        needs_review=_column(table.column("needs_review"), bool),
        parsed=_fixed(table.column("parsed"), np.int8, (2, NC)),
        effective=_fixed(table.column("effective"), np.int8, (2, NC)),
        text_len=_fixed(table.column("text_len"), np.int32, (len(SLOTS),)),
        reused=_fixed(table.column("reused"), bool, (4,)),
        fw_bits=_fixed(table.column("fw_bits"), np.int16, (len(SLOTS),)),
        cls=strings("cls"), overrides=strings("overrides"), families=strings("families"),
        imported=strings("imported"), round=strings("round"), key=strings("key"), origin=strings("origin"),
        order=strings("order"), own_missing=_column(table.column("own_missing"), bool),
        style=_fixed(table.column("style"), np.int32, (4,)),
        quotes_of=(lambda rows: quotes.take(_indices(rows)).to_pylist()) if quotes is not None else
        (lambda rows: [None] * len(rows)),
    )


class FactsSource:
    """The facts of a store's rounds, kept in `<store>/columns/facts.parquet` and in memory.

    `facts(**filters)` gives the Facts of the rounds `store.query(**filters)` names (same filters, same
    order), bringing the file up to date first. Thread-safe; `generation` counts the changes seen (a
    front end caches its results until it moves)."""

    def __init__(self, store: ResultsStore) -> None:
        self.store = store
        self.path = Path(store.root) / FILE
        self._lock = threading.RLock()
        self._table: pa.Table | None = None  # every column but the quotes
        self._quotes: pa.ChunkedArray | None = None  # the quotes column (None: read from the file where needed)
        self._row: dict[str, list[int]] = {}  # round id -> its rows (a row per judgment)
        self._stamps: dict[str, tuple[int, int]] = {}
        self._saved: dict[str, tuple[tuple[int, int], bytes]] = {}  # files as just written (the save hook)
        self._file_stamp: tuple[int, int] | None = None
        self._early: source_read.Early | None = None  # a first build's reading started by `prefetch`
        self.generation = 0
        #: what the last sync did: rounds re-read from files, taken from the save hook, dropped, and
        #: whether the whole file was (re)built
        self.last_sync: SyncNote = {}
        from ebtui.core.store.hooks import add_save_listener

        ref = weakref.ref(self)

        def on_saved(rid: str, data: bytes, stamp: tuple[int, int, int]) -> None:
            me = ref()
            if me is not None:
                with me._lock:
                    me._saved.pop(rid, None)
                    me._saved[rid] = ((stamp[1], stamp[2]), data)
                    while len(me._saved) > SAVED_MAX:  # the oldest are read from their files instead
                        me._saved.pop(next(iter(me._saved)))

        self._listener: Callable[[str, bytes, tuple[int, int, int]], None] = on_saved
        add_save_listener(store, on_saved)

    # ---- the file ------------------------------------------------------------------------------------

    @property
    def check_path(self) -> Path:
        return self.path.with_name("facts.check.json")

    def _read_file(self) -> None:
        """Load the file (all but the quotes column, which is read only where a report quotes)."""
        import pyarrow.parquet as pq

        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._forget()
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._file_stamp and self._table is not None:
            return
        try:
            pf = pq.ParquetFile(self.path)
            meta = pf.schema_arrow.metadata or {}
            if (meta.get(b"facts_version") != str(FACTS_VERSION).encode()
                    or meta.get(b"lexicon") != lexicon_stamp().encode()
                    or pf.schema_arrow.remove_metadata() != schema()):
                raise ValueError("written by another version")
            table = pf.read(columns=[f.name for f in schema() if f.name != "quotes"])
        except (OSError, ValueError) as exc:
            log.info("%s: rebuilding the analysis columns (%s)", self.path, exc)
            self._forget()
            return
        self._set_table(table)
        self._quotes = None  # in the file
        self._file_stamp = stamp
        _release()

    def _forget(self) -> None:
        self._table, self._quotes, self._row, self._stamps, self._file_stamp = None, None, {}, {}, None

    def _set_table(self, table: pa.Table) -> None:
        ids = table.column("round").to_pylist()
        self._table = table
        self._row = {}
        for i, rid in enumerate(ids):
            self._row.setdefault(rid, []).append(i)
        self._stamps = dict(zip(ids, zip(table.column("mtime_ns").to_pylist(), table.column("size").to_pylist(),
                                         strict=True), strict=True))

    def _all_quotes(self) -> pa.ChunkedArray:
        """The quotes column of the table in memory (read from the file when it is there)."""
        import pyarrow.parquet as pq

        if self._quotes is None:
            self._quotes = pq.ParquetFile(self.path).read(columns=["quotes"]).column("quotes")
        return self._quotes

    def _quotes_of(self, rows: np.ndarray) -> list[str | None]:
        """The quotes of some rows of the table in memory: from memory, else only the file's row groups
        that hold them."""
        import pyarrow.parquet as pq

        with self._lock:
            if self._quotes is not None or not len(rows):
                return list(self._all_quotes().take(_indices(rows)).to_pylist()) if len(rows) else []
            st = os.stat(self.path)
            if (st.st_mtime_ns, st.st_size) != self._file_stamp:  # replaced by another process meanwhile
                return list(self._all_quotes_by_id(rows))
            pf = pq.ParquetFile(self.path)
            starts = np.cumsum([0] + [pf.metadata.row_group(g).num_rows for g in range(pf.num_row_groups)])
            groups = np.searchsorted(starts, rows, side="right") - 1
            out: list[str | None] = [None] * len(rows)
            for g in np.unique(groups).tolist():
                at = np.flatnonzero(groups == g)
                col = pf.read_row_group(g, columns=["quotes"]).column("quotes")
                got = col.take(_indices(rows[at] - starts[g])).to_pylist()
                for k, v in zip(at.tolist(), got, strict=True):
                    out[k] = v
                del col
                _release()
            return out

    def _all_quotes_by_id(self, rows: np.ndarray) -> list[str | None]:
        import pyarrow.parquet as pq

        assert self._table is not None
        other = pq.ParquetFile(self.path).read(columns=["id", "quotes"])
        by_id = dict(zip(other.column("id").to_pylist(), other.column("quotes").to_pylist(), strict=True))
        ids = self._table.column("id").take(_indices(rows)).to_pylist()
        return [by_id.get(rid) for rid in ids]

    def _write_file(self, whole: pa.Table) -> bool:
        """Replace the file with `whole` (every column), atomically; False: it could not be written."""
        import pyarrow.parquet as pq

        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            table = whole.replace_schema_metadata(
                {"facts_version": str(FACTS_VERSION), "lexicon": lexicon_stamp()})
            pq.write_table(table, tmp, compression="zstd", row_group_size=source_write.ROW_GROUP)
            os.replace(tmp, self.path)
            st = os.stat(self.path)
            self._file_stamp = (st.st_mtime_ns, st.st_size)
            return True
        except OSError as exc:  # a read-only store: the columns live in memory only
            log.debug("%s: cannot write (%s)", self.path, exc)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return False

    # ---- is anything new? ----------------------------------------------------------------------------

    def _token(self) -> list[int] | None:
        """What changes whenever a round file may have changed: index.json's stamp, the rounds folder's
        mtime and number of files — None while a writer has saves index.json lacks (its `.unindexed-*`
        marker; see ebtui/core/store/__init__.py: the same rule the store's own index.check.json follows)."""
        from ebtui.core.store.temp_files import MARKER_PREFIX

        try:
            if any(n.startswith(MARKER_PREFIX) for n in os.listdir(self.store.root)):
                return None
            ist = os.stat(self.store.index_path)
            rounds = self.store.rounds_dir
            dst = os.stat(rounds)
            count = sum(1 for n in os.listdir(rounds) if n.endswith(".json") and not n.startswith("."))
        except OSError:
            return None
        return [ist.st_ino, ist.st_mtime_ns, ist.st_size, dst.st_mtime_ns, count]

    def _checked(self) -> bool:
        """True when the file was last known to match every round file and nothing changed since."""
        token = self._token()
        if token is None or self._file_stamp is None:
            return False
        try:
            note = json.loads(self.check_path.read_bytes())
        except (OSError, ValueError):
            return False
        return isinstance(note, dict) and note.get("token") == token and note.get("file") == list(self._file_stamp)

    def _note_checked(self, token: list[int] | None) -> None:
        if token is None or token != self._token() or self._file_stamp is None:
            return  # something moved while we compared: the next use compares again
        with contextlib.suppress(OSError):
            tmp = self.check_path.with_name(f".{self.check_path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"token": token, "file": list(self._file_stamp)}), encoding="utf-8")
            os.replace(tmp, self.check_path)

    # ---- keeping it in step with the store ------------------------------------------------------------

    def prefetch(self) -> bool:
        """Start a first build's reading now, when the columns file is missing and the rounds folder holds
        many files (source_read.Early): worker processes read the round files while this process goes on (it
        reads the store's index, imports what the report needs); the next `sync` takes their rows for the
        rounds the index names and reads any other itself. False: nothing was started."""
        with self._lock:
            if self._early is not None or self._table is not None or os.path.exists(self.path):
                return False
            self._early = source_read.Early.start(str(self.store.rounds_dir))
            return self._early is not None

    def _stop_early(self) -> None:
        early, self._early = self._early, None
        if early is not None:
            early.stop()

    def _early_rows(self, early: source_read.Early, todo: list[str]) -> Iterator[tuple[pa.Table, int, int]]:
        """(rows, files read, files done) per chunk of the early reading, only of the files in `todo`."""
        import pyarrow as pa

        wanted = set(todo)
        ids = {os.path.basename(p)[:-5] for p in todo}
        for (table, got), chunk in zip(early.reading.results(), early.chunks, strict=True):
            n = sum(1 for p in chunk if p in wanted)
            if n < len(chunk) and table.num_rows:  # (a file the index does not name: its rows are not taken)
                keep = np.array([rid in ids for rid in table.column("round").to_pylist()], dtype=bool)
                table = table.filter(arrow_numbers(keep, pa.bool_()))
            yield table, min(got, n), n

    def _fresh_rows(self, entries: Sequence[tuple[str, int, int]],
                    watch: Callable[[int, int], None] | None = None,
                    keep: Callable[[pa.Table], pa.Table] = lambda t: t) -> tuple[list[pa.Table], int, int]:
        """Rows, as Arrow tables, for the rounds whose file is not what the columns hold (from the save hook,
        else the file; many files: read by worker processes). `watch(done, total)` is called every few hundred
        rounds (it may raise to stop)."""
        parts: list[pa.Table] = []
        rows: list[dict[str, object]] = []
        todo: list[str] = []  # the round files to read
        hooked = 0
        if watch is not None and entries:
            watch(0, len(entries))
        for rid, mtime, size in entries:
            want = (mtime, size)
            if self._stamps.get(rid) == want:
                continue
            saved = self._saved.pop(rid, None)
            if saved is None or saved[0] != want:
                todo.append(str(self.store.rounds_dir / f"{rid}.json"))
                continue
            hooked += 1  # the bytes this process just wrote there
            rows += rows_of(saved[1], saved[0], rid)
        if rows:
            parts.append(keep(arrow_table(rows)))
        del rows
        done, read = len(entries) - len(todo), 0
        early, self._early = self._early, None
        was_early = early is not None
        if early is not None:
            try:
                for table, got, n in self._early_rows(early, todo):
                    if table.num_rows:
                        parts.append(keep(table))
                    done, read = done + n, read + got
                    if watch is not None:
                        watch(done, len(entries))
            finally:
                early.stop()
            listed = set(early.paths)
            todo = [p for p in todo if p not in listed]  # (files saved since the folder was listed)
            del listed, early
        size = source_read.CHUNK
        chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
        with contextlib.closing(read_files(chunks)) as tables:  # (closing it stops the workers)
            for (table, got), chunk in zip(tables, chunks, strict=True):
                if table.num_rows:
                    parts.append(keep(table))
                done, read = done + len(chunk), read + got
                if watch is not None:
                    watch(done, len(entries))
        if watch is not None and entries and not chunks and not was_early:
            watch(len(entries), len(entries))  # (no file to read: the comparison is over)
        return parts, hooked, read

    def _select(self, filters: Mapping[str, object]) -> list[int] | None:
        """Rows of the table `store.query(**filters)` would give, in its order (oldest first), from the
        columns alone — for no filter, tournament and dilemma; None for any other filter."""
        if set(filters) - {"tournament", "dilemma"}:
            return None
        assert self._table is not None
        keep = np.ones(self._table.num_rows, dtype=bool)
        for name, col in (("tournament", "tournament"), ("dilemma", "dilemma")):
            if filters.get(name) is not None:
                keep &= np.array([v == filters[name] for v in self._table.column(col).to_pylist()], dtype=bool)
        rows = np.flatnonzero(keep)
        ts = _column(self._table.column("ts"), np.float64)[rows]
        ids = self._table.column("round").to_pylist()
        # (a stable sort: a round's rows stay in their order, its own judgment first)
        return sorted(rows.tolist(), key=lambda i: (ts[np.searchsorted(rows, i)], ids[i]))

    def sync(self, watch: Callable[[int, int], None] | None = None, **filters: object) -> list[str]:
        """Bring the columns of the rounds `store.query(**filters)` gives up to date (without filters: of
        every round, and drop the rounds that are gone); returns their ids in query order."""
        import pyarrow as pa

        filters = {k: v for k, v in filters.items() if v is not None}
        with self._lock:
            self._read_file()
            if self._table is not None and not self._saved and self._checked():
                rows = self._select(filters)
                if rows is not None:  # nothing changed since the columns last matched the files
                    self.last_sync = {"rebuilt": False, "from_hook": 0, "from_files": 0, "dropped": 0,
                                      "index_read": False}
                    ids_all = self._table.column("round").to_pylist()
                    return list(dict.fromkeys(ids_all[i] for i in rows))
            token = self._token()
            rebuilt = self._table is None
            if not rebuilt:
                self._stop_early()  # (the columns were there after all)
            entries: list[tuple[str, int, int]] = self.store.stamps()  # every round, whatever the filters
            stream = StreamedFile.open(self.path) if rebuilt else None
            try:
                # (a first build: each part goes to the file as it comes, the quotes are not kept in memory)
                fresh, hooked, read = self._fresh_rows(entries, watch, stream.add if stream is not None else
                                                       (lambda t: t))
                if stream is not None and not stream.close():
                    stream = None  # could not be written after all: read again, keeping the quotes
                    self._forget()
                    fresh, hooked, read = self._fresh_rows(entries, watch)
            except BaseException:
                if stream is not None:
                    stream.abort()
                raise
            fresh_ids = [rid for t in fresh for rid in t.column("round").to_pylist()]
            live = {e[0] for e in entries}
            gone = [rid for rid in self._row if rid not in live]
            self.last_sync = {"rebuilt": rebuilt, "from_hook": hooked, "from_files": read, "dropped": len(gone),
                              "index_read": True}
            if stream is not None:  # the file is written: the table in memory is every column but the quotes
                self._set_table(pa.concat_tables(fresh) if fresh else
                                schema().empty_table().drop_columns(["quotes"]))
                self._quotes = None
                self._file_stamp = stream.stamp
                self.generation += 1
                del fresh
                _release()
            elif fresh_ids or gone or rebuilt:
                replace = set(fresh_ids) | set(gone)
                parts = []
                if self._table is not None:
                    whole = self._table.append_column("quotes", self._all_quotes())
                    whole = whole.select([f.name for f in schema()])
                    if replace:
                        keep = np.array([rid not in replace for rid in whole.column("round").to_pylist()],
                                        dtype=bool)
                        whole = whole.filter(arrow_numbers(keep, pa.bool_()))
                    parts.append(whole)
                parts += fresh
                table = pa.concat_tables(parts) if parts else schema().empty_table()
                self._quotes = table.column("quotes")
                self._set_table(table.drop_columns(["quotes"]))
                if self._write_file(table):
                    self._quotes = None  # read from the file where a report quotes, as after a fresh start
                self.generation += 1
                del table, parts
                _release()
            self._note_checked(token)  # every round compared: the columns match the files as indexed
            return [e[0] for e in self.store.stamps(**filters)] if filters else [e[0] for e in entries]

    def facts(self, watch: Callable[[int, int], None] | None = None, **filters: object) -> Facts:
        """The facts of the rounds `store.query(**filters)` gives, in that order (synced first; `watch(done,
        total)` hears how the comparison with the round files goes, and may raise to stop it)."""
        with self._lock:
            ids = self.sync(watch, **filters)
            rows = np.array([i for rid in ids for i in self._row.get(rid, ())], dtype=np.int64)
            assert self._table is not None
            n = self._table.num_rows
            if len(rows) == n and bool(np.all(rows == np.arange(n))):
                facts = facts_of_table(self._table)
            elif len(rows) == n and bool(np.all(np.bincount(rows, minlength=n) == 1)):
                # every row, in another order (a first build read the files in the folder's order): the columns
                # reordered as numpy arrays (a few pointers a row) rather than the table copied by Arrow's take
                facts = facts_of_table(self._table).take(rows)
            else:
                facts = facts_of_table(self._table.take(_indices(rows)))
            facts.quotes_of = lambda sub: self._quotes_of(rows[sub])
            _release()
            return facts

    def close(self) -> None:
        from ebtui.core.store.hooks import remove_save_listener

        with self._lock:
            self._stop_early()
        remove_save_listener(self.store, self._listener)


def progress_text(done: int, total: int) -> str:
    """What every front end shows while the analysis columns are built (`FactsSource.facts(watch)` hears
    `done` of `total` rounds compared with their files; a first build reads every one)."""
    return f"building the analysis columns: {done:,} / {total:,} rounds"


class ProgressLine:
    """`watch(done, total)` for `FactsSource.facts` that writes `progress_text` lines once the work has taken
    `after` seconds: on a terminal one line rewritten in place (at most `per_second` times a second, the
    last one ended by a line break); elsewhere (a log, a pipe) a line at each quarter of the way, at most
    four. `write` is given the text with its line ending ("\r" or "\n")."""

    def __init__(self, write: Callable[[str], None], terminal: bool, *, after: float = 0.5,
                 per_second: float = 10.0, clock: Callable[[], float] | None = None) -> None:
        import time

        self.write, self.terminal, self.after, self.gap = write, terminal, after, 1.0 / per_second
        self.clock = clock or time.monotonic
        self.started = self.clock()
        self.last: float | None = None
        self.quarter = 0  # the quarters of the way already written (not on a terminal)
        self.ended = False

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.ended or now - self.started < self.after or total <= 0:
            return
        last = done >= total
        if self.terminal:
            if last or self.last is None or now - self.last >= self.gap:
                self.last = now
                self.write("\r\x1b[K" + progress_text(done, total) + ("\n" if last else ""))
        else:
            quarter = 4 * done // total
            if quarter > self.quarter:
                self.quarter, self.last = quarter, now
                self.write(progress_text(done, total) + "\n")
        self.ended = last


_SOURCES: weakref.WeakKeyDictionary[ResultsStore, FactsSource] = weakref.WeakKeyDictionary()


def facts_source(store: ResultsStore) -> FactsSource:
    """The store instance's one FactsSource (created on first use)."""
    src = _SOURCES.get(store)
    if src is None:
        src = _SOURCES[store] = FactsSource(store)
    return src
