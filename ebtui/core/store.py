"""The results store: one human-readable JSON file per round (the source of truth) and a TinyDB index.

Layout under the store root (default ./saved, or --store / $EBTUI_STORE):
  rounds/<round_id>.json         one JSON file per round (indent=2), rewritten atomically after each phase
  tournaments/<id>.json          one file per tournament
  index.json                     a plain TinyDB database, table "rounds": one small document per round
                                 (field "id" is the round id); rebuilt from the round files whenever it
                                 is lost, corrupt or stale
  index.check.json               a small note of when index.json was last known to match the round files
                                 (index.json's stamp, the rounds folder's mtime and file count)
  .unindexed-<pid>-<n>           one empty marker per store instance with saves index.json lacks yet
  .lock                          an fcntl.flock lock file serialising writers across processes

Nothing is created until the first write.

Why the index is batched: TinyDB rewrites its whole file on every write, so writing it on every save would
make saving quadratic. The store keeps the index in memory, applies each save there, and writes index.json
only every so many saves (a fraction of the index size, so the cost per save stays flat), after a few
seconds, on an override, and on close()/exit. A crash can therefore leave index.json behind the round
files; on open the store compares each round file's size and mtime with its index document and re-reads
only the files that changed, so nothing saved is ever lost from queries.

Opening fast: that comparison stats every round file (a second at 10,000 rounds), so it is skipped when
index.check.json shows nothing can have changed since index.json was written: no `.unindexed-*` marker
exists (every writer creates its marker *before* its first round write after an index write and removes
it only once index.json holds all its saves — so a writer that crashed, or is still running with saves
not yet indexed, always forces the full check), index.json is the very file the note describes (inode,
mtime, size), and the rounds folder has the same mtime and number of round files (a file added, deleted
or renamed into place — every save is one — changes both). A round file rewritten *in place* by another
tool is not noticed by that check: `refresh()` or `rebuild_index()` (`ebtui rounds reindex`) picks it up.

Saving off the caller's thread: `background_saver()` gives the store's one BackgroundSaver (a writer
thread); the round engine uses it, see BackgroundSaver for what a crash can lose.

Several processes may write one store at once (a tournament and the TUI): every write to a round file and
every index write happens under an exclusive flock on `.lock`; index writes merge with what another process
wrote (per round, the document written last wins); and a save that finds the round file changed by someone
else since its own last write keeps the overrides it finds there, so a human's override made while the
round engine still holds the round in memory is never lost.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import fcntl
import gc
import heapq
import itertools
import json
import logging
import os
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic_core
from pydantic import ValidationError
from tinydb import TinyDB
from tinydb.middlewares import CachingMiddleware
from tinydb.storages import Storage

from ebtui.core.liveness import WRITER_KEY, interrupted
from ebtui.core.records import (
    CRITERIA,
    CRITERION_LABELS,
    Judgment,
    Override,
    PhaseStatus,
    Round,
    RoundStatus,
    Team,
    Tournament,
)

log = logging.getLogger(__name__)

INDEX_FORMAT = 1
ROLES = ("team_a", "team_b", "judge")
FILTERS = (
    "model", "role", "dilemma", "judge", "tournament", "status", "needs_review", "exchange", "schedule_key",
    "limit", "newest_first",
)
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: the index fields every filter and the sort order need, kept as columns in index.check.json so that
#: `load_rounds` on a freshly opened store need not parse the whole index (6 MB at 10,000 rounds)
LIGHT_FIELDS = (
    "id", "ts", "dilemma_id", "team_a", "team_b", "judge", "tournament_id", "status", "needs_review",
    "exchange_id", "schedule_key",
)


class StoreError(Exception):
    """A problem with the store (unreadable file, bad id); the message names the file."""


# --------------------------------------------------------------------------------------------- file helpers


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _round_bytes(round_: Round) -> bytes:
    """A round file's bytes: `model_dump_json(indent=2)` encoded as UTF-8, without the str in between."""
    return round_.__pydantic_serializer__.to_json(round_, indent=2)


class _Abandoned(Exception):
    """A background write given up before its rename because a newer snapshot of the round is waiting
    (the file keeps its previous whole content; the newer snapshot is written next)."""


# the writer thread's "is a newer snapshot of this round waiting?" check, seen by the write it is doing
_write_ctx = threading.local()


