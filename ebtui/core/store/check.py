"""What in a store cannot be read, found afresh each time it is asked (`unreadable_entries`), and `ebtui store
check` (`check_store`): the unreadable entries, the index, stale temporary files — and with repair, the index
rebuilt and the stale files removed. Nothing here ever deletes or rewrites a round file."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ebtui.core.records import Round
from ebtui.core.store.files import unreadable_reason
from ebtui.core.store.index import MARKER_PREFIX

if TYPE_CHECKING:
    from ebtui.core.store.results_store import ResultsStore

#: a preflight probe file (no pid in its name) older than this is left over from a killed process
PROBE_STALE_S = 60.0


def why_unreadable(path: Path, rid: str) -> str | None:
    """Why the round file at `path` cannot be used (None: it can, or it is gone). Never blocks: a FIFO or a
    device is not opened."""
    try:
        st = os.stat(path)  # follows links: a loop is ELOOP, a dangling link FileNotFoundError
    except FileNotFoundError:
        return "dangling symbolic link" if os.path.islink(path) else None
    except OSError as exc:
        return unreadable_reason(exc)
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    try:
        round_ = Round.model_validate_json(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValidationError, ValueError) as exc:
        return unreadable_reason(exc)
    if round_.id != rid:
        return f"file name does not match round id {round_.id!r}"
    return None


def unreadable_entries(store: ResultsStore, *, deep: bool = True) -> list[tuple[str, str]]:
    """Every entry in `rounds/` the store cannot read, as (path, reason), looked for afresh on every call: a
    folder listing compared with the index, reading only the entries the index lacks — and with `deep`, one
    stat per entry, so a file changed in place since it was indexed (truncated) is read again too (about
    30 ms per 1,000 rounds). An entry found unreadable is left out of the store's queries from then on; it
    is never deleted."""
    out: list[tuple[str, str]] = []
    with store._lock:
        store._ensure_loaded()
        entries = store._entries
        assert entries is not None
        try:
            it = os.scandir(store.rounds_dir)
        except FileNotFoundError:
            return out
        except OSError as exc:
            return [(str(store.rounds_dir), unreadable_reason(exc))]
        suspects: list[str] = []
        with it:
            for de in it:
                name = de.name
                if name[0] == "." or not name.endswith(".json"):
                    continue
                known = entries.get(name[:-5])
                if known is None:
                    suspects.append(name)
                elif deep:
                    try:
                        st = de.stat()
                    except OSError:
                        suspects.append(name)
                        continue
                    if st.st_mtime_ns != known.get("mtime_ns") or st.st_size != known.get("size"):
                        suspects.append(name)
        for name in sorted(suspects):
            rid = name[:-5]
            path = store.rounds_dir / name
            reason = why_unreadable(path, rid)
            if reason is None:
                continue
            out.append((str(path), reason))
            store._problem(str(path), reason)
            if entries.pop(rid, None) is not None:
                store._dirty.add(rid)
    return out


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def stale_temp_files(root: Path) -> list[Path]:
    """Temporary files a killed process left: atomic-write temps (`.<name>.<pid>.<thread>.tmp`) and index
    markers (`.unindexed-<pid>-<n>`) of processes that are gone, and preflight probes older than a minute."""
    out: list[Path] = []
    now = time.time()
    for folder in (root, root / "rounds", root / "tournaments"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.startswith("."):
                continue
            path = folder / name
            pid: int | None = None
            if name.endswith(".tmp"):
                parts = name.rsplit(".", 3)
                if len(parts) == 4 and parts[1].isdigit():
                    pid = int(parts[1])
            elif name.startswith(MARKER_PREFIX):
                head = name[len(MARKER_PREFIX):].split("-", 1)[0]
                pid = int(head) if head.isdigit() else None
            elif name.startswith(".ebtui-probe-"):
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime > PROBE_STALE_S:
                        out.append(path)
                continue
            if pid is not None and not _pid_alive(pid):
                out.append(path)
    return sorted(out)


def remove_stale_temp_files(root: Path) -> list[Path]:
    """Remove what `stale_temp_files` finds; the paths removed."""
    removed = []
    for path in stale_temp_files(root):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            continue
        removed.append(path)
    return removed


@dataclass
class CheckReport:
    """What `check_store` found and did."""

    root: Path
    rounds: int = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    stale: list[Path] = field(default_factory=list)
    index_problem: str | None = None
    done: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.unreadable and not self.stale and self.index_problem is None

    def lines(self) -> list[str]:
        out = [f"Store {self.root}: {self.rounds} readable round(s)."]
        if self.unreadable:
            out.append(f"{len(self.unreadable)} unreadable entr{'y' if len(self.unreadable) == 1 else 'ies'} "
                       "in rounds/ (skipped, never deleted):")
            out.extend(f"  {path}: {reason}" for path, reason in self.unreadable)
        if self.index_problem:
            out.append(f"Index: {self.index_problem}")
        if self.stale:
            out.append(f"{len(self.stale)} stale temporary file(s) left by killed processes:")
            out.extend(f"  {p}" for p in self.stale)
        out.extend(self.done)
        if self.ok and not self.done:
            out.append("Nothing to repair.")
        return out


def _index_problem(store: ResultsStore) -> str | None:
    path = store.index_path
    if not path.exists():
        return "index.json is missing (rebuilt from the round files on the next open)"
    try:
        store._read_index()
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        return f"index.json is unreadable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    return None


def check_store(store: ResultsStore, *, repair: bool = False) -> CheckReport:
    """Look the store over; with `repair`, rebuild the index from the round files and remove stale temporary
    files. Unreadable round files are listed, never deleted or rewritten."""
    report = CheckReport(store.root)
    report.index_problem = _index_problem(store)
    report.stale = stale_temp_files(store.root)
    report.unreadable = unreadable_entries(store)
    gone = [p for p in report.stale if not p.exists()]  # the open's full check removes those of dead writers
    if gone:
        report.done.append(f"Removed {len(gone)} stale temporary file(s).")
        report.stale = [p for p in report.stale if p.exists()]
    if repair:
        removed = remove_stale_temp_files(store.root)
        if removed:
            report.done.append(f"Removed {len(removed)} stale temporary file(s).")
        report.done.extend(f"  {p}" for p in [*gone, *removed])
        n = store.rebuild_index()
        report.done.append(f"Rebuilt index.json from the round files: {n} round(s) indexed"
                           + (f", {len(report.unreadable)} unreadable skipped." if report.unreadable else "."))
        report.stale = [p for p in report.stale if p.exists()]
        report.index_problem = None
    report.rounds = len(store.query())
    return report
