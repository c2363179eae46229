"""Bounds on what the round engine takes from a model, and what it records: the reply size cap
(`EBTUI_MAX_REPLY_CHARS`; a longer reply fails the phase as "truncated", its text kept only in
`partial_response`), secrets redacted from recorded text, and the store's failed write as a reason to start
no more calls. See docs/ROUNDS.md, "Bounds and faults".
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol, TypeVar

from ebtui.core.store import StoreError, StoreWriteError
from ebtui.core.store.round_files import RoundFiles
from ebtui.providers.base import ProviderError
from ebtui.redact import redact

if TYPE_CHECKING:
    from ebtui.core.records import Round

__all__ = ["ReplyCap", "clip_error", "closing", "keep_round", "max_reply_chars", "no_room_for", "redact", "start_call", "stop_reason", "store_failure"]

T = TypeVar("T")
DEFAULT_MAX_REPLY_CHARS = 400_000
ENV_MAX_REPLY = "EBTUI_MAX_REPLY_CHARS"


def max_reply_chars(explicit: int | None = None) -> int:
    """The cap: `explicit`, else $EBTUI_MAX_REPLY_CHARS (a positive whole number), else the default."""
    if explicit is not None:
        return explicit
    raw = os.environ.get(ENV_MAX_REPLY, "").strip().replace("_", "")
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return DEFAULT_MAX_REPLY_CHARS


class _CapSpec(Protocol):
    @property
    def max_reply_chars(self) -> int | None: ...


class CallingEngine(Protocol):
    """What `start_call` needs of the round engine: its store (or saver), its spec, a wait for its saves."""

    @property
    def store(self) -> object: ...

    @property
    def spec(self) -> _CapSpec: ...

    async def landed(self) -> None: ...


class ReplyCap:
    """Counts a phase's streamed characters; `take(text)` gives the part within the cap and raises the
    "truncated" ProviderError (with everything kept so far) once the cap is passed."""

    def __init__(self, limit: int, model: str, saver: object = None) -> None:
        self.limit = limit
        self.model = model
        self.saver = saver
        self.size = 0

    def reset(self) -> None:
        """A retry is about to start: count afresh — unless a save failed meanwhile, then no retry starts
        (the phase fails; its next save raises the store's error)."""
        self.size = 0
        failure = store_failure(self.saver)
        if failure is not None:
            raise ProviderError("unavailable", f"{self.model}: not retried: {failure}")

    def take(self, text: str, kept: list[str]) -> str:
        self.size += len(text)
        if self.size <= self.limit:
            return text
        head = text[: max(0, len(text) - (self.size - self.limit))]
        raise self.error("".join(kept) + head)

    def check(self, text: str) -> None:
        """A whole reply (a completion that arrived without deltas)."""
        if len(text) > self.limit:
            raise self.error(text[: self.limit])

    def error(self, partial: str) -> ProviderError:
        return ProviderError(
            "truncated",
            f"{self.model}: the reply passed the size cap of {self.limit:,} characters ({ENV_MAX_REPLY}); "
            "it was cut there and is kept as partial text only",
            partial_text=partial,
        )


@contextlib.asynccontextmanager
async def closing(stream: AsyncIterator[T]) -> AsyncIterator[AsyncIterator[T]]:
    """A client's stream, closed on leaving (a reply cut at the cap stops the call there and then)."""
    try:
        yield stream
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()


def store_failure(saver: object) -> StoreWriteError | None:
    """The first write the store behind `saver` (a ResultsStore or its BackgroundSaver) could not make."""
    store = getattr(saver, "store", saver)
    failure = getattr(store, "write_failure", None)
    return failure if isinstance(failure, StoreWriteError) else None


#: below this much free space on the store's disk, a call waits for its round's saves to land first
LOW_SPACE_BYTES = 1 << 30


def _space_low(saver: object) -> bool:
    """The store's disk has less than LOW_SPACE_BYTES free (statvfs: microseconds), or cannot be asked."""
    root = getattr(getattr(saver, "store", saver), "root", None)
    if root is None:
        return False
    try:
        st = os.statvfs(root)
    except OSError:
        return True
    return st.f_bavail * st.f_frsize < LOW_SPACE_BYTES


#: room asked for beyond the round file's size before a call on a nearly full disk (a page or two: its reply)
ROOM_MARGIN_BYTES = 8192


def no_room_for(saver: object, round_id: str) -> StoreWriteError | None:
    """The store's ENOSPC error, recorded as its first failed write, when its disk has less room than the
    round's next save needs (the whole round file again, written beside the old one before the rename,
    plus ROOM_MARGIN_BYTES): that save would fail, so the call whose answer it holds is not worth starting.
    A save can still land on a "full" disk (the pages of a replaced file or a removed temporary file), which
    is why a full disk is not only known from a failed save. None when there is room, or it cannot be told."""
    store = getattr(saver, "store", saver)
    files = getattr(store, "files", None)
    if not isinstance(files, RoundFiles):
        return None
    try:
        st = os.statvfs(files.rounds_dir)
        size = files.round_path(round_id).stat().st_size
    except OSError:
        return None  # cannot tell (no round file yet): the failed-save check still holds
    if st.f_bavail * st.f_frsize >= size + ROOM_MARGIN_BYTES:
        return None
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return files.write_failed(full, files.rounds_dir, f"round {round_id}")


async def start_call(engine: CallingEngine, round_id: str, model: str) -> ReplyCap:
    """Before a model call: raise StoreWriteError when a save of the store failed — no call is started whose
    answer could not be saved. While the disk is low on space (LOW_SPACE_BYTES) the call first waits for the
    round's saves so far to land (its phase marked running), so a save that fails is known before the call,
    not after, and the disk must still have room for the round's next save (`no_room_for`); with space to
    spare that wait (a write, an fsync: milliseconds) is not paid. Else the call's reply cap."""
    if _space_low(engine.store):
        await engine.landed()
        if store_failure(engine.store) is None:
            no_room_for(engine.store, round_id)
    failure = store_failure(engine.store)
    if failure is not None:
        raise StoreWriteError(failure.directory, failure.reason, f"round {round_id}", failure.errno)
    return ReplyCap(max_reply_chars(engine.spec.max_reply_chars), model, engine.store)


#: an error message longer than this (a server echoing a huge body) is cut: errors are never content
MAX_ERROR_CHARS = 4000


def clip_error(text: str) -> str:
    if len(text) <= MAX_ERROR_CHARS:
        return text
    return f"{text[:MAX_ERROR_CHARS]}… [{len(text) - MAX_ERROR_CHARS:,} more characters not kept]"


def keep_round(exc: BaseException, round_: Round) -> None:
    """A failed save carries the round as played so far, so a front end can write it elsewhere."""
    if isinstance(exc, StoreWriteError) and exc.round is None:
        exc.round = round_


def stop_reason(exc: BaseException) -> str:
    """Why a round stopped early, as its `error` records it."""
    if isinstance(exc, StoreError):
        return str(exc)
    return f"internal: {type(exc).__name__}: {exc}"