def atomic_write(path: Path, data: bytes, *, durable: bool = True, abandon: Any = None) -> None:
    """Write `data` to `path` so a reader (or a crash) only ever sees the old or the new whole file.

    `abandon` (a callable, optional): asked before the fsync and before the rename; if it answers True
    the temporary file is removed, `path` is left as it was and _Abandoned is raised."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if abandon is not None and abandon():
            raise _Abandoned(str(path))
        if durable:
            os.fsync(fd)
        if abandon is not None and abandon():
            raise _Abandoned(str(path))
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    if durable:
        _fsync_dir(path.parent)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
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


def _parse_json(raw: bytes) -> Any:
    """Parse a large JSON document (index.json: 6 MB at 10,000 rounds) fast: pydantic-core's parser
    (about twice json.loads), with the cyclic GC paused."""
    with _gc_paused():
        return pydantic_core.from_json(raw, cache_strings="keys")


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _stat_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        return _stamp(os.stat(path))
    except FileNotFoundError:
        return None


# --------------------------------------------------------------------------------------------- TinyDB parts


class _AtomicJSONStorage(Storage):
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
        data = _parse_json(raw)
        if not isinstance(data, dict):
            raise ValueError("index is not a JSON object")
        return data

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        atomic_write(self.path, payload, durable=self.durable)


# --------------------------------------------------------------------------------------------- index entries


def _iso(dt: Any) -> str | None:
    return dt.isoformat() if dt is not None else None


def index_entry(round_: Round, *, path: str, stamp: tuple[int, int, int], saved_ns: int) -> dict[str, Any]:
    """The small index document for a round (no transcript text)."""
    j = round_.judgment
    eff = {t: j.effective_scores(t) for t in ("a", "b")} if j else {}
    return {
        "id": round_.id,
        "dilemma_id": round_.dilemma_id,
        "dilemma_title": round_.dilemma_title,
        "team_a": round_.team_a_model,
        "team_b": round_.team_b_model,
        "judge": round_.judge_model,
        "tournament_id": round_.tournament_id,
        "exchange_id": round_.exchange_id or round_.id,
        "schedule_key": round_.schedule_key,
        "status": str(round_.status),
        # who is playing a running round, so readers can tell a killed one (see core/liveness.py)
        "writer": round_.settings.get(WRITER_KEY) if round_.status == RoundStatus.RUNNING else None,
        "has_judgment": j is not None,
        "needs_review": j.effective_needs_review() if j else False,
        # effective scores (overrides applied) as lists in CRITERIA order, None where missing
        "scores_a": list(eff["a"].as_dict().values()) if j else None,
        "scores_b": list(eff["b"].as_dict().values()) if j else None,
        "total_a": eff["a"].total() if j else None,
        "total_b": eff["b"].total() if j else None,
        "parsed_total_a": j.team_a_scores.total() if j else None,
        "parsed_total_b": j.team_b_scores.total() if j else None,
        "overrides": len(j.active_overrides()) if j else 0,
        "blind_judge": round_.blind_judge,
        "reused": any(p.reused_from for p in round_.phases),
        "timestamp": _iso(round_.timestamp),
        "ts": round_.timestamp.timestamp(),
        "path": path,
        "mtime_ns": stamp[1],
        "size": stamp[2],
        "saved_ns": saved_ns,
    }


def _order(e: dict[str, Any]) -> tuple[float, str]:
    return (e["ts"], e["id"])


def entry_status(entry: dict[str, Any]) -> str:
    """An index entry's status as readers should see it: a running round whose writer is gone is
    incomplete (interrupted)."""
    status = str(entry.get("status"))
    if interrupted(status, entry.get("writer")):
        return RoundStatus.INCOMPLETE.value
    return status


def _shown(entry: dict[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    status = entry_status(entry)
    if status != out.get("status"):
        out["status"] = status
        out["interrupted"] = True
    return out


def mark_interrupted(round_: Round) -> None:
    """A loaded round whose writer died mid-play, as readers should see it (in memory; the file is
    rewritten only when something saves the round again): incomplete, with the phase in flight failed."""
    stamp = round_.settings.get(WRITER_KEY)
    who = f"pid {stamp[1]}" if isinstance(stamp, list | tuple) and len(stamp) == 3 else "its process"
    reason = f"interrupted: the process playing this round ({who}) stopped"
    for ph in round_.phases:
        if ph.status in (PhaseStatus.RUNNING, PhaseStatus.PENDING):
            ph.status = PhaseStatus.FAILED
            ph.error_kind = "interrupted"
            ph.error = reason
    round_.status = RoundStatus.INCOMPLETE
    round_.error = round_.error or reason


def entry_scores(entry: dict[str, Any], team: Team) -> dict[str, int | None]:
    """An index document's effective scores for team "a" or "b" as {criterion: value} (empty: no judgment)."""
    values = entry.get(f"scores_{team}")
    return dict(zip(CRITERIA, values, strict=True)) if values else {}


