"""Pieces of work computed ahead in a fork of the process, on the other core, while the process computes the
rest: the fork sends its plan, then each piece (pickled: the same floats) as it is done; the cached functions
take a planned piece by its key (`taken`) and compute any other themselves, as do they all when the fork
fails. The rules (when a fork is safe, what is killed when) are in docs/ARCHITECTURE.md's row of this module
and below; the report's pieces are in report_ahead.py."""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: a piece's plan, worked out in the fork: None when the cache holds it already, else (its cache file's name,
#: its key, how to compute it)
Plan = tuple[str, str, Callable[[], object]] | None
Piece = Callable[[], Plan]

#: a fork only while this process holds less than this: the fork's own work adds memory beside this process's
#: (the judge-bias section about 280 MB at 130,000 judgments), and a first report's process tree stays under
#: issue #38's gigabyte (measured: 165 MB here at 10,000 rounds, 506 MB at 100,000, which stays in one process)
FORK_BELOW_RSS = 400 * 2**20
#: from this many judgments on a cold report computes ahead in a fork (below it the pieces take less than the
#: fork costs: tens of milliseconds)
AHEAD_FROM = 1000
#: the fork computing ahead that this process's cached functions ask (`computing_ahead`'s)
_ACTIVE: list[Ahead] = []
#: True in the fork itself (it forks nothing more: variance_fits.forkable)
_IN_FORK: list[bool] = [False]


def busy() -> bool:
    """Whether a fork computes ahead, or this is that fork: then no other fork is started (two cores)."""
    return bool(_ACTIVE) or _IN_FORK[0]


def taken(name: str, key: str) -> tuple[bool, Any]:
    """(True, value) when the fork computing ahead has the cache entry `key` of the file `name` in its plan
    (waiting for it), else (False, None): compute it here."""
    return _ACTIVE[-1].take(name, key) if _ACTIVE else (False, None)


def blas_single_threaded() -> bool:
    """BLAS was told to use one thread (the environment `ebtui report` sets before numpy loads)."""
    return any(os.environ.get(v) == "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))


class Ahead:
    """The fork computing `pieces` (see the module's docstring) and what it has sent so far."""

    def __init__(self, pieces: Sequence[Piece]) -> None:
        r, w = os.pipe()
        _widen(w)
        self.pid = os.fork()
        if self.pid == 0:  # the fork: answer, then leave without running anything of the parent's
            code = 1
            try:
                os.close(r)
                _IN_FORK[0] = True
                _die_with_parent()
                with open(w, "wb") as out:
                    code = _serve(pieces, out)
            finally:
                os._exit(code)
        os.close(w)
        self.fd = r
        self.plan: set[tuple[str, str]] | None = None
        self.got: dict[tuple[str, str], object] = {}
        self.done = False

    def _read(self, n: int) -> bytes:
        """n bytes from the pipe (fewer: the fork left); EOFError when the fork sends nothing for STALL_SECONDS
        (stuck: its pieces are computed here)."""
        import select

        out = bytearray()
        while len(out) < n:
            if not select.select([self.fd], [], [], STALL_SECONDS)[0]:
                raise EOFError(f"nothing from the fork for {STALL_SECONDS} s")
            got = os.read(self.fd, min(n - len(out), PIPE_BYTES))
            if not got:
                break
            out += got
        return bytes(out)

    def _next(self) -> bool:
        """Read one message; False at the end (the fork left, failed, stalled or sent something unreadable)."""
        if self.done:
            return False
        try:
            head = self._read(8)
            size = int.from_bytes(head, "little") if len(head) == 8 else -1
            if not 0 < size <= MESSAGE_BYTES:
                raise EOFError("no message")
            msg = pickle.loads(self._read(size))
            if msg[0] == "plan":
                self.plan = {(str(n), str(k)) for n, k in msg[1]}
            else:
                self.got[(str(msg[1]), str(msg[2]))] = msg[3]
            return True
        except Exception:  # noqa: BLE001 - EOF, a cut or garbled message: whatever is missing is computed here
            self.done = True
            self.stop()
            return False

    def take(self, name: str, key: str) -> tuple[bool, Any]:
        while self.plan is None and self._next():
            pass
        want = (name, key)
        if self.plan is None or want not in self.plan:
            return False, None
        while want not in self.got and self._next():
            pass
        if want in self.got:
            return True, self.got.pop(want)
        return False, None

    def _reap(self) -> None:
        if self.pid:
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
            self.pid = 0

    def stop(self) -> None:
        """Kill the fork if it is still working (what it had not sent is not needed any more) and close the pipe."""
        import signal

        if self.pid:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _serve(pieces: Sequence[Piece], out: Any) -> int:
    """The fork's work: the plan (the pieces the caches lack), then each piece as it is computed; each message
    its pickle's length (8 bytes) and the pickle."""
    def send(msg: object) -> None:
        data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(len(data).to_bytes(8, "little") + data)
        out.flush()

    plans = [p for p in (piece() for piece in pieces) if p is not None]
    send(("plan", [(n, k) for n, k, _ in plans]))
    for name, key, compute in plans:
        send(("piece", name, key, compute()))
    return 0


#: the longest this process waits for the fork's next bytes before it computes the rest itself (a stuck fork)
STALL_SECONDS = 60.0
#: the largest message taken (a length above it: garbage)
MESSAGE_BYTES = 2**31
#: how much the pipe holds (Linux: up to /proc/sys/fs/pipe-max-size, 1 MB by default; else 64 KB): a piece
#: larger than what is left waits in the fork until this process reads it, and the pieces after it with it
PIPE_BYTES = 2**20


def _widen(fd: int) -> None:
    """The pipe's buffer made PIPE_BYTES where the system allows (F_SETPIPE_SZ), so the fork seldom waits."""
    import fcntl

    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)


def _die_with_parent() -> None:
    """Linux: the fork is killed when the process that made it dies (however it dies)."""
    import ctypes
    import signal

    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def safe_to_fork(below_rss: int) -> bool:
    """A fork of this process may compute: Linux, no other Python thread (a fork copies only the calling thread:
    a lock another one holds stays held in the child), and the process holds less than `below_rss` bytes (a
    fork's pages are shared with this process, but tools that add up the processes' resident sizes count them
    twice)."""
    import sys
    import threading

    if not (sys.platform.startswith("linux") and hasattr(os, "fork")) or threading.active_count() != 1:
        return False
    try:
        with open("/proc/self/statm", "rb") as fh:
            rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return False
    return rss < below_rss


@contextlib.contextmanager
def computing_ahead(pieces: Sequence[Piece]) -> Iterator[bool]:
    """Within the block, a fork computes `pieces` and the cached functions take them from it (`taken`); yields
    whether a fork was started: not when there is nothing to compute, nor where a fork is unsafe (`safe_to_fork`)
    or BLAS may run threads (`blas_single_threaded`: a fork of a process whose BLAS threads hold a lock can hang
    in the child). Leaving the block (an error, Ctrl-C) kills the fork; the fork dies with this process too."""
    if not pieces or busy() or not blas_single_threaded() or not safe_to_fork(FORK_BELOW_RSS):
        yield False
        return
    try:
        ahead = Ahead(pieces)
    except OSError:  # no fork to be had (out of processes or memory): everything here, as without one
        yield False
        return
    _ACTIVE.append(ahead)
    try:
        yield True
    finally:
        _ACTIVE.remove(ahead)
        ahead.stop()
