"""The store's writer thread: rounds saved off the caller's thread from immutable (deep-copied) snapshots."""

from __future__ import annotations

import concurrent.futures
import copy
import logging
import threading
from datetime import date, datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from ebtui.core.records import Round
from ebtui.core.store.files import StoreError, WriteAbandoned, check_id, write_ctx


class RoundWriter(Protocol):
    """What the saver needs of its store (ResultsStore is one): it writes in place, under the store's lock."""

    def save_round(self, round_: Round) -> Path: ...

    def round_path(self, round_id: str) -> Path: ...

    def merge_known_overrides(self, round_: Round) -> None: ...

log = logging.getLogger("ebtui.core.store")


#: values shared as they are between a round and its snapshot (they cannot change)
_IMMUTABLE = (str, int, float, bool, bytes, type(None), datetime, date, timedelta, Enum)


def _own(value: object) -> object:
    """`value` with every model, list, dict and set in it copied, immutable leaves shared."""
    if isinstance(value, _IMMUTABLE):
        return value
    if isinstance(value, BaseModel):
        out = copy.copy(value)  # its own __dict__, extras and fields-set
        fields = out.__dict__
        for key, item in fields.items():
            if not isinstance(item, _IMMUTABLE):
                fields[key] = _own(item)
        extra = out.__pydantic_extra__
        if extra:
            for key, item in extra.items():
                extra[key] = _own(item)
        return out
    if isinstance(value, list):
        return [_own(v) for v in value]
    if isinstance(value, dict):
        return {k: _own(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_own(v) for v in value)
    if isinstance(value, set | frozenset):
        return type(value)(_own(v) for v in value)
    return copy.deepcopy(value)


def frozen_copy(round_: Round) -> Round:
    """A copy of `round_` that shares no mutable object with it (every model, list, dict and set is its
    own; only immutable values — strings, numbers, datetimes, enums — are shared), so the writer thread
    can read it, and change it, while the engine goes on changing the original. A third of the time of
    `model_copy(deep=True)`: the phases' long texts are strings and need no copying."""
    copied = _own(round_)
    assert isinstance(copied, Round)  # a model is copied as its own class
    return copied


def _settle(fut: concurrent.futures.Future[Path], err: BaseException | None, path: Path) -> None:
    """Resolve a waiter's future, unless its waiter gave up (an awaiting task cancelled cancels it)."""
    try:
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(path)
    except concurrent.futures.InvalidStateError:
        pass


class BackgroundSaver:
    """Saves rounds from one writer thread, so a save never blocks its caller (the round engine's event
    loop, where every stream is read) on serialising, fsync or rename.

    `save_round(round_)` takes a snapshot (a deep copy: nothing the writer thread touches is shared with the
    caller, and the writer's own changes — overrides another writer put in the file — land on the copy
    only) and returns at once. Overrides the store already knows of are added to the caller's round on the
    caller's thread first, so the engine's live judgment sees a human's score as it did before. The thread writes, for each round, only
    the newest snapshot handed over (older ones not yet started are superseded, never written after a
    newer one), in the order of hand-off, through `store.save_round` (atomic file, index, flock).

    What a crash can lose. The thread never waits between writes: as soon as one write ends it starts on
    the newest snapshots. It works in passes (each writes every round with changes once, in the order of
    their last hand-off), so a snapshot handed over waits for at most the pass in progress, then is written
    in the next (or superseded by a newer one written in its place): with one round in flight it is on
    disk within two write times (a few milliseconds; ~10-25 ms with fsync on a busy disk), with C rounds
    within two passes of at most C writes. Each round file is thus at most one write behind the engine.
    A write whose round has a newer snapshot waiting by the time it reaches its fsync or its rename is
    given up there (its temporary file removed, the round file untouched) and the newer one is written
    next; a round's write is never given up twice in a row, so the bound above still holds, and the newest
    state lands sooner (the engine's final save need not wait for a stale write's fsync). A crash (kill -9, or power loss with fsync on) loses the
    phases in flight plus at most the transitions handed over in that window — a phase that has just
    finished is "in flight" until its write lands. `landed(round_id)`, `flush()` and `close()` wait for
    the writes; the round engine waits for a round's last write before it reports the round finished, so
    RoundFinished still means "on disk".

    A write that fails is logged, recorded in `errors`, raised by `landed()` for that round and by the
    round's next `save_round` (so the engine stops on a broken store as it would saving in place).
    """

    def __init__(self, store: RoundWriter) -> None:
        self.store = store
        self.errors: list[str] = []
        self.closed = False
        self._cond = threading.Condition()
        self._pending: dict[str, tuple[int, Round]] = {}  # round id -> (hand-off number, snapshot)
        self._handed: dict[str, int] = {}  # round id -> number of hand-offs so far
        self._written: dict[str, int] = {}  # round id -> hand-off number last written (or failed)
        self._failed: dict[str, BaseException] = {}  # round id -> error of its last write, not yet raised
        self._waiters: dict[str, list[tuple[int, concurrent.futures.Future[Path]]]] = {}
        self._busy = False
        self._abandoned: set[str] = set()  # rounds whose last write was given up for a newer snapshot
        self.abandoned = 0  # writes given up so (for measurements)
        self._thread = threading.Thread(target=self._work, name="ebtui-round-writer", daemon=True)
        self._thread.start()

    def save_round(self, round_: Round) -> Path:
        rid = check_id("round", round_.id)
        self.store.merge_known_overrides(round_)  # on the caller's thread: its live judgment sees them
        snapshot = frozen_copy(round_)
        with self._cond:
            err = self._failed.pop(rid, None)
            if err is not None:
                raise err
            if not self.closed:
                n = self._handed[rid] = self._handed.get(rid, 0) + 1
                self._pending.pop(rid, None)  # re-insert: writes follow the order of the last hand-offs
                self._pending[rid] = (n, snapshot)
                self._cond.notify_all()
                return self.store.round_path(rid)
        # after close(): in place, once the thread has written what it still held (order per round)
        if threading.current_thread() is not self._thread:
            self._thread.join()
        return self.store.save_round(snapshot)

    def landed(self, round_id: str) -> concurrent.futures.Future[Path]:
        """A future done when everything handed over for this round so far is on disk (its exception:
        the last write of the round failed)."""
        fut: concurrent.futures.Future[Path] = concurrent.futures.Future()
        with self._cond:
            target = self._handed.get(round_id, 0)
            if self._written.get(round_id, 0) >= target:
                self._resolve(fut, round_id)
            else:
                self._waiters.setdefault(round_id, []).append((target, fut))
        return fut

    def _resolve(self, fut: concurrent.futures.Future[Path], rid: str) -> None:
        err = self._failed.pop(rid, None)  # delivered here, not again by save_round
        _settle(fut, err, self.store.round_path(rid))

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self.closed:
                    self._cond.wait()
                if not self._pending:
                    return
                batch, self._pending = self._pending, {}
                self._busy = True
            for rid, (n, snapshot) in batch.items():
                err: BaseException | None = None
                # a newer snapshot of this round handed over meanwhile: give this write up before its
                # fsync/rename and write the newer one next — but never twice in a row, so a round whose
                # hand-offs come faster than its writes still reaches the disk every other write
                may_abandon = rid not in self._abandoned
                write_ctx.abandon = (lambda rid=rid: rid in self._pending) if may_abandon else None
                try:
                    self.store.save_round(snapshot)
                except WriteAbandoned:
                    self._abandoned.add(rid)
                    self.abandoned += 1
                    continue  # not written: its waiters wait for the newer snapshot (already pending)
                except StoreError as exc:  # a full disk...: one line, raised to the round's engine
                    log.debug("saving round %s failed: %s", rid, exc)
                    self.errors.append(f"{rid}: {exc}")
                    err = exc
                except Exception as exc:  # recorded; raised to the round's engine
                    log.exception("saving round %s failed", rid)
                    self.errors.append(f"{rid}: {exc}")
                    err = exc
                finally:
                    write_ctx.abandon = None
                self._abandoned.discard(rid)
                with self._cond:
                    self._written[rid] = n
                    if err is not None:
                        self._failed[rid] = err
                    else:
                        self._failed.pop(rid, None)
                    waiting = self._waiters.get(rid, [])
                    ready = [f for t, f in waiting if t <= n]
                    rest = [(t, f) for t, f in waiting if t > n]
                    for fut in ready:
                        _settle(fut, err, self.store.round_path(rid))
                    if ready and err is not None:
                        self._failed.pop(rid, None)  # delivered to the waiters
                    if rest:
                        self._waiters[rid] = rest
                    else:
                        self._waiters.pop(rid, None)
                    if self._handed.get(rid) == n and rid not in self._failed and rid not in self._waiters:
                        del self._handed[rid], self._written[rid]  # fully written: forget the round
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every snapshot handed over is written (False if `timeout` seconds passed first)."""
        if threading.current_thread() is self._thread:
            return True
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self) -> None:
        """Write what is pending, then stop the thread (later saves are written in place)."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join()