def _valid_entry(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("id"), str)
        and isinstance(doc.get("saved_ns"), int)
        and isinstance(doc.get("mtime_ns"), int)
        and isinstance(doc.get("ts"), (int, float))
    )


def normalise_criterion(name: str) -> str:
    """A criterion's canonical name from its name or label in any case ("Framework awareness" works)."""
    key = re.sub(r"[\s-]+", "_", str(name).strip().lower())
    if key in CRITERIA:
        return key
    for crit, label in CRITERION_LABELS.items():
        if re.sub(r"[\s-]+", "_", label.lower()) == key:
            return crit
    raise ValueError(f"unknown criterion {name!r}; expected one of: {', '.join(CRITERIA)}")


def normalise_team(team: str) -> Team:
    t = str(team).strip().lower().removeprefix("team_").removeprefix("team ").strip()
    if t not in ("a", "b"):
        raise ValueError(f"unknown team {team!r}; expected 'a' or 'b'")
    return t  # type: ignore[return-value]


def _manual_judgment(round_: Round) -> Judgment:
    """An empty judgment for a round the judge did not score, so a human can score it by hand."""
    return Judgment(
        needs_review=True,
        review_reasons=["the judge gave no judgment; scored by hand"],
        parse_method="manual",
        judge_model=round_.judge_model,
    )


def _override_key(ov: Override) -> tuple[Any, ...]:
    return (ov.team, ov.criterion, ov.value, ov.note, ov.time.isoformat(), ov.author)


# --------------------------------------------------------------------------------------------- the store

_OPEN_STORES: weakref.WeakSet[ResultsStore] = weakref.WeakSet()
_ATEXIT_REGISTERED = False
_MARKER_IDS = itertools.count()
_MARKER_PREFIX = ".unindexed-"
_MISSING = -1  # the rounds folder's "mtime" while it does not exist


def _flush_open_stores() -> None:
    for store in list(_OPEN_STORES):
        with contextlib.suppress(Exception):
            store.flush()


def _durable_default() -> bool:
    return os.environ.get("EBTUI_STORE_FSYNC", "1").strip().lower() not in ("0", "false", "no", "off")


