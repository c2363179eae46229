"""ResultsStore: the facade over round files, the index and the writer thread (see the package docstring)."""

from __future__ import annotations

import atexit
import contextlib
import logging
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar, cast

from ebtui.core.records import Override, Round, Team, Tournament
from ebtui.core.store.audit_files import AuditFiles
from ebtui.core.store.entries import IndexDoc
from ebtui.core.store.files import StoreError, StoreWriteError, TextCache, check_id, gc_paused, round_bytes
from ebtui.core.store.hooks import notify_saved
from ebtui.core.store.index import StoreIndex
from ebtui.core.store.lock import StoreLock
from ebtui.core.store.round_files import RoundFiles, score_override
from ebtui.core.store.saver import BackgroundSaver
from ebtui.settings import load_settings

log = logging.getLogger("ebtui.core.store")
_OPEN_STORES: weakref.WeakSet[ResultsStore] = weakref.WeakSet()
_ATEXIT_REGISTERED = False
T = TypeVar("T")


def _flush_open_stores() -> None:
    for store in list(_OPEN_STORES):
        with contextlib.suppress(Exception):
            store.flush()


def _durable_default() -> bool:
    return load_settings().store_fsync


class _Part(Generic[T]):
    """An attribute of ResultsStore that one of its parts keeps: read and set on the part (on the class,
    the part class's own value: the flush and cache constants)."""

    def __init__(self, part: str, part_type: type) -> None:
        self.part = part
        self.part_type = part_type
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> T:
        return cast("T", getattr(self.part_type if obj is None else getattr(obj, self.part), self.name))

    def __set__(self, obj: object, value: T) -> None:
        setattr(getattr(obj, self.part), self.name, value)


