"""What the index holds per round (a small document, no transcript text) and the round-level rules the
store applies: a killed writer's round shown as interrupted, the empty judgment a human scores by hand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ebtui.core.facts import exchange_key
from ebtui.core.liveness import interrupted
from ebtui.core.records import (
    CRITERIA,
    Judgment,
    Override,
    PhaseStatus,
    Round,
    RoundStatus,
    Team,
)
from ebtui.core.review import needs_review

INDEX_FORMAT = 1
#: an index document (index_entry's fields) as TinyDB stores it and gives it back: JSON read unchecked but for
#: valid_entry, its values used as the index wrote them (tinydb is untyped)
IndexDoc = dict[str, Any]
#: what tells two overrides apart (override_key): team, criterion, value, note, time, author, kind
OverrideKey = tuple[Team, str, int | None, str, str, str, str]
ROLES = ("team_a", "team_b", "judge")
#: the index fields every filter and the sort order need, kept as columns in index.check.json so that
#: `load_rounds` on a freshly opened store need not parse the whole index (6 MB at 10,000 rounds)
LIGHT_FIELDS = (
    "id", "ts", "dilemma_id", "team_a", "team_b", "judge", "tournament_id", "status", "needs_review",
    "exchange_id", "schedule_key",
)


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt is not None else None


def index_entry(round_: Round, *, path: str, stamp: tuple[int, int, int], saved_ns: int) -> IndexDoc:
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
        "exchange_id": exchange_key(round_),
        "schedule_key": round_.schedule_key,
        "status": str(round_.status),
        # who is playing a running round, so readers can tell a killed one (see core/liveness.py)
        "writer": round_.settings.writer if round_.status == RoundStatus.RUNNING else None,
        "has_judgment": j is not None,
        # every judgment of the round: its own and those added by `ebtui rejudge`
        "judgments": len(round_.all_judgments()),
        "needs_review": needs_review(j),
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


def order_key(e: IndexDoc) -> tuple[float, str]:
    return (e["ts"], e["id"])


def entry_status(entry: Mapping[str, object]) -> str:
    """An index entry's status as readers should see it: a running round whose writer is gone is
    incomplete (interrupted)."""
    status = str(entry.get("status"))
    if interrupted(status, entry.get("writer")):
        return RoundStatus.INCOMPLETE.value
    return status


def shown(entry: IndexDoc) -> IndexDoc:
    out = dict(entry)
    status = entry_status(entry)
    if status != out.get("status"):
        out["status"] = status
        out["interrupted"] = True
    return out


def mark_interrupted(round_: Round) -> None:
    """A loaded round whose writer died mid-play, as readers should see it (in memory; the file is
    rewritten only when something saves the round again): incomplete, with the phase in flight failed."""
    stamp = round_.settings.writer
    who = f"pid {stamp[1]}" if isinstance(stamp, list | tuple) and len(stamp) == 3 else "its process"
    reason = f"interrupted: the process playing this round ({who}) stopped"
    for ph in round_.phases:
        if ph.status in (PhaseStatus.RUNNING, PhaseStatus.PENDING):
            ph.status = PhaseStatus.FAILED
            ph.error_kind = "interrupted"
            ph.error = reason
    round_.status = RoundStatus.INCOMPLETE
    round_.error = round_.error or reason


def entry_scores(entry: Mapping[str, object], team: Team) -> dict[str, int | None]:
    """An index document's effective scores for team "a" or "b" as {criterion: value} (empty: no judgment)."""
    values = entry.get(f"scores_{team}")
    if not values:
        return {}
    if not isinstance(values, Iterable):
        raise TypeError(f"scores_{team} is not a list of scores ({values!r})")
    return dict(zip(CRITERIA, values, strict=True))


def valid_entry(doc: object) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("id"), str)
        and isinstance(doc.get("saved_ns"), int)
        and isinstance(doc.get("mtime_ns"), int)
        and isinstance(doc.get("ts"), (int, float))
    )


def manual_judgment(round_: Round) -> Judgment:
    """An empty judgment for a round the judge did not score, so a human can score it by hand."""
    return Judgment(
        needs_review=True,
        review_reasons=["the judge gave no judgment; scored by hand"],
        parse_method="manual",
        judge_model=round_.judge_model,
    )


def override_key(ov: Override) -> OverrideKey:
    return (ov.team, ov.criterion, ov.value, ov.note, ov.time.isoformat(), ov.author, ov.kind)
