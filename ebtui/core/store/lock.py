"""The store's lock: a re-entrant thread lock for this instance, and while writing an exclusive flock on
<root>/.lock that every process using the root shares."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path


class StoreLock:
    """`mutex` guards one store instance's state across its threads; `writing()` adds the inter-process
    flock (re-entrant within the instance). The first `writing()` creates the root and opens the lock file,
    calling `on_open` in between (the index creates rounds/ there)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.mutex = threading.RLock()
        self.on_open: Callable[[], None] = _nothing
        self._fd: int | None = None
        self._depth = 0

    @property
    def path(self) -> Path:
        return self.root / ".lock"

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Thread lock + inter-process flock (re-entrant within this instance). Creates the root."""
        with self.mutex:
            if self._depth == 0:
                if self._fd is None:
                    self.root.mkdir(parents=True, exist_ok=True)
                    self.on_open()
                    self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the lock file (a later `writing()` opens it again)."""
        with self.mutex:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _nothing() -> None:
    pass
