"""The store's index: index.json (TinyDB, batched writes), index.check.json (the note that lets an open
skip the full check) and the reconciliation with the round files. See ebtui/core/store/__init__.py for
the design."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import stat
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import JsonValue, ValidationError
from tinydb import TinyDB
from tinydb.middlewares import CachingMiddleware

from ebtui.core.records import Round
from ebtui.core.store.entries import (
    INDEX_FORMAT,
    LIGHT_FIELDS,
    IndexDoc,
    index_entry,
    shown,
    valid_entry,
)
from ebtui.core.store.files import (
    AtomicJSONStorage,
    Stamp,
    TextCache,
    WriteAbandoned,
    atomic_write,
    fsync_dir,
    gc_paused,
    parse_json,
    stamp_of,
    stat_stamp,
    unreadable_reason,
)
from ebtui.core.store.lock import StoreLock
from ebtui.core.store.query import RoundFilter
from ebtui.core.store.temp_files import MARKER_PREFIX, remove_stale_temp_files
from ebtui.core.store.unreadable import unreadable_entries

log = logging.getLogger("ebtui.core.store")

MARKER_IDS = itertools.count()
MISSING = -1  # the rounds folder's "mtime" while it does not exist


class StoreIndex:
    """The index part of ResultsStore: the in-memory index documents, index.json (written in batches, merged
    with what other writers flushed), index.check.json and the reconciliation with the round files. Its
    writes take the store's lock (`lock`); the round files it reads while indexing go into `cache`."""

    #: write index.json after this many saves at least ...
    FLUSH_MIN_SAVES = 64
    #: ... or a fraction 1/N of the index size, whichever is larger (keeps the cost per save flat) ...
    FLUSH_FRACTION = 8
    #: ... or when this many seconds have passed since the last index write
    FLUSH_SECONDS = 5.0

    def __init__(self, root: Path, lock: StoreLock, cache: TextCache, *, durable: bool) -> None:
        self.root = root
        self.durable = durable
        self._lock = lock
        self._cache = cache
        #: how many times this instance wrote index.json (tests and benchmarks read it)
        self.index_writes = 0
        #: unreadable round files met while indexing: (path, reason); they are never deleted
        self.problems: list[tuple[str, str]] = []
        self._entries: dict[str, IndexDoc] | None = None  # round id -> index document
        self._dirty: set[str] = set()
        self._index_stamp: Stamp | None = None  # index.json as last read or written by us
        self._last_flush = time.monotonic()
        #: this instance's `.unindexed-*` marker while it has saves index.json lacks
        self._marker: Path | None = None
        #: the rounds folder's mtime when this instance last knew its index matched every round file
        #: (None: it may not); kept up to date across its own saves
        self._verified: int | None = None
        #: index.check.json's filter columns, for load_rounds before the index is loaded
        self._light: tuple[Stamp | None, dict[str, list[JsonValue]]] | None = None

    @property
    def rounds_dir(self) -> Path:
        return self.root / "rounds"

    @property
    def index_path(self) -> Path:
        return self.root / "index.json"

    @property
    def check_path(self) -> Path:
        return self.root / "index.check.json"

    @property
    def loaded(self) -> bool:
        """Whether this instance has read index.json (a query before that may be answered from the note)."""
        return self._entries is not None

    def note_problem(self, path: str, reason: str) -> None:
        """Record an unreadable file in `problems` (once)."""
        if (path, reason) not in self.problems:
            self.problems.append((path, reason))

    def make_rounds_dir(self) -> None:
        """Create rounds/ (on the lock's first use, the root made): a folder this instance created empty
        still matches the index."""
        try:
            self.rounds_dir.mkdir()
            if self._verified == MISSING:
                self._verified = self._dir_mtime()
        except FileExistsError:
            pass

    def _dir_mtime(self) -> int:
        try:
            return os.stat(self.rounds_dir).st_mtime_ns
        except FileNotFoundError:
            return MISSING

    def _markers(self) -> list[str]:
        try:
            return [n for n in os.listdir(self.root) if n.startswith(MARKER_PREFIX)]
        except FileNotFoundError:
            return []

    def _count_files(self) -> int:
        try:
            return sum(1 for n in os.listdir(self.rounds_dir) if n.endswith(".json") and not n.startswith("."))
        except FileNotFoundError:
            return 0

    def query(self, **filters: object) -> list[IndexDoc]:
        """Index documents matching all filters, oldest first (`newest_first=True` reverses; `limit=N`).

        Filters: model (any role, or the one named by role: team_a, team_b or judge), dilemma (id),
        judge (model), tournament (id), status (one or several), needs_review (bool, after overrides),
        exchange (exchange id), schedule_key.
        """
        with gc_paused():
            return [shown(e) for e in self._select(filters)]

    def stamps(self, **filters: object) -> list[tuple[str, int, int]]:
        """(id, mtime_ns, size) of each round `query(**filters)` gives, in the same order: the round files as
        indexed, for caches kept beside the store (ebtui.core.analysis.source), without copying documents."""
        return [(e["id"], e["mtime_ns"], e["size"]) for e in self._select(filters)]

    def _select(self, filters: Mapping[str, object]) -> list[IndexDoc]:
        """The index documents (as held, not copies) matching `filters`, in query order."""
        spec = RoundFilter.parse(filters)
        with self._lock.mutex:
            self.ensure_loaded()
            self._merge_disk_index_if_changed()
            assert self._entries is not None
            entries = list(self._entries.values())
        return spec.select(entries)

    def light_ids(self, filters: Mapping[str, object]) -> list[str] | None:
        """The ids `query(**filters)` would give, from index.check.json's columns, while this instance has
        not loaded the index yet and the note is trusted (else None: use the index)."""
        spec = RoundFilter.parse(filters)
        with self._lock.mutex:
            cols = self._light_columns()
        return None if cols is None else spec.column_ids(cols)

    def _light_columns(self) -> dict[str, list[JsonValue]] | None:
        """index.check.json's columns (LIGHT_FIELDS, one entry per index document) while this instance has
        not loaded the index and the note is trusted, else None (caller holds the mutex)."""
        if self._entries is not None:
            return None
        stamp = stat_stamp(self.index_path)
        light = self._light
        if light is None or light[0] != stamp:
            trusted = self._trusted_note(stamp)
            cols = trusted[1].get("columns") if trusted is not None else None
            if not isinstance(cols, dict):
                return None
            lists = {k: c for k, c in cols.items() if isinstance(c, list)}
            if (
                set(cols) != set(LIGHT_FIELDS)
                or len(lists) != len(cols)
                or len({len(c) for c in lists.values()}) != 1
            ):
                return None
            light = self._light = (stamp, lists)
        return light[1]

    def read_index(self) -> dict[str, IndexDoc]:
        """index.json through TinyDB; raises on a corrupt file."""
        db = TinyDB(self.index_path, durable=self.durable, storage=AtomicJSONStorage)
        try:
            # the table's raw documents: Table.all() would wrap each in a Document copy (slow at 10,000)
            table = (db.storage.read() or {}).get("rounds") or {}
        finally:
            db.close()
        if not isinstance(table, dict):
            raise ValueError("the rounds table is not a JSON object")
        return {doc["id"]: doc for doc in table.values() if valid_entry(doc)}

    def ensure_loaded(self) -> None:
        """First use: load index.json, then bring it up to date with the round files."""
        if self._entries is not None:
            return
        entries: dict[str, IndexDoc] = {}
        self._index_stamp = stat_stamp(self.index_path)
        readable = False
        if self._index_stamp is not None:
            try:
                entries = self.read_index()
                readable = True
            except (OSError, ValueError, TypeError, AttributeError) as exc:
                log.warning("%s: unreadable index (%s); rebuilding it from the round files", self.index_path, exc)
                entries = {}
        self._entries = entries
        if readable:
            verified = self._trusted_dir_mtime()
            if verified is not None:
                self._verified = verified
                return
        self._reconcile()

    def _trusted_dir_mtime(self) -> int | None:
        """The rounds folder's mtime if index.check.json shows index.json still matches every round file
        (see the module's docstring), else None (the full check is needed)."""
        trusted = self._trusted_note(self._index_stamp)
        return trusted[0] if trusted is not None else None

    def _trusted_note(self, index_stamp: tuple[int, int, int] | None) -> tuple[int, dict[str, JsonValue]] | None:
        if index_stamp is None:
            return None
        try:
            raw = self.check_path.read_bytes()
        except OSError:
            return None
        try:
            note = parse_json(raw)
        except ValueError:
            return None
        if (
            not isinstance(note, dict)
            or note.get("format") != INDEX_FORMAT
            or note.get("index") != list(index_stamp)
            or self._markers()
        ):
            return None
        mtime = self._dir_mtime()
        if mtime == MISSING or note.get("rounds_mtime_ns") != mtime or note.get("count") != self._count_files():
            return None
        return mtime, note

    def _write_check(self) -> None:
        """Note that index.json matches every round file (caller holds the flock; the index is on disk) —
        only when that is known: no writer has unindexed saves, and the rounds folder changed only by this
        instance's own saves since it last compared the index with the files."""
        if self._index_stamp is None or self._verified is None or self._verified == MISSING:
            return
        if self._markers() or self._dir_mtime() != self._verified:
            return
        assert self._entries is not None
        docs = list(self._entries.values())
        note = {
            "format": INDEX_FORMAT,
            "index": list(self._index_stamp),
            "rounds_mtime_ns": self._verified,
            "count": self._count_files(),
            "columns": {k: [e.get(k) for e in docs] for k in LIGHT_FIELDS},
        }
        try:
            atomic_write(self.check_path, json.dumps(note).encode("utf-8"), durable=False)
        except OSError as exc:  # only a speed-up: the next open does the full check
            log.debug("%s: cannot write (%s)", self.check_path, exc)

    def _clean_dead_markers(self) -> None:
        """Markers of processes that are gone (caller holds the flock, after a full check that took in
        whatever they saved)."""
        for name in self._markers():
            try:
                pid = int(name[len(MARKER_PREFIX):].split("-", 1)[0])
            except ValueError:
                continue
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                with contextlib.suppress(OSError):
                    os.unlink(self.root / name)
            except OSError:
                pass  # alive (another user's process)

    def _clean_stale_temps(self) -> None:
        """Temporary files of writers that are gone (a kill during a write), after a full check."""
        for path in remove_stale_temp_files(self.root):
            log.debug("%s: stale temporary file removed", path)

    def _scan(self) -> dict[str, tuple[int, int, int]]:
        """Every round file's stamp; an entry the filesystem cannot stat (a symlink loop, permissions) or
        that is not a regular file (a directory, a FIFO that would block a read) is a problem, skipped."""
        out: dict[str, tuple[int, int, int]] = {}
        try:
            it = os.scandir(self.rounds_dir)
        except FileNotFoundError:
            return out
        except OSError as exc:
            self.note_problem(str(self.rounds_dir), f"cannot list the folder: {exc.strerror or exc}")
            return out
        with it:
            for de in it:
                name = de.name
                if name.startswith(".") or not name.endswith(".json"):
                    continue
                try:
                    st = de.stat()
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    self.note_problem(os.path.join(self.rounds_dir, name), f"cannot read: {exc.strerror or exc}")
                    continue
                if not stat.S_ISREG(st.st_mode):
                    self.note_problem(os.path.join(self.rounds_dir, name), "not a regular file")
                    continue
                out[name[:-5]] = stamp_of(st)
        return out

    def _index_file(self, rid: str, stamp: tuple[int, int, int]) -> IndexDoc | None:
        path = self.rounds_dir / f"{rid}.json"
        try:
            text = path.read_bytes()
            round_ = Round.model_validate_json(text)
        except (OSError, UnicodeDecodeError, ValidationError, ValueError) as exc:
            reason = unreadable_reason(exc)
            self.note_problem(str(path), reason)
            log.warning("%s: unreadable round file skipped (%s)", path, reason)
            return None
        if round_.id != rid:
            self.note_problem(str(path), f"file name does not match round id {round_.id!r}")
            log.warning("%s: round id %r does not match the file name; skipped", path, round_.id)
            return None
        self._cache.put(rid, stamp, text)
        return index_entry(round_, path=f"rounds/{rid}.json", stamp=stamp, saved_ns=stamp[1])

    def _reconcile(self) -> int:
        """Re-index round files whose size/mtime differ from their index document; drop documents whose
        file is gone. Returns how many documents changed; writes the index if any did (and it can)."""
        assert self._entries is not None
        verified = self._dir_mtime()  # before the scan: a change during it makes the two differ later
        files = self._scan()
        changed = 0
        for rid, stamp in files.items():
            e = self._entries.get(rid)
            if e is not None and e.get("mtime_ns") == stamp[1] and e.get("size") == stamp[2]:
                continue
            entry = self._index_file(rid, stamp)
            if entry is None:
                self._entries.pop(rid, None)
            else:
                self._entries[rid] = entry
                self._dirty.add(rid)
            changed += 1
        for rid in [r for r in self._entries if r not in files]:
            del self._entries[rid]
            changed += 1
        self._verified = verified
        if not files and not changed:
            return changed
        if changed or self._index_stamp is None:
            try:
                with self._lock.writing():
                    self._clean_dead_markers()
                    self.write(force=True)
                    self._clean_stale_temps()
            except OSError as exc:  # a read-only store can still be browsed
                log.warning("%s: cannot write the index (%s); using it in memory", self.index_path, exc)
        else:
            try:  # the index matched: only note that (so the next open skips this check)
                with self._lock.writing():
                    self._clean_dead_markers()
                    self._write_check()
                    self._clean_stale_temps()
            except OSError as exc:  # read-only: nothing to fix, every open does the full check
                log.debug("%s: cannot note the checked index (%s)", self.check_path, exc)
        return changed

    def refresh(self) -> int:
        """Pick up rounds other processes saved but have not indexed yet (a directory scan)."""
        with self._lock.mutex:
            if self._entries is None:
                self.ensure_loaded()
                return 0
            self._merge_disk_index_if_changed()
            return self._reconcile()

    def _merge_disk_index_if_changed(self) -> None:
        """Another process wrote index.json: take its newer documents (cheap: one stat when unchanged)."""
        stamp = stat_stamp(self.index_path)
        if stamp is None or stamp == self._index_stamp:
            return
        try:
            disk = self.read_index()
        except (OSError, ValueError, TypeError, AttributeError):
            return  # being replaced or corrupt; the round files stay the truth
        self._index_stamp = stamp
        self._merge(disk)

    def _merge(self, disk: dict[str, IndexDoc]) -> None:
        assert self._entries is not None
        for rid, e in disk.items():
            mine = self._entries.get(rid)
            if mine is None or e["saved_ns"] > mine["saved_ns"]:
                self._entries[rid] = e
                self._dirty.discard(rid)

    def flush_due(self) -> bool:
        if not self._dirty:
            return False
        assert self._entries is not None
        if len(self._dirty) >= max(self.FLUSH_MIN_SAVES, len(self._entries) // self.FLUSH_FRACTION):
            return True
        return time.monotonic() - self._last_flush >= self.FLUSH_SECONDS

    def write(self, *, force: bool = False) -> None:
        """Write index.json (caller holds the flock): merge in what other writers flushed, then write."""
        if self._entries is None or (not self._dirty and not force):
            return
        stamp = stat_stamp(self.index_path)
        if stamp is not None and stamp != self._index_stamp:
            try:
                self._merge(self.read_index())
            except (OSError, ValueError, TypeError, AttributeError):
                pass  # corrupt on disk: ours (plus the round files) replaces it
        db = TinyDB(self.index_path, durable=self.durable, storage=CachingMiddleware(AtomicJSONStorage))  # type: ignore[no-untyped-call]
        try:
            db.drop_tables()  # all of this lands in the cache; close() writes the file once
            db.table("rounds").insert_multiple(self._entries.values())
            db.table("meta").insert(
                {"format": INDEX_FORMAT, "rounds": len(self._entries), "written_ns": time.time_ns()}
            )
        finally:
            db.close()
        self._index_stamp = stat_stamp(self.index_path)
        self._dirty.clear()
        self._last_flush = time.monotonic()
        self.index_writes += 1
        if self._marker is not None:  # index.json now holds every save of this instance
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._marker)
            self._marker = None
        self._write_check()

    def rebuild_index(self) -> int:
        """Rebuild index.json from the round files alone. Unreadable files are skipped, logged and listed
        in `problems`, never deleted. Returns the number of rounds indexed."""
        with self._lock.mutex, self._lock.writing():
            self.problems = []
            self._entries = {}
            self._verified = self._dir_mtime()
            for rid, stamp in self._scan().items():
                entry = self._index_file(rid, stamp)
                if entry is not None:
                    self._entries[rid] = entry
            self._index_stamp = None  # do not merge the old index back in
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.index_path)
            self.write(force=True)
            return len(self._entries)

    # ----------------------------------------------------------------------------------------- saves

    @contextlib.contextmanager
    def file_write(self) -> Iterator[None]:
        """Around the atomic write of a round file (caller holds the flock), the bookkeeping that lets the
        next open trust index.json: the marker first, then whether the folder changed only by us."""
        self._mark_unindexed()
        before = self._dir_mtime()
        try:
            yield
        except WriteAbandoned:  # a temporary file came and went: the folder still changed only by us
            self._verified = self._dir_mtime() if before == self._verified else None
            raise
        after = self._dir_mtime()
        self._verified = after if before == self._verified else None

    def _mark_unindexed(self) -> None:
        """Before the first round write index.json will lack: leave a marker, so an open (by any process)
        does the full check until this instance has written its index (or is known dead)."""
        if self._marker is not None:
            return
        path = self.root / f"{MARKER_PREFIX}{os.getpid()}-{next(MARKER_IDS)}"
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        if self.durable:
            fsync_dir(self.root)
        self._marker = path

    def record(self, rid: str, round_: Round, stamp: Stamp) -> None:
        """Index the round just written (in memory; index.json follows in a batch)."""
        assert self._entries is not None
        self._entries[rid] = index_entry(round_, path=f"rounds/{rid}.json", stamp=stamp, saved_ns=time.time_ns())
        self._dirty.add(rid)

    def write_or_note(self) -> None:
        """A batched index write: failing, it is only noted (the round file is saved, and the index is
        rebuilt from the round files on the next open)."""
        try:
            self.write()
        except OSError as exc:
            log.debug("%s: cannot write the index now (%s)", self.index_path, exc)

    def flush(self) -> None:
        """Write pending index changes (OSError if it cannot: the round files stay the truth)."""
        with self._lock.mutex:
            if self._entries is None or (not self._dirty and self._marker is None):
                return
            with self._lock.writing():
                if self._dirty:
                    self.write()
                elif self._marker is not None:  # a write that failed left it; nothing is unindexed
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(self._marker)
                    self._marker = None

    def unreadable(self, *, deep: bool = True) -> list[tuple[str, str]]:
        """Every entry in rounds/ that cannot be read, as (path, reason) (see unreadable_entries); each is
        recorded in `problems` and left out of queries from then on, never deleted."""
        with self._lock.mutex:
            light = None if deep else self._light_columns()
            if light is not None:
                # without the per-file stat only the names matter: the trusted note's ids are the index's
                # (a warm report's check, without reading index.json: 65 MB at 100,000 rounds)
                known = {str(rid) for rid in light["id"]}
                found = unreadable_entries(self.rounds_dir, known, deep=False)
                for path, reason in found:
                    if path != str(self.rounds_dir):
                        self.note_problem(path, reason)  # (an indexed id is never found without `deep`)
                return found
            self.ensure_loaded()
            entries = self._entries
            assert entries is not None
            found = unreadable_entries(self.rounds_dir, entries, deep=deep)
            for path, reason in found:
                if path == str(self.rounds_dir):  # the folder itself cannot be listed
                    continue
                self.note_problem(path, reason)
                rid = os.path.basename(path)[:-5]
                if entries.pop(rid, None) is not None:
                    self._dirty.add(rid)
        return found