class ResultsStore:
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
        self._entries: dict[str, dict[str, Any]] | None = None  # round id -> index document
        self._dirty: set[str] = set()
        self._index_stamp: tuple[int, int, int] | None = None  # index.json as last read or written by us
        self._written: dict[str, tuple[int, int, int]] = {}  # round file stamps as we last wrote them
        #: overrides other writers put in round files this instance saves, kept on every later save
        self._foreign: dict[str, dict[tuple[Any, ...], Override]] = {}
        self._cache: OrderedDict[str, tuple[tuple[int, int, int], bytes]] = OrderedDict()
        self._last_flush = time.monotonic()
        #: how many times this instance wrote index.json (tests and benchmarks read it)
        self.index_writes = 0
        #: unreadable round files met while indexing: (path, reason); they are never deleted
        self.problems: list[tuple[str, str]] = []
        #: this instance's `.unindexed-*` marker while it has saves index.json lacks
        self._marker: Path | None = None
        #: the rounds folder's mtime when this instance last knew its index matched every round file
        #: (None: it may not); kept up to date across its own saves
        self._verified: int | None = None
        self._bg: BackgroundSaver | None = None
        #: index.check.json's filter columns, for load_rounds before the index is loaded
        self._light: tuple[tuple[int, int, int] | None, dict[str, list[Any]]] | None = None
        _OPEN_STORES.add(self)
        if not _ATEXIT_REGISTERED:
            atexit.register(_flush_open_stores)
            _ATEXIT_REGISTERED = True

    # ----------------------------------------------------------------------------------------- paths

    @property
    def rounds_dir(self) -> Path:
        return self.root / "rounds"

    @property
    def tournaments_dir(self) -> Path:
        return self.root / "tournaments"

    @property
    def index_path(self) -> Path:
        return self.root / "index.json"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

    @property
    def check_path(self) -> Path:
        return self.root / "index.check.json"

    @staticmethod
    def _check_id(kind: str, id_: str) -> str:
        if not isinstance(id_, str) or not _ID_RE.match(id_) or ".." in id_:
            raise StoreError(f"invalid {kind} id {id_!r}: use letters, digits, '.', '_' and '-' only")
        return id_

    def round_path(self, round_id: str) -> Path:
        return self.rounds_dir / f"{self._check_id('round', round_id)}.json"

    def tournament_path(self, tournament_id: str) -> Path:
        return self.tournaments_dir / f"{self._check_id('tournament', tournament_id)}.json"

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
                        if self._verified == _MISSING:  # created empty by us: still matches the index
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
                if self._flock_depth == 0:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    # ----------------------------------------------------------------------------------------- rounds

    def save_round(self, round_: Round) -> Path:
        """Write the round's file atomically and update the index (in memory; written in batches).

        If another writer changed the file since this instance last wrote it (an override from the TUI
        or `ebtui rounds override`), the overrides found there are kept and added to `round_` itself.
        """
        rid = self._check_id("round", round_.id)
        with self._lock:
            self._ensure_loaded()
            with self._writing():
                path = self.round_path(rid)
                self._keep_foreign_overrides(round_, path)
                data = _round_bytes(round_)
                self._write_round_file(path, data)
                self._after_write(rid, round_, path, data)
                if self._flush_due():
                    self._flush_locked()
        return path

    def _write_round_file(self, path: Path, data: bytes) -> None:
        """The atomic write of a round file (caller holds the flock), with the bookkeeping that lets the
        next open trust index.json: the marker first, then whether the folder changed only by us."""
        self._mark_unindexed()
        before = self._dir_mtime()
        try:
            atomic_write(path, data, durable=self.durable, abandon=getattr(_write_ctx, "abandon", None))
        except _Abandoned:  # a temporary file came and went: the folder still changed only by us
            self._verified = self._dir_mtime() if before == self._verified else None
            raise
        after = self._dir_mtime()
        self._verified = after if before == self._verified else None

    def _dir_mtime(self) -> int:
        try:
            return os.stat(self.rounds_dir).st_mtime_ns
        except FileNotFoundError:
            return _MISSING

    def _mark_unindexed(self) -> None:
        """Before the first round write index.json will lack: leave a marker, so an open (by any process)
        does the full check until this instance has written its index (or is known dead)."""
        if self._marker is not None:
            return
        path = self.root / f"{_MARKER_PREFIX}{os.getpid()}-{next(_MARKER_IDS)}"
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        if self.durable:
            _fsync_dir(self.root)
        self._marker = path

    def _markers(self) -> list[str]:
        try:
            return [n for n in os.listdir(self.root) if n.startswith(_MARKER_PREFIX)]
        except FileNotFoundError:
            return []

    def _count_files(self) -> int:
        try:
            return sum(1 for n in os.listdir(self.rounds_dir) if n.endswith(".json") and not n.startswith("."))
        except FileNotFoundError:
            return 0

    def _after_write(self, rid: str, round_: Round, path: Path, data: bytes) -> None:
        stamp = _stamp(os.stat(path))
        self._written[rid] = stamp
        assert self._entries is not None
        self._entries[rid] = index_entry(
            round_, path=f"rounds/{rid}.json", stamp=stamp, saved_ns=time.time_ns()
        )
        self._dirty.add(rid)
        self._cache_put(rid, stamp, data)

    def _keep_foreign_overrides(self, round_: Round, path: Path) -> None:
        """Carry over overrides another writer put in the file, now and on every later save of the round
        (the round engine may replace its whole judgment after a human has already scored by hand)."""
        rid = round_.id
        current = _stat_stamp(path)
        if current is not None and current != self._written.get(rid):
            disk = self._disk_overrides(path)
            if disk:
                known = self._foreign.setdefault(rid, {})
                for ov in disk:
                    known.setdefault(_override_key(ov), ov)
        foreign = self._foreign.get(rid)
        if not foreign:
            return
        if round_.judgment is None:
            round_.judgment = _manual_judgment(round_)
        have = {_override_key(o) for o in round_.judgment.overrides}
        extra = [o for k, o in foreign.items() if k not in have]
        if extra:
            round_.judgment.overrides = sorted([*round_.judgment.overrides, *extra], key=lambda o: o.time)

    @staticmethod
    def _disk_overrides(path: Path) -> list[Override]:
        try:
            judgment = json.loads(path.read_bytes()).get("judgment")
            if not isinstance(judgment, dict):
                return []
            return [Override.model_validate(o) for o in judgment.get("overrides") or []]
        except (OSError, ValueError, AttributeError, TypeError):
            return []  # an unreadable file is simply replaced by the new whole round

    def load_round(self, round_id: str) -> Round:
        path = self.round_path(round_id)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise StoreError(f"round {round_id!r} not found: {path} does not exist") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot read: {exc.strerror}") from None
        stamp = _stamp(st)
        with self._lock:
            hit = self._cache.get(round_id)
            if hit is not None and hit[0] == stamp:
                self._cache.move_to_end(round_id)
                text = hit[1]
            else:
                text = None
        if text is None:
            try:
                text = path.read_bytes()
            except OSError as exc:
                raise StoreError(f"{path}: cannot read: {exc}") from None
        try:
            round_ = Round.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0] if exc.errors() else {}
            where = ".".join(str(p) for p in first.get("loc", ())) or "file"
            raise StoreError(f"{path}: not a readable round ({where}: {first.get('msg', exc)})") from None
        with self._lock:
            self._cache_put(round_id, stamp, text)
        if interrupted(round_.status, round_.settings.get(WRITER_KEY)):
            mark_interrupted(round_)
        return round_

    def _problem(self, path: str, reason: str) -> None:
        if (path, reason) not in self.problems:
            self.problems.append((path, reason))

    def _cache_put(self, rid: str, stamp: tuple[int, int, int], text: bytes) -> None:
        # The cache holds JSON text, not Round objects: callers get their own objects to mutate freely,
        # and reading a file is the cost saved (parsing is fast in pydantic-core).
        self._cache[rid] = (stamp, text)
        self._cache.move_to_end(rid)
        while len(self._cache) > self.CACHE_SIZE:
            self._cache.popitem(last=False)

    def query(self, **filters: Any) -> list[dict[str, Any]]:
        """Index documents matching all filters, oldest first (`newest_first=True` reverses; `limit=N`).

        Filters: model (any role, or the one named by role: team_a, team_b or judge), dilemma (id),
        judge (model), tournament (id), status (one or several), needs_review (bool, after overrides),
        exchange (exchange id), schedule_key.
        """
        match, limit, newest_first = self._matcher(filters)
        with self._lock:
            self._ensure_loaded()
            self._merge_disk_index_if_changed()
            assert self._entries is not None
            rows = [e for e in self._entries.values() if match(e)]
        with _gc_paused():
            if limit is not None and limit < len(rows):  # the first page of a big store: no full sort
                pick = heapq.nlargest if newest_first else heapq.nsmallest
                rows = pick(limit, rows, key=_order)
            else:
                rows.sort(key=_order, reverse=newest_first)
            return [_shown(e) for e in rows]

    def load_rounds(self, **filters: Any) -> list[Round]:
        """The rounds `query(**filters)` names, loaded from their files. An unreadable file is skipped,
        logged and recorded in `problems` (never deleted)."""
        ids = self._light_ids(filters)
        if ids is None:
            ids = [e["id"] for e in self.query(**filters)]
        out: list[Round] = []
        with _gc_paused():  # 182 rounds are ~10,000 tracked objects: one collection after, not dozens during
            for rid in ids:
                try:
                    out.append(self.load_round(rid))
                except StoreError as exc:
                    log.warning("%s", exc)
                    self._problem(str(self.round_path(rid)), str(exc))
        return out

    def _light_ids(self, filters: dict[str, Any]) -> list[str] | None:
        """The ids `query(**filters)` would give, from index.check.json's columns, while this instance has
        not loaded the index yet and the note is trusted (else None: use the index)."""
        spec = self._filter_spec(filters)
        with self._lock:
            if self._entries is not None:
                return None
            stamp = _stat_stamp(self.index_path)
            light = self._light
            if light is None or light[0] != stamp:
                trusted = self._trusted_note(stamp)
                cols = trusted[1].get("columns") if trusted is not None else None
                if (
                    not isinstance(cols, dict)
                    or set(cols) != set(LIGHT_FIELDS)
                    or not all(isinstance(c, list) for c in cols.values())
                    or len({len(c) for c in cols.values()}) != 1
                ):
                    return None
                light = self._light = (stamp, cols)
        cols = light[1]
        model, seats, statuses, plain, limit, newest_first = spec
        equal = [(cols[key], want) for key, want in plain]
        if model is not None and len(seats) == 1:
            equal.insert(0, (cols[seats[0]], model))
        idx: list[int] | None = None
        for col, want in equal:
            idx = [i for i, v in enumerate(col) if v == want] if idx is None else [i for i in idx if col[i] == want]
        if idx is None:
            idx = list(range(len(cols["id"])))
        if model is not None and len(seats) > 1:
            a, b, j = (cols[s] for s in seats)
            idx = [i for i in idx if a[i] == model or b[i] == model or j[i] == model]
        if statuses is not None:
            st = cols["status"]
            if any(st[i] == RoundStatus.RUNNING.value for i in idx):
                return None  # a running round may be interrupted: that takes the index's writer stamps
            idx = [i for i in idx if st[i] in statuses]
        ids, ts = cols["id"], cols["ts"]
        try:
            idx.sort(key=lambda i: (ts[i], ids[i]), reverse=newest_first)
        except TypeError:  # a note edited by hand: the index decides
            return None
        if limit is not None:
            idx = idx[:limit]
        return [ids[i] for i in idx]

    @classmethod
    def _matcher(cls, filters: dict[str, Any]) -> tuple[Any, int | None, bool]:
        model, seats, statuses, plain, limit, newest_first = cls._filter_spec(filters)

        def match(e: dict[str, Any]) -> bool:
            if model is not None and not any(e.get(s) == model for s in seats):
                return False
            if statuses is not None and entry_status(e) not in statuses:
                return False
            return all(e.get(key) == want for key, want in plain)

        return match, limit, newest_first

    @staticmethod
    def _filter_spec(
        filters: dict[str, Any],
    ) -> tuple[Any, tuple[str, ...], set[str] | None, list[tuple[str, Any]], int | None, bool]:
        """Check the filters; (model, its seats, statuses, [(index field, wanted value)], limit,
        newest_first)."""
        unknown = sorted(set(filters) - set(FILTERS))
        if unknown:
            raise TypeError(f"unknown filter(s) {', '.join(unknown)}; known filters: {', '.join(FILTERS)}")
        f = {k: v for k, v in filters.items() if v is not None}
        role = f.get("role")
        if role is not None:
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r}; expected one of: {', '.join(ROLES)}")
            if "model" not in f:
                raise ValueError("the role filter needs a model filter (role says which seat the model had)")
        statuses: set[str] | None = None
        if "status" in f:
            raw = [f["status"]] if isinstance(f["status"], str) else list(f["status"])
            valid = {s.value for s in RoundStatus}
            bad = [s for s in raw if str(s) not in valid]
            if bad:
                raise ValueError(f"unknown status {bad[0]!r}; expected one of: {', '.join(sorted(valid))}")
            statuses = {str(s) for s in raw}
        limit = f.get("limit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise ValueError(f"limit must be a non-negative integer, not {limit!r}")
        if "needs_review" in f and not isinstance(f["needs_review"], bool):
            raise ValueError(f"needs_review must be True or False, not {f['needs_review']!r}")
        model = f.get("model")
        seats = (role,) if role else ROLES
        plain = [
            (key, f[name])
            for name, key in (
                ("dilemma", "dilemma_id"), ("judge", "judge"), ("tournament", "tournament_id"),
                ("needs_review", "needs_review"), ("exchange", "exchange_id"), ("schedule_key", "schedule_key"),
            )
            if name in f
        ]
        return model, seats, statuses, plain, limit, bool(f.get("newest_first", False))

    # ----------------------------------------------------------------------------------------- overrides

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
        t = normalise_team(team)
        crit = normalise_criterion(criterion)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10):
            raise ValueError(f"score must be a whole number from 1 to 10, not {value!r}")
        self._check_id("round", round_id)
        with self._lock:
            self._ensure_loaded()
            with self._writing():
                round_ = self.load_round(round_id)
                judgment = round_.judgment
                if value is None and (judgment is None or (t, crit) not in judgment.active_overrides()):
                    raise ValueError(f"round {round_id}: team {t.upper()} {crit} has no override to clear")
                if judgment is None:
                    judgment = round_.judgment = _manual_judgment(round_)
                parsed = getattr(judgment.parsed_scores(t), crit)
                override = Override(
                    team=t, criterion=crit, parsed_value=parsed, value=value, note=note, author=author
                )
                judgment.overrides.append(override)
                # a round engine using this same store instance still holds the round without it
                self._foreign.setdefault(round_id, {})[_override_key(override)] = override
                path = self.round_path(round_id)
                data = _round_bytes(round_)
                self._write_round_file(path, data)
                self._after_write(round_id, round_, path, data)
                self._flush_locked()  # overrides are rare and precious: index them now
        return round_

    # ----------------------------------------------------------------------------------------- tournaments

    def save_tournament(self, tournament: Tournament) -> Path:
        path = self.tournament_path(tournament.id)
        with self._writing():
            self.tournaments_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(path, tournament.model_dump_json(indent=2).encode("utf-8"), durable=self.durable)
        return path

    def load_tournament(self, tournament_id: str) -> Tournament:
        path = self.tournament_path(tournament_id)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise StoreError(f"tournament {tournament_id!r} not found: {path} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"{path}: cannot read: {exc}") from None
        try:
            return Tournament.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0] if exc.errors() else {}
            raise StoreError(f"{path}: not a readable tournament ({first.get('msg', exc)})") from None

    def list_tournaments(self) -> list[Tournament]:
        """Every readable tournament, oldest first; unreadable files are logged and skipped."""
        out: list[Tournament] = []
        if not self.tournaments_dir.is_dir():
            return out
        for path in sorted(self.tournaments_dir.glob("*.json")):
            if path.name.startswith("."):
                continue
            try:
                out.append(self.load_tournament(path.stem))
            except StoreError as exc:
                log.warning("%s", exc)
                self._problem(str(path), str(exc))
        out.sort(key=lambda t: t.created)
        return out

    # ----------------------------------------------------------------------------------------- the index

    def _read_index(self) -> dict[str, dict[str, Any]]:
        """index.json through TinyDB; raises on a corrupt file."""
        db = TinyDB(self.index_path, durable=self.durable, storage=_AtomicJSONStorage)
        try:
            # the table's raw documents: Table.all() would wrap each in a Document copy (slow at 10,000)
            table = (db.storage.read() or {}).get("rounds") or {}
        finally:
            db.close()
        if not isinstance(table, dict):
            raise ValueError("the rounds table is not a JSON object")
        return {doc["id"]: doc for doc in table.values() if _valid_entry(doc)}

    def _ensure_loaded(self) -> None:
        """First use: load index.json, then bring it up to date with the round files."""
        if self._entries is not None:
            return
        entries: dict[str, dict[str, Any]] = {}
        self._index_stamp = _stat_stamp(self.index_path)
        readable = False
        if self._index_stamp is not None:
            try:
                entries = self._read_index()
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

    def _trusted_note(self, index_stamp: tuple[int, int, int] | None) -> tuple[int, dict[str, Any]] | None:
        if index_stamp is None:
            return None
        try:
            raw = self.check_path.read_bytes()
        except OSError:
            return None
        try:
            note = _parse_json(raw)
        except ValueError:
            return None
        ok = (
            isinstance(note, dict)
            and note.get("format") == INDEX_FORMAT
            and note.get("index") == list(index_stamp)
        )
        if not ok or self._markers():
            return None
        mtime = self._dir_mtime()
        if mtime == _MISSING or note.get("rounds_mtime_ns") != mtime or note.get("count") != self._count_files():
            return None
        return mtime, note

    def _write_check(self) -> None:
        """Note that index.json matches every round file (caller holds the flock; the index is on disk) —
        only when that is known: no writer has unindexed saves, and the rounds folder changed only by this
        instance's own saves since it last compared the index with the files."""
        if self._index_stamp is None or self._verified is None or self._verified == _MISSING:
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
                pid = int(name[len(_MARKER_PREFIX):].split("-", 1)[0])
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

    def _scan(self) -> dict[str, tuple[int, int, int]]:
        out: dict[str, tuple[int, int, int]] = {}
        try:
            it = os.scandir(self.rounds_dir)
        except FileNotFoundError:
            return out
        with it:
            for de in it:
                name = de.name
                if name.startswith(".") or not name.endswith(".json"):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    out[name[:-5]] = _stamp(de.stat())
        return out

    def _index_file(self, rid: str, stamp: tuple[int, int, int]) -> dict[str, Any] | None:
        path = self.rounds_dir / f"{rid}.json"
        try:
            text = path.read_bytes()
            round_ = Round.model_validate_json(text)
        except (OSError, UnicodeDecodeError, ValidationError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._problem(str(path), reason)
            log.warning("%s: unreadable round file skipped (%s)", path, reason)
            return None
        if round_.id != rid:
            self._problem(str(path), f"file name does not match round id {round_.id!r}")
            log.warning("%s: round id %r does not match the file name; skipped", path, round_.id)
            return None
        self._cache_put(rid, stamp, text)
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
                with self._writing():
                    self._clean_dead_markers()
                    self._flush_locked(force=True)
            except OSError as exc:  # a read-only store can still be browsed
                log.warning("%s: cannot write the index (%s); using it in memory", self.index_path, exc)
        else:
            try:  # the index matched: only note that (so the next open skips this check)
                with self._writing():
                    self._clean_dead_markers()
                    self._write_check()
            except OSError as exc:  # read-only: nothing to fix, every open does the full check
                log.debug("%s: cannot note the checked index (%s)", self.check_path, exc)
        return changed

    def refresh(self) -> int:
        """Pick up rounds other processes saved but have not indexed yet (a directory scan)."""
        with self._lock:
            if self._entries is None:
                self._ensure_loaded()
                return 0
            self._merge_disk_index_if_changed()
            return self._reconcile()

    def _merge_disk_index_if_changed(self) -> None:
        """Another process wrote index.json: take its newer documents (cheap: one stat when unchanged)."""
        stamp = _stat_stamp(self.index_path)
        if stamp is None or stamp == self._index_stamp:
            return
        try:
            disk = self._read_index()
        except (OSError, ValueError, TypeError, AttributeError):
            return  # being replaced or corrupt; the round files stay the truth
        self._index_stamp = stamp
        self._merge(disk)

    def _merge(self, disk: dict[str, dict[str, Any]]) -> None:
        assert self._entries is not None
        for rid, e in disk.items():
            mine = self._entries.get(rid)
            if mine is None or e["saved_ns"] > mine["saved_ns"]:
                self._entries[rid] = e
                self._dirty.discard(rid)

    def _flush_due(self) -> bool:
        if not self._dirty:
            return False
        assert self._entries is not None
        if len(self._dirty) >= max(self.FLUSH_MIN_SAVES, len(self._entries) // self.FLUSH_FRACTION):
            return True
        return time.monotonic() - self._last_flush >= self.FLUSH_SECONDS

    def _flush_locked(self, *, force: bool = False) -> None:
        """Write index.json (caller holds the flock): merge in what other writers flushed, then write."""
        if self._entries is None or (not self._dirty and not force):
            return
        stamp = _stat_stamp(self.index_path)
        if stamp is not None and stamp != self._index_stamp:
            try:
                self._merge(self._read_index())
            except (OSError, ValueError, TypeError, AttributeError):
                pass  # corrupt on disk: ours (plus the round files) replaces it
        db = TinyDB(self.index_path, durable=self.durable, storage=CachingMiddleware(_AtomicJSONStorage))
        try:
            db.drop_tables()  # all of this lands in the cache; close() writes the file once
            db.table("rounds").insert_multiple(self._entries.values())
            db.table("meta").insert(
                {"format": INDEX_FORMAT, "rounds": len(self._entries), "written_ns": time.time_ns()}
            )
        finally:
            db.close()
        self._index_stamp = _stat_stamp(self.index_path)
        self._dirty.clear()
        self._last_flush = time.monotonic()
        self.index_writes += 1
        if self._marker is not None:  # index.json now holds every save of this instance
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._marker)
            self._marker = None
        self._write_check()

    def flush(self) -> None:
        """Wait for the background saver's pending round writes, then write pending index changes (also
        done on close() and at interpreter exit)."""
        bg = self._bg
        if bg is not None:
            bg.flush()  # outside self._lock: the writer thread needs it
        with self._lock:
            if self._entries is None or (not self._dirty and self._marker is None):
                return
            with self._writing():
                if self._dirty:
                    self._flush_locked()
                elif self._marker is not None:  # a write that failed left it; nothing is unindexed
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(self._marker)
                    self._marker = None

    def rebuild_index(self) -> int:
        """Rebuild index.json from the round files alone. Unreadable files are skipped, logged and listed
        in `problems`, never deleted. Returns the number of rounds indexed."""
        with self._lock, self._writing():
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
            self._flush_locked(force=True)
            return len(self._entries)

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


class BackgroundSaver:
    """Saves rounds from one writer thread, so a save never blocks its caller (the round engine's event
    loop, where every stream is read) on serialising, fsync or rename.

    `save_round(round_)` takes a snapshot (the round and its phases copied shallowly — the engine replaces
    lists and mutates only phases in place) and returns at once. The thread writes, for each round, only
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

    def __init__(self, store: ResultsStore) -> None:
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
        rid = ResultsStore._check_id("round", round_.id)
        snapshot = round_.model_copy(update={"phases": [p.model_copy() for p in round_.phases]})
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
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(self.store.round_path(rid))

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
                _write_ctx.abandon = (lambda rid=rid: rid in self._pending) if may_abandon else None
                try:
                    self.store.save_round(snapshot)
                except _Abandoned:
                    self._abandoned.add(rid)
                    self.abandoned += 1
                    continue  # not written: its waiters wait for the newer snapshot (already pending)
                except Exception as exc:  # recorded; raised to the round's engine
                    log.exception("saving round %s failed", rid)
                    self.errors.append(f"{rid}: {exc}")
                    err = exc
                finally:
                    _write_ctx.abandon = None
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
                        if err is not None:
                            fut.set_exception(err)
                        else:
                            fut.set_result(self.store.round_path(rid))
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
