"""What every analysis table shares: `Table`, `Coverage`, the view names, and rounds grouped by exchange.
The conventions every table follows (two views, missing is missing, one observation per exchange, dilemma
bootstrap intervals) are in docs/REPORTS.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ebtui.core.facts import (
    exchange_key as exchange_key,  # the one owner; analysis modules import it from here
)
from ebtui.core.records import PhaseStatus, PhaseType, Round, Team

Cell = str | int | float | None


def int_unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`np.unique(key, return_index=True, return_inverse=True)` of integer keys — the sorted distinct keys,
    each one's first row and each row's position among them, the same arrays — by a table over the keys'
    range instead of a sort (a million design cells: milliseconds instead of a third of a second); a sort
    where the range is far wider than the rows."""
    key = np.asarray(key, dtype=np.int64).reshape(-1)
    n = len(key)
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    lo = int(key.min())
    span = int(key.max()) - lo + 1
    if span > 4 * n + 1_000_000:
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return uniq, first.astype(np.int64), inverse.reshape(-1).astype(np.int64)
    k = key - lo
    first_at = np.full(span, n, dtype=np.int64)
    np.minimum.at(first_at, k, np.arange(n, dtype=np.int64))
    present = first_at < n
    used = np.flatnonzero(present)
    rank = np.cumsum(present) - 1
    return used + lo, first_at[used], rank[k]

def distinct_ints(key: np.ndarray) -> np.ndarray:
    """`np.unique(key)` of integer keys (the sorted distinct values) by marking them in a table over their
    range: int_unique's first array without its first rows and inverse (counting rounds per level)."""
    key = np.asarray(key, dtype=np.int64).reshape(-1)
    if not len(key):
        return np.zeros(0, np.int64)
    lo = int(key.min())
    span = int(key.max()) - lo + 1
    if span > 4 * len(key) + 1_000_000:
        return np.unique(key).astype(np.int64)
    present = np.zeros(span, dtype=bool)
    present[key - lo] = True
    return np.flatnonzero(present).astype(np.int64) + lo

OVERALL = "mean_of_criteria"
ROLES: dict[Team, str] = {"a": "presenting", "b": "responding"}
VIEW_EFFECTIVE = "effective"
VIEW_AS_JUDGED = "as_judged"
VIEW_BOTH = "both"  # the table reads no scores
SEATS: tuple[Team, Team] = ("a", "b")


@dataclass
class Coverage:
    """How much of the input a table could use."""

    rounds: int = 0
    rounds_without_judgment: int = 0
    rounds_without_any_score: int = 0  # a judgment exists but gives (in this view) no score at all
    scores_expected: int = 0  # 7 criteria x 2 teams per judged round
    scores_missing: int = 0

    @property
    def rounds_left_out(self) -> int:
        return self.rounds_without_judgment + self.rounds_without_any_score

    def describe(self) -> str:
        return (
            f"{self.rounds_left_out} of {self.rounds} rounds left out as missing "
            f"({self.rounds_without_judgment} without a judgment, {self.rounds_without_any_score} with no score); "
            f"{self.scores_missing} of {self.scores_expected} scores missing and left out (never counted as 0)"
        )


@dataclass
class Table:
    key: str  # file-name friendly id, e.g. "model_comparison"
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    view: str = VIEW_EFFECTIVE
    notes: list[str] = field(default_factory=list)
    coverage: Coverage | None = None
    #: columns holding model-written text (quotes): the report makes them inert
    text_columns: frozenset[str] = frozenset()

    def column(self, name: str) -> list[Cell]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def as_dicts(self) -> list[dict[str, Cell]]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]


# ---- small helpers ---------------------------------------------------------------------------------


def view_name(effective: bool) -> str:
    return VIEW_EFFECTIVE if effective else VIEW_AS_JUDGED


def phase_text(r: Round, phase: PhaseType) -> str | None:
    """A phase's answer, only when the phase completed (failed phases have no content)."""
    p = r.phase(phase)
    if p is None or p.status != PhaseStatus.COMPLETE or not p.response:
        return None
    return p.response


# ---- exchanges (one debate, possibly judged by a panel) -------------------------------------------


@dataclass
class Exchange:
    """The rounds of one debate (a judge panel's rounds share phases 1-4), under its exchange key."""

    id: str
    rounds: list[Round]

    def text(self, phase: PhaseType) -> str | None:
        # prefer the round that ran the phase itself over one that copied it
        for r in sorted(self.rounds, key=lambda r: (p := r.phase(phase)) is not None and bool(p.reused_from)):
            t = phase_text(r, phase)
            if t is not None:
                return t
        return None


def exchanges(rounds: Iterable[Round]) -> list[Exchange]:
    groups: dict[str, list[Round]] = {}
    for r in rounds:
        groups.setdefault(exchange_key(r), []).append(r)
    return [Exchange(k, v) for k, v in sorted(groups.items())]


def models_in(rounds: Iterable[Round]) -> list[str]:
    return sorted({m for r in rounds for m in (r.team_a_model, r.team_b_model)})



def read_entries(path: Path) -> list[tuple[str, Any]]:
    """The (key, value) entries of a cache file kept beside the analysis columns ([] when absent or unreadable)."""
    import json

    try:
        held = json.loads(path.read_bytes())
        return [(str(k), v) for k, v in held["entries"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def keep_newest(path: Path, held: list[tuple[str, Any]], key: str, value: object, limit: int) -> None:
    """Write `held`'s newest entries (`key`'s old one dropped) and then (key, value), at most `limit`, atomically
    (a temporary file renamed over it); a folder that cannot be written: nothing kept."""
    import contextlib
    import json
    import os

    entries = [*[(k, v) for k, v in held if k != key][-(limit - 1):], (key, value)]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"entries": entries}, allow_nan=True), encoding="utf-8")
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
