"""Round and index files on disk: the atomic write (temp file, fsync, rename, directory fsync), the TinyDB
storage that writes index.json atomically, and small stat/parse helpers."""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pydantic_core
from tinydb.storages import Storage

from ebtui.core.records import Round
from ebtui.redact import redact_bytes

if TYPE_CHECKING:
    from pydantic import JsonValue

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")

Stamp = tuple[int, int, int]


class StoreError(Exception):
    """A problem with the store (unreadable file, bad id); the message names the file."""


_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "input/output error",
}


class StoreWriteError(StoreError):
    """A write the store could not make (a full disk, a quota, a read-only or vanished folder). The write
    was atomic, so nothing already saved changed; `what` names what was not saved, `directory` where."""

    def __init__(self, directory: Path, reason: str, what: str, errno_: int | None = None) -> None:
        self.directory = directory
        self.reason = reason
        self.what = what
        self.errno = errno_
        #: the round as played so far, when a round engine's save failed (a front end can write it elsewhere)
        self.round: Round | None = None
        super().__init__(f"cannot write to {directory}: {reason} — {what} was not saved")


def write_error(exc: OSError, directory: Path, what: str) -> StoreWriteError:
    """The one-line StoreWriteError for an OSError met writing in `directory`."""
    reason = _REASONS.get(exc.errno or 0) or exc.strerror or type(exc).__name__
    return StoreWriteError(directory, reason, what, exc.errno)


def unreadable_reason(exc: BaseException) -> str:
    """Why a round file could not be read, in a few words (an OSError's reason, a JSON or schema problem)."""
    if isinstance(exc, OSError):
        return "cannot read: " + (_REASONS.get(exc.errno or 0) or exc.strerror or type(exc).__name__)
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = dict(errors()[0])
        except (IndexError, TypeError, ValueError):
            first = {}
        if first.get("type") == "json_invalid":
            return f"bad or truncated JSON ({first.get('msg', '')})"
        where = ".".join(str(p) for p in first.get("loc", ())) or "file"
        return f"not a round ({where}: {first.get('msg', type(exc).__name__)})"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def check_id(kind: str, id_: str) -> str:
    """`id_` if it is a safe file name for a round or tournament, else StoreError."""
    if not isinstance(id_, str) or not _ID_RE.match(id_) or ".." in id_:
        raise StoreError(f"invalid {kind} id {id_!r}: use letters, digits, '.', '_' and '-' only")
    return id_


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def round_bytes(round_: Round) -> bytes:
    """A round file's bytes: `model_dump_json(indent=2)` encoded as UTF-8, without the str in between."""
    return redact_bytes(round_.__pydantic_serializer__.to_json(round_, indent=2))


class WriteAbandoned(Exception):
    """A background write given up before its rename because a newer snapshot of the round is waiting
    (the file keeps its previous whole content; the newer snapshot is written next)."""


# the writer thread's "is a newer snapshot of this round waiting?" check, seen by the write it is doing
write_ctx = threading.local()


def atomic_write(path: Path, data: bytes, *, durable: bool = True, abandon: Callable[[], bool] | None = None) -> None:
    """Write `data` to `path` so a reader (or a crash) only ever sees the old or the new whole file.

    `abandon` (a callable, optional): asked before the fsync and before the rename; if it answers True
    the temporary file is removed, `path` is left as it was and WriteAbandoned is raised. Secrets are redacted
    from `data` first (ebtui.redact)."""
    data = redact_bytes(data)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if abandon is not None and abandon():
            raise WriteAbandoned(str(path))
        if durable:
            os.fsync(fd)
        if abandon is not None and abandon():
            raise WriteAbandoned(str(path))
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    if durable:
        fsync_dir(path.parent)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC around a bulk load: building hundreds of thousands of small objects otherwise
    triggers collections that each walk all of them (a third of the time of a 10,000-round open). Safe
    across threads: the GC ends enabled if it was enabled when the first of them began."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_json(raw: bytes) -> JsonValue:
    """Parse a large JSON document (index.json: 6 MB at 10,000 rounds) fast: pydantic-core's parser
    (about twice json.loads), with the cyclic GC paused."""
    with gc_paused():
        value: JsonValue = pydantic_core.from_json(raw, cache_strings="keys")
    return value


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def stat_stamp(path: Path) -> Stamp | None:
    try:
        return stamp_of(os.stat(path))
    except FileNotFoundError:
        return None


class TextCache:
    """Round files' text by round id, each with the stamp of the file it was read from or written to (a hit
    needs the same stamp), the least recently used dropped beyond CACHE_SIZE. It holds JSON text, not Round
    objects: callers get their own objects to mutate freely, and reading a file is the cost saved (parsing is
    fast in pydantic-core)."""

    #: parsed rounds kept in memory (checked against the file's stat before use)
    CACHE_SIZE = 512

    def __init__(self) -> None:
        self._items: OrderedDict[str, tuple[Stamp, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, rid: str, stamp: Stamp) -> bytes | None:
        with self._lock:
            hit = self._items.get(rid)
            if hit is None or hit[0] != stamp:
                return None
            self._items.move_to_end(rid)
            return hit[1]

    def put(self, rid: str, stamp: Stamp, text: bytes) -> None:
        with self._lock:
            self._items[rid] = (stamp, text)
            self._items.move_to_end(rid)
            while len(self._items) > self.CACHE_SIZE:
                self._items.popitem(last=False)


# --------------------------------------------------------------------------------------------- TinyDB parts


class AtomicJSONStorage(Storage):
    """TinyDB storage writing index.json atomically (TinyDB's JSONStorage rewrites the file in place, so a
    crash in the middle of a write would leave it truncated)."""

    def __init__(self, path: str | Path, durable: bool = True) -> None:
        super().__init__()
        self.path = Path(path)
        self.durable = durable

    def read(self) -> dict[str, dict[str, Any]] | None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        if not raw.strip():
            return None
        data = parse_json(raw)
        if not isinstance(data, dict):
            raise ValueError("index is not a JSON object")
        # TinyDB's Storage.read promises its tables as dicts of documents: unchecked, as in TinyDB's JSONStorage
        return cast("dict[str, dict[str, Any]]", data)

    def write(self, data: Mapping[str, object]) -> None:
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        atomic_write(self.path, payload, durable=self.durable)


# --------------------------------------------------------------------------------------------- index entries