class ResultsStore:
    """Round files plus a batched TinyDB index. Thread-safe; safe for several processes on one root.

    `durable=True` (default; `EBTUI_STORE_FSYNC=0` turns it off) fsyncs each file and its directory, so
    a save survives power loss; without it a save is still atomic and survives the process being killed.

    Built from parts, each with its own state: `lock` (thread lock and inter-process flock), `index`
    (StoreIndex: index.json, index.check.json, queries), `files` (RoundFiles: round and tournament files),
    `cache` (the text of recently read or written round files) and the background saver (created on use).
    """

    #: write index.json after this many saves at least ... (StoreIndex's flush policy)
    FLUSH_MIN_SAVES = _Part[int]("index", StoreIndex)
    #: ... or a fraction 1/N of the index size, whichever is larger (keeps the cost per save flat) ...
    FLUSH_FRACTION = _Part[int]("index", StoreIndex)
    #: ... or when this many seconds have passed since the last index write
    FLUSH_SECONDS = _Part[float]("index", StoreIndex)
    #: parsed rounds kept in memory (checked against the file's stat before use)
    CACHE_SIZE = _Part[int]("cache", TextCache)
    #: how many times this instance wrote index.json (tests and benchmarks read it)
    index_writes = _Part[int]("index", StoreIndex)
    #: unreadable files met while indexing or loading: (path, reason); they are never deleted
    problems = _Part[list[tuple[str, str]]]("index", StoreIndex)
    #: the first write this instance could not make (a full disk...): see StoreWriteError
    write_failure = _Part[StoreWriteError | None]("files", RoundFiles)
    rounds_dir = _Part[Path]("index", StoreIndex)
    index_path = _Part[Path]("index", StoreIndex)
    check_path = _Part[Path]("index", StoreIndex)
    tournaments_dir = _Part[Path]("files", RoundFiles)

    def __init__(self, root: Path | str, *, durable: bool | None = None) -> None:
        global _ATEXIT_REGISTERED
        self.root = Path(root)
        durable = _durable_default() if durable is None else durable
        self.cache = TextCache()
        self.lock = StoreLock(self.root)
        self.index = StoreIndex(self.root, self.lock, self.cache, durable=durable)
        self.lock.on_open = self.index.make_rounds_dir
        self.files = RoundFiles(self.root, self.cache, durable=durable, note_problem=self.index.note_problem)
        self._bg: BackgroundSaver | None = None
        _OPEN_STORES.add(self)
        if not _ATEXIT_REGISTERED:
            atexit.register(_flush_open_stores)
            _ATEXIT_REGISTERED = True

    @property
    def durable(self) -> bool:
        return self.files.durable

    @durable.setter
    def durable(self, value: bool) -> None:
        self.files.durable = self.index.durable = value

    @property
    def lock_path(self) -> Path:
        return self.lock.path

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.root)!r})"

    # ----------------------------------------------------------------------------------------- rounds

    def round_path(self, round_id: str) -> Path:
        return self.files.round_path(round_id)

    def save_round(self, round_: Round) -> Path:
        """Write the round's file atomically and update the index (in memory; written in batches).

        If another writer changed the file since this instance last wrote it (an override from the TUI
        or `ebtui rounds override`), the overrides found there are kept and added to `round_` itself.
        """
        rid = check_id("round", round_.id)
        with self.lock.mutex:
            self.index.ensure_loaded()
            try:
                with self.lock.writing():
                    path = self.files.round_path(rid)
                    self.files.keep_foreign_overrides(round_, path)
                    self._write(rid, round_, path)
                    if self.index.flush_due():
                        self.index.write_or_note()
            except OSError as exc:  # a full disk, a quota, a read-only folder: the file is as it was
                raise self.files.write_failed(exc, self.rounds_dir, f"round {rid}") from None
        return path

    def _write(self, rid: str, round_: Round, path: Path) -> None:
        """Write the round's file (caller holds the flock), index it, cache its text, tell the listeners."""
        data = round_bytes(round_)
        self._write_round_file(path, data)
        stamp = self.files.written(rid, path)
        self.index.record(rid, round_, stamp)
        self.cache.put(rid, stamp, data)
        notify_saved(self, rid, data, stamp)  # e.g. the analysis columns (ebtui.core.analysis.source)

    def _write_round_file(self, path: Path, data: bytes) -> None:
        """The atomic write itself, inside the index's bookkeeping (a subclass may wrap it: a slow disk)."""
        with self.index.file_write():
            self.files.write(path, data)

    def merge_known_overrides(self, round_: Round, *, create: bool = False) -> None:
        """Add to `round_` the overrides other writers made that this store knows of (no file read); see
        RoundFiles.merge_known_overrides."""
        self.files.merge_known_overrides(round_, create=create)

    def load_round(self, round_id: str) -> Round:
        """The saved round (StoreError if it is missing or unreadable)."""
        return self.files.load_round(round_id)

    def load_rounds(self, **filters: object) -> list[Round]:
        """The rounds `query(**filters)` names, loaded from their files. An unreadable file is skipped,
        logged and recorded in `problems` (never deleted)."""
        ids = self.index.light_ids(filters)
        if ids is None:
            ids = [e["id"] for e in self.index.query(**filters)]
        out: list[Round] = []
        with gc_paused():  # 182 rounds are ~10,000 tracked objects: one collection after, not dozens during
            for rid in ids:
                try:
                    out.append(self.load_round(rid))
                except StoreError as exc:
                    log.warning("%s", exc)
                    path = str(self.round_path(rid))
                    self.index.note_problem(path, str(exc).removeprefix(f"{path}: "))
        return out

    def apply_override(
        self,
        round_id: str,
        team: Team | str,
        criterion: str,
        value: int | None,
        note: str = "",
        *,
        author: str = "",
    ) -> Round:
        """Set (or with value None clear) a human's score for one criterion of one team.

        The parsed value stays in the judgment; the override, its time and note are appended to
        `judgment.overrides` (the full history). A round whose judge gave no judgment gets an empty one
        flagged needs_review, so a human can score it by hand. The file is re-read under the lock, so
        concurrent writers lose nothing.
        """
        return self.add_overrides(round_id, score_override(round_id, team, criterion, value, note, author))

    def add_overrides(self, round_id: str, build: Callable[[Round], list[Override]]) -> Round:
        """Append the overrides (scores or acceptances) that `build` makes from the round as it is on disk.

        The file is re-read under the store lock and `build` runs there, so concurrent writers lose nothing;
        `build` may raise ValueError to refuse. Overrides are indexed at once (they are rare and precious).
        """
        check_id("round", round_id)
        try:
            return self._add_overrides(round_id, build)
        except OSError as exc:  # nothing written: the round file is as it was
            raise self.files.write_failed(exc, self.rounds_dir, f"the change to round {round_id}") from None

    def _add_overrides(self, round_id: str, build: Callable[[Round], list[Override]]) -> Round:
        with self.lock.mutex:
            self.index.ensure_loaded()
            with self.lock.writing():
                round_ = self.load_round(round_id)
                added = build(round_)
                if not added:
                    return round_
                assert round_.judgment is not None  # build made or found the judgment it added to
                round_.judgment.overrides.extend(added)
                self.files.remember_overrides(round_id, added)
                self._write(round_id, round_, self.files.round_path(round_id))
                self.index.write_or_note()
        return round_

    def modify_round(self, round_id: str, change: Callable[[Round], bool]) -> Round:
        """Change a saved round as it is on disk, under the store lock, and save it atomically when `change`
        returns True (False: nothing to write). Used to add a judgment to a finished round (ebtui.core.rejudge)
        without losing what another writer saved meanwhile; `change` may raise ValueError to refuse."""
        check_id("round", round_id)
        with self.lock.mutex:
            self.index.ensure_loaded()
            with self.lock.writing():
                round_ = self.load_round(round_id)
                if not change(round_):
                    return round_
                self._write(round_id, round_, self.files.round_path(round_id))
                if self.index.flush_due():
                    self.index.write()
        return round_

    # ----------------------------------------------------------------------------------------- tournaments

    def tournament_path(self, tournament_id: str) -> Path:
        return self.files.tournament_path(tournament_id)

    def save_tournament(self, tournament: Tournament) -> Path:
        path = self.files.tournament_path(tournament.id)
        try:
            with self.lock.writing():
                self.files.write_tournament(path, tournament)
        except OSError as exc:
            raise self.files.write_failed(exc, self.tournaments_dir, f"tournament {tournament.id}") from None
        return path

    def load_tournament(self, tournament_id: str) -> Tournament:
        """The saved tournament (StoreError if it is missing or unreadable)."""
        return self.files.load_tournament(tournament_id)

    def list_tournaments(self) -> list[Tournament]:
        """Every readable tournament, oldest first; unreadable files are logged and skipped."""
        return self.files.list_tournaments()

    # ----------------------------------------------------------------------------------------- audits

    @property
    def audits(self) -> AuditFiles:
        """The human audits' files (`<store>/audits/`, ebtui.core.audit), atomic and under this store's lock."""
        return AuditFiles(self.root, self.lock, durable=self.durable)

    # ----------------------------------------------------------------------------------------- the index

    def query(self, **filters: object) -> list[IndexDoc]:
        """Index documents matching all filters, oldest first (`newest_first=True` reverses; `limit=N`).

        Filters: model (any role, or the one named by role: team_a, team_b or judge), dilemma (id),
        judge (model), tournament (id), status (one or several), needs_review (bool, after overrides),
        exchange (exchange id), schedule_key.
        """
        return self.index.query(**filters)

    def stamps(self, **filters: object) -> list[tuple[str, int, int]]:
        """(id, mtime_ns, size) of each round `query(**filters)` gives, in the same order (StoreIndex.stamps)."""
        return self.index.stamps(**filters)

    def refresh(self) -> int:
        """Pick up rounds other processes saved but have not indexed yet (a directory scan)."""
        return self.index.refresh()

    def rebuild_index(self) -> int:
        """Rebuild index.json from the round files alone. Unreadable files are skipped, logged and listed
        in `problems`, never deleted. Returns the number of rounds indexed."""
        return self.index.rebuild_index()

    def unreadable(self, *, deep: bool = True) -> list[tuple[str, str]]:
        """Every entry in rounds/ that cannot be read, as (path, reason), looked for afresh on each call
        (see ebtui.core.store.unreadable; `deep=False` skips the per-file stat that finds files changed in
        place); they are left out of queries, never deleted."""
        return self.index.unreadable(deep=deep)

    # ----------------------------------------------------------------------------------------- lifetime

    def flush(self) -> None:
        """Wait for the background saver's pending round writes, then write pending index changes (also
        done on close() and at interpreter exit)."""
        bg = self._bg
        if bg is not None:
            bg.flush()  # outside the lock: the writer thread needs it
        try:
            self.index.flush()
        except OSError as exc:  # a full disk: the round files stay the truth; the next open re-indexes
            (log.debug if self.write_failure is not None else log.warning)(
                "%s: the index could not be written (%s); it is rebuilt from the round files on the next open",
                self.index_path, exc.strerror or exc)

    def background_saver(self) -> BackgroundSaver:
        """This store's one BackgroundSaver (created on first use; closed by close())."""
        with self.lock.mutex:
            if self._bg is None or self._bg.closed:
                self._bg = BackgroundSaver(self)
            return self._bg

    def close(self) -> None:
        bg = self._bg
        if bg is not None:
            bg.close()  # outside the lock: the writer thread needs it
        with self.lock.mutex:
            self.flush()
            self.lock.close()
        _OPEN_STORES.discard(self)

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
