"""`ebtui store check` (`check_store`): the unreadable entries (`unreadable.py`, found afresh), the index,
stale temporary files — and with repair, the index rebuilt and the stale files removed. Nothing here ever
deletes or rewrites a round file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.core.store.temp_files import remove_stale_temp_files, stale_temp_files

if TYPE_CHECKING:
    from ebtui.core.store.results_store import ResultsStore



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
        store.index.read_index()
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        return f"index.json is unreadable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    return None


def check_store(store: ResultsStore, *, repair: bool = False) -> CheckReport:
    """Look the store over; with `repair`, rebuild the index from the round files and remove stale temporary
    files. Unreadable round files are listed, never deleted or rewritten."""
    report = CheckReport(store.root)
    report.index_problem = _index_problem(store)
    report.stale = stale_temp_files(store.root)
    report.unreadable = store.unreadable()
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
