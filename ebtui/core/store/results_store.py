"""ResultsStore: the facade over round files, the index and the writer thread (see the package docstring)."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ebtui.core.records import Override
from ebtui.core.store.entries import IndexDoc, OverrideKey
from ebtui.core.store.files import Stamp, StoreWriteError
from ebtui.core.store.index import MISSING
from ebtui.core.store.round_files import RoundFilesMixin
from ebtui.core.store.saver import BackgroundSaver
from ebtui.core.store.unreadable import unreadable_entries
from ebtui.settings import load_settings

log = logging.getLogger("ebtui.core.store")
_OPEN_STORES: weakref.WeakSet[ResultsStore] = weakref.WeakSet()
_ATEXIT_REGISTERED = False


def _flush_open_stores() -> None:
    for store in list(_OPEN_STORES):
        with contextlib.suppress(Exception):
            store.flush()


def _durable_default() -> bool:
    return load_settings().store_fsync


class ResultsStore(RoundFilesMixin):
    """Round files plus a batched TinyDB index. Thread-safe; safe for several processes on one root.

    `durable=True` (default; `EBTUI_STORE_FSYNC=0` turns it off) fsyncs each file and its directory, so
    a save survives power loss; without it a save is still atomic and survives the process being killed.
    """

    #: write index.json after this many saves at least ...
    FLUSH_MIN_SAVES = 64
    #: ... or a fraction 1/N of the index size, whichever is larger (keeps the cost per save flat) ...
    FLUSH_FRACTION = 8
    #: ... or when this many seconds have passed since the last index write
    FLUSH_SECONDS = 5.0
    #: parsed rounds kept in memory (checked against the file's stat before use)
    CACHE_SIZE = 512

    def __init__(self, root: Path | str, *, durable: bool | None = None) -> None:
        global _ATEXIT_REGISTERED
        self.root = Path(root)
        self.durable = _durable_default() if durable is None else durable
        self._lock = threading.RLock()
        self._lock_fd: int | None = None
        self._flock_depth = 0
        self._entries: dict[str, IndexDoc] | None = None  # round id -> index document
        self._dirty: set[str] = set()
        self._index_stamp: Stamp | None = None  # index.json as last read or written by us
        self._written: dict[str, Stamp] = {}  # round file stamps as we last wrote them
        #: overrides other writers put in round files this instance saves, kept on every later save
        self._foreign: dict[str, dict[OverrideKey, Override]] = {}
        self._cache: OrderedDict[str, tuple[Stamp, bytes]] = OrderedDict()
        self._last_flush = time.monotonic()
        #: how many times this instance wrote index.json (tests and benchmarks read it)
        self.index_writes = 0
        #: unreadable round files met while indexing: (path, reason); they are never deleted
        self.problems: list[tuple[str, str]] = []
        #: the first write this instance could not make (a full disk...): see StoreWriteError
        self.write_failure: StoreWriteError | None = None
        #: this instance's `.unindexed-*` marker while it has saves index.json lacks
        self._marker: Path | None = None
        #: the rounds folder's mtime when this instance last knew its index matched every round file
        #: (None: it may not); kept up to date across its own saves
        self._verified: int | None = None
        self._bg: BackgroundSaver | None = None
        #: index.check.json's filter columns, for load_rounds before the index is loaded
        self._light: tuple[Stamp | None, dict[str, list[Any]]] | None = None
        #: guards _foreign, which the writer thread and the callers of save_round both read
        self._foreign_lock = threading.Lock()
        _OPEN_STORES.add(self)
        if not _ATEXIT_REGISTERED:
            atexit.register(_flush_open_stores)
            _ATEXIT_REGISTERED = True

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.root)!r})"

    # ----------------------------------------------------------------------------------------- locking

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Thread lock + inter-process flock (re-entrant within this instance). Creates the root."""
        with self._lock:
            if self._flock_depth == 0:
                if self._lock_fd is None:
                    self.root.mkdir(parents=True, exist_ok=True)
                    try:
                        self.rounds_dir.mkdir()
                        if self._verified == MISSING:  # created empty by us: still matches the index
                            self._verified = self._dir_mtime()
                    except FileExistsError:
                        pass
                    self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            self._flock_depth += 1
            try:
                yield
            finally:
                self._flock_depth -= 1
                if self._flock_depth == 0 and self._lock_fd is not None:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    # ----------------------------------------------------------------------------------------- rounds

    def flush(self) -> None:
        """Wait for the background saver's pending round writes, then write pending index changes (also
        done on close() and at interpreter exit)."""
        bg = self._bg
        if bg is not None:
            bg.flush()  # outside self._lock: the writer thread needs it
        with self._lock:
            if self._entries is None or (not self._dirty and self._marker is None):
                return
            try:
                with self._writing():
                    if self._dirty:
                        self._flush_locked()
                    elif self._marker is not None:  # a write that failed left it; nothing is unindexed
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(self._marker)
                        self._marker = None
            except OSError as exc:  # a full disk: the round files stay the truth; the next open re-indexes
                (log.debug if self.write_failure is not None else log.warning)("%s: the index could not be written (%s); it is rebuilt from the round files "
                            "on the next open", self.index_path, exc.strerror or exc)

    def unreadable(self, *, deep: bool = True) -> list[tuple[str, str]]:
        """Every entry in rounds/ that cannot be read, as (path, reason), looked for afresh on each call
        (see ebtui.core.store.unreadable; `deep=False` skips the per-file stat that finds files changed in
        place); they are left out of queries, never deleted."""
        return unreadable_entries(self, deep=deep)

    def background_saver(self) -> BackgroundSaver:
        """This store's one BackgroundSaver (created on first use; closed by close())."""
        with self._lock:
            if self._bg is None or self._bg.closed:
                self._bg = BackgroundSaver(self)
            return self._bg

    def close(self) -> None:
        bg = self._bg
        if bg is not None:
            bg.close()  # outside self._lock: the writer thread needs it
        with self._lock:
            self.flush()
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None
        _OPEN_STORES.discard(self)

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



# --------------------------------------------------------------------------------------------- background saving
