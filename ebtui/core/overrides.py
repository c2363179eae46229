"""The one place that decides how a human corrects a judgment, used by both the CLI and the TUI.

Review checklist: a judgment's review reasons (`Judgment.review_items`) each name a team and criterion, a
whole team, or the whole judgment. A score's item is addressed only by

- an override of that score (a whole number 1-10, with a note saying why — the judge's parsed value stays
  beside it), or
- an explicit, recorded acceptance of the parsed value ("accept as parsed"; for a missing score: it stays
  missing, and the human has said so).

A team's item is addressed when all seven of that team's scores are; the whole judgment's item when all
fourteen are. A missing parsed score is always an item, even in files written before the checklist existed.
Clearing an override re-opens its item. Scoring by hand is allowed where the judge gave nothing at all (the
store then creates an empty judgment to hold the overrides).

Everything is recorded in `Judgment.overrides` (kind "score" or "accept"), oldest first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, Override, ReviewReason, Round, Team

TEAMS: tuple[Team, Team] = ("a", "b")


class OverrideError(ValueError):
    """A human's correction that cannot be applied; the message is one line naming what is wrong."""


# ---------------------------------------------------------------------------------------------- checklist


@dataclass(frozen=True)
class ChecklistItem:
    reason: ReviewReason
    addressed: bool
    #: "override", "accept", or "" (open; or a team/judgment item addressed through its scores)
    addressed_by: str = ""

    @property
    def where(self) -> str:
        return describe_target(self.reason.team, self.reason.criterion)


def describe_target(team: str | None, criterion: str | None) -> str:
    if team is None:
        return "the whole judgment"
    if criterion is None:
        return f"Team {team.upper()} (all seven scores)"
    return f"Team {team.upper()} {CRITERION_LABELS.get(criterion, criterion)}"


_LEGACY_SCORE = re.compile(r"(?i)^team[ _]?(?P<t>[ab])\b[: ]+(?P<c>[a-z_ ]+?)(?=[: ]|$)")
#: reasons older versions gave for a reply read without trouble (syntax repairs, tables, lines): under the
#: current rules they need no human, so a file written then is not kept in the review queue for them
_LEGACY_SYNTAX_ONLY = re.compile(
    r"(?i)^(?:the JSON had to be repaired|the JSON is not in the requested shape|scores read from (?:a markdown "
    r"table|lines of text)|the reply holds \d+ JSON objects)"
)


def review_reasons(judgment: Judgment) -> list[ReviewReason]:
    """The judgment's checklist items: as parsed, or (a file written before the checklist) derived from its
    plain-text reasons; plus an item for every missing parsed score."""
    items: list[ReviewReason] = list(judgment.review_items)
    if not items and judgment.needs_review:
        for text in judgment.review_reasons:
            m = _LEGACY_SCORE.match(text)
            crit = None
            if m:
                try:
                    crit = parse_criterion(m.group("c").strip())
                except OverrideError:
                    crit = None
            if m and crit is not None:
                items.append(ReviewReason(team=m.group("t").lower(), criterion=crit, kind="legacy", message=text))
            elif not _LEGACY_SYNTAX_ONLY.match(text):
                items.append(ReviewReason(kind="legacy", message=text))
        if not judgment.review_reasons:
            items.append(ReviewReason(kind="legacy", message="flagged for review"))
    have = {(r.team, r.criterion) for r in items if r.kind in ("missing", "legacy", "invalid", "conflict")}
    for team in TEAMS:
        for crit in judgment.parsed_scores(team).missing():
            if (team, crit) not in have:
                items.append(ReviewReason(team=team, criterion=crit, kind="missing",
                                          message=f"{describe_target(team, crit)}: missing (the judge gave no score)"))
    return items


def score_action(judgment: Judgment, team: str, criterion: str) -> str:
    """'override', 'accept' or '' for one score."""
    last = judgment.last_actions().get((team, criterion))
    if last is None:
        return ""
    if last.kind == "accept":
        return "accept"
    return "override" if last.value is not None else ""


def checklist(judgment: Judgment) -> list[ChecklistItem]:
    out = []
    for reason in review_reasons(judgment):
        if reason.team is not None and reason.criterion is not None:
            by = score_action(judgment, reason.team, reason.criterion)
            out.append(ChecklistItem(reason, bool(by), by))
            continue
        teams = TEAMS if reason.team is None else (reason.team,)
        done = all(score_action(judgment, t, c) for t in teams for c in CRITERIA)
        out.append(ChecklistItem(reason, done))
    return out


def open_items(judgment: Judgment) -> list[ChecklistItem]:
    return [item for item in checklist(judgment) if not item.addressed]


