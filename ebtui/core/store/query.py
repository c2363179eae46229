"""The one filter engine over index documents: `RoundFilter.parse(filters)` checks the filters once; the
same conditions then select from the in-memory index (`matches`, one document at a time) or from
index.check.json's columns (`column_ids`, one column at a time, before the index is loaded)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ebtui.core.liveness import interrupted
from ebtui.core.records import RoundStatus
from ebtui.core.store.entries import LIGHT_FIELDS, ROLES, IndexDoc, order_key

FILTERS = (
    "model", "role", "dilemma", "judge", "tournament", "status", "needs_review", "exchange", "schedule_key",
    "limit", "newest_first",
)
#: filter name -> the index field it compares for equality
_PLAIN = (
    ("dilemma", "dilemma_id"), ("judge", "judge"), ("tournament", "tournament_id"),
    ("needs_review", "needs_review"), ("exchange", "exchange_id"), ("schedule_key", "schedule_key"),
)

#: one condition: the index fields it reads and the test over their values (in that order)
Condition = tuple[tuple[str, ...], Callable[..., bool]]


def _shown_status(status: object, writer: object) -> str:
    """An index entry's status as readers see it: a running round whose writer is gone is incomplete."""
    return RoundStatus.INCOMPLETE.value if interrupted(str(status), writer) else str(status)


@dataclass(frozen=True)
class RoundFilter:
    model: object  # compared with the seats' model names (None: any model)
    seats: tuple[str, ...]
    statuses: frozenset[str] | None
    plain: tuple[tuple[str, object], ...]
    limit: int | None
    newest_first: bool

    @classmethod
    def parse(cls, filters: Mapping[str, object]) -> RoundFilter:
        """Check the filters (TypeError for an unknown one, ValueError for a bad value)."""
        unknown = sorted(set(filters) - set(FILTERS))
        if unknown:
            raise TypeError(f"unknown filter(s) {', '.join(unknown)}; known filters: {', '.join(FILTERS)}")
        f = {k: v for k, v in filters.items() if v is not None}
        role = f.get("role")
        if role is not None:
            if not isinstance(role, str) or role not in ROLES:
                raise ValueError(f"unknown role {role!r}; expected one of: {', '.join(ROLES)}")
            if "model" not in f:
                raise ValueError("the role filter needs a model filter (role says which seat the model had)")
        statuses: frozenset[str] | None = None
        if "status" in f:
            given = f["status"]
            if not isinstance(given, Iterable):
                raise TypeError(f"'{type(given).__name__}' object is not iterable")
            raw: list[object] = [given] if isinstance(given, str) else list(given)
            valid = {s.value for s in RoundStatus}
            bad = [s for s in raw if str(s) not in valid]
            if bad:
                raise ValueError(f"unknown status {bad[0]!r}; expected one of: {', '.join(sorted(valid))}")
            statuses = frozenset(str(s) for s in raw)
        given_limit = f.get("limit")
        limit = given_limit if isinstance(given_limit, int) and not isinstance(given_limit, bool) else None
        if given_limit is not None and (limit is None or limit < 0):
            raise ValueError(f"limit must be a non-negative integer, not {given_limit!r}")
        if "needs_review" in f and not isinstance(f["needs_review"], bool):
            raise ValueError(f"needs_review must be True or False, not {f['needs_review']!r}")
        return cls(
            model=f.get("model"),
            seats=(role,) if role else ROLES,
            statuses=statuses,
            plain=tuple((key, f[name]) for name, key in _PLAIN if name in f),
            limit=limit,
            newest_first=bool(f.get("newest_first", False)),
        )

    def conditions(self) -> list[Condition]:
        """Every condition a round must meet, the most selective (plain equalities) first."""
        out: list[Condition] = []
        for key, want in self.plain:
            out.append(((key,), lambda v, want=want: v == want))
        if self.model is not None:
            model = self.model
            out.insert(0, (self.seats, lambda *vs: any(v == model for v in vs)))
        if self.statuses is not None:
            statuses = self.statuses
            out.append((("status", "writer"), lambda s, w: _shown_status(s, w) in statuses))
        return out

    def matches(self, entry: Mapping[str, object]) -> bool:
        return all(test(*(entry.get(k) for k in keys)) for keys, test in self.conditions())

    def select(self, entries: Iterable[IndexDoc]) -> list[IndexDoc]:
        """The matching documents in order (oldest first unless newest_first), at most `limit`."""
        conds = self.conditions()
        rows = [e for e in entries if all(test(*(e.get(k) for k in keys)) for keys, test in conds)]
        if self.limit is not None and self.limit < len(rows):  # the first page of a big store: no full sort
            pick = heapq.nlargest if self.newest_first else heapq.nsmallest
            return pick(self.limit, rows, key=order_key)
        rows.sort(key=order_key, reverse=self.newest_first)
        return rows

    def column_ids(self, cols: Mapping[str, Sequence[Any]]) -> list[str] | None:
        """The ids `select` would give over index.check.json's columns (LIGHT_FIELDS), or None when the
        columns cannot decide (a running round may be interrupted: that takes the index's writer stamps;
        a note edited by hand)."""
        ids, ts, status = cols["id"], cols["ts"], cols["status"]
        idx: list[int] = list(range(len(ids)))
        for keys, test in self.conditions():
            if any(k not in LIGHT_FIELDS for k in keys):  # the status test needs the writer stamp
                if any(status[i] == RoundStatus.RUNNING.value for i in idx):
                    return None
                idx = [i for i in idx if test(status[i], None)]
                continue
            columns = [cols[k] for k in keys]
            if len(columns) == 1:
                col = columns[0]
                idx = [i for i in idx if test(col[i])]
            else:
                idx = [i for i in idx if test(*(c[i] for c in columns))]
        try:
            idx.sort(key=lambda i: (ts[i], ids[i]), reverse=self.newest_first)
        except TypeError:  # a note edited by hand: the index decides
            return None
        if self.limit is not None:
            idx = idx[: self.limit]
        return [ids[i] for i in idx]