def needs_review(judgment: Judgment | None) -> bool:
    return judgment is not None and bool(open_items(judgment))


# ---------------------------------------------------------------------------------------------- validation


def parse_team(team: Any) -> Team:
    t = str(team).strip().lower().removeprefix("team_").removeprefix("team ").removeprefix("team").strip()
    if t not in TEAMS:
        raise OverrideError(f"unknown team {team!r}: give a or b")
    return t


def parse_criterion(name: Any) -> str:
    key = re.sub(r"[\s-]+", "_", str(name).strip().lower())
    if key in CRITERIA:
        return key
    for crit, label in CRITERION_LABELS.items():
        if key == re.sub(r"[\s-]+", "_", label.lower()) or (len(key) >= 4 and crit.startswith(key)):
            return crit
    raise OverrideError(f"unknown criterion {name!r}: give one of {', '.join(CRITERIA)}")


def parse_value(value: Any) -> int:
    """A human's score: a whole number from 1 to 10 (an int, or text such as "7")."""
    if isinstance(value, bool):
        raise OverrideError(f"the score must be a whole number from 1 to 10, not {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"\s*\d{1,3}\s*", value):
        number = int(value)
    else:
        raise OverrideError(f"the score must be a whole number from 1 to 10, not {value!r}")
    if not 1 <= number <= 10:
        raise OverrideError(f"the score must be a whole number from 1 to 10, not {value!r}")
    return number


def parse_note(note: Any) -> str:
    text = "" if note is None else str(note).strip()
    if not text:
        raise OverrideError("a note is required: say why the score is overridden")
    return text


@dataclass(frozen=True)
class OverrideRequest:
    team: Team
    criterion: str
    value: int | None  # None: clear the override
    note: str


def check_override(team: Any, criterion: Any, value: Any, note: Any, *, clear: bool = False) -> OverrideRequest:
    """Validate a human's override (or with clear=True the removal of one). The same rules and messages for
    every front end: the value is a whole number 1-10 and a note is required."""
    t = parse_team(team)
    c = parse_criterion(criterion)
    if clear:
        if value not in (None, ""):
            raise OverrideError("give either a value or clear, not both")
        return OverrideRequest(t, c, None, "" if note is None else str(note).strip())
    if value is None or value == "":
        raise OverrideError("give the score to use, a whole number from 1 to 10")
    return OverrideRequest(t, c, parse_value(value), parse_note(note))


# ---------------------------------------------------------------------------------------------- actions


def apply_override(store: Any, round_id: str, team: Any, criterion: Any, value: Any, note: Any, *,
                   clear: bool = False, author: str = "") -> Round:
    """Validate and save one override through the store (the judge's parsed value is kept)."""
    req = check_override(team, criterion, value, note, clear=clear)
    try:
        updated: Round = store.apply_override(round_id, req.team, req.criterion, req.value, req.note, author=author)
        return updated
    except ValueError as exc:  # the store's own checks (no override to clear, ...)
        raise OverrideError(str(exc)) from None


def acceptance(judgment: Judgment, team: Team, criterion: str, note: str = "", author: str = "") -> Override:
    parsed = getattr(judgment.parsed_scores(team), criterion)
    return Override(team=team, criterion=criterion, parsed_value=parsed, value=parsed, note=note.strip(),
                    author=author, kind="accept")


def _no_judgment(round_id: str) -> OverrideError:
    return OverrideError(f"round {round_id}: the judge gave no judgment; there is nothing to accept (score it)")


def accept_as_parsed(store: Any, round_id: str, team: Any, criterion: Any, note: Any = "", *,
                     author: str = "") -> Round:
    """Record that a human reviewed one parsed score and accepts it as it is (a missing one stays missing)."""
    t = parse_team(team)
    c = parse_criterion(criterion)
    text = "" if note is None else str(note)

    def build(round_: Round) -> list[Override]:
        if round_.judgment is None:
            raise _no_judgment(round_id)
        return [acceptance(round_.judgment, t, c, text, author)]

    updated: Round = store.add_overrides(round_id, build)
    return updated


def accept_all(store: Any, round_id: str, note: Any = "", *, author: str = "") -> tuple[Round, int]:
    """Accept every score of the judgment that is not already addressed (overridden or accepted); returns the
    round and how many acceptances were recorded."""
    text = "" if note is None else str(note)
    added: list[Override] = []

    def build(round_: Round) -> list[Override]:
        j = round_.judgment
        if j is None:
            raise _no_judgment(round_id)
        added[:] = [acceptance(j, t, c, text, author) for t in TEAMS for c in CRITERIA if not score_action(j, t, c)]
        return list(added)

    updated: Round = store.add_overrides(round_id, build)
    return updated, len(added)
