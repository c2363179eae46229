"""The one place that decides how a human corrects a judgment, used by both the CLI and the TUI: an override
(a whole number 1-10 with a note; the parsed value stays beside it) or a recorded acceptance of the parsed
value, kept in `Judgment.overrides`, oldest first. The review checklist those actions address is
ebtui.core.review; the rules: docs/JUDGMENT.md, "The review checklist and overrides".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ebtui.core import facts
from ebtui.core.records import CRITERIA, Judgment, Override, Round, Team

# the review checklist lives in ebtui.core.review; these names stay importable from here for the callers
from ebtui.core.review import TEAMS as TEAMS
from ebtui.core.review import ChecklistItem as ChecklistItem
from ebtui.core.review import checklist as checklist
from ebtui.core.review import describe_target as describe_target
from ebtui.core.review import needs_review as needs_review
from ebtui.core.review import open_items as open_items
from ebtui.core.review import review_reasons as review_reasons
from ebtui.core.review import score_action as score_action


class OverrideError(ValueError):
    """A human's correction that cannot be applied; the message is one line naming what is wrong."""


class OverrideStore(Protocol):
    """What corrections need of a store (ebtui.core.store.ResultsStore provides it)."""

    def apply_override(self, round_id: str, team: Team | str, criterion: str, value: int | None, note: str = "",
                       *, author: str = "") -> Round: ...

    def add_overrides(self, round_id: str, build: Callable[[Round], list[Override]]) -> Round: ...


_Store = TypeVar("_Store", bound=OverrideStore)


def writable(store: _Store | None) -> _Store:
    """The store a correction is saved to; None (a read-only view) is an OverrideError."""
    if store is None:
        raise OverrideError("read-only: no results store to save the correction to")
    return store


# ---------------------------------------------------------------------------------------------- validation


def parse_team(team: object) -> Team:
    try:
        return facts.parse_team(team)
    except ValueError as exc:
        raise OverrideError(str(exc)) from None


def parse_criterion(name: object) -> str:
    try:
        return facts.parse_criterion(name)
    except ValueError as exc:
        raise OverrideError(str(exc)) from None


def parse_value(value: object) -> int:
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


def parse_note(note: object) -> str:
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


def check_override(team: object, criterion: object, value: object, note: object, *, clear: bool = False) -> OverrideRequest:
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


def apply_override(store: OverrideStore | None, round_id: str, team: object, criterion: object, value: object,
                   note: object, *, clear: bool = False, author: str = "") -> Round:
    """Validate and save one override through the store (the judge's parsed value is kept)."""
    req = check_override(team, criterion, value, note, clear=clear)
    try:
        return writable(store).apply_override(round_id, req.team, req.criterion, req.value, req.note, author=author)
    except ValueError as exc:  # the store's own checks (no override to clear, ...)
        raise OverrideError(str(exc)) from None


def acceptance(judgment: Judgment, team: Team, criterion: str, note: str = "", author: str = "") -> Override:
    parsed = getattr(judgment.parsed_scores(team), criterion)
    return Override(team=team, criterion=criterion, parsed_value=parsed, value=parsed, note=note.strip(),
                    author=author, kind="accept")


def _no_judgment(round_id: str) -> OverrideError:
    return OverrideError(f"round {round_id}: the judge gave no judgment; there is nothing to accept (score it)")


def accept_as_parsed(store: OverrideStore | None, round_id: str, team: object, criterion: object,
                     note: object = "", *, author: str = "") -> Round:
    """Record that a human reviewed one parsed score and accepts it as it is (a missing one stays missing)."""
    t = parse_team(team)
    c = parse_criterion(criterion)
    text = "" if note is None else str(note)

    def build(round_: Round) -> list[Override]:
        if round_.judgment is None:
            raise _no_judgment(round_id)
        return [acceptance(round_.judgment, t, c, text, author)]

    return writable(store).add_overrides(round_id, build)


def accept_all(store: OverrideStore | None, round_id: str, note: object = "", *,
               author: str = "") -> tuple[Round, int]:
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

    updated = writable(store).add_overrides(round_id, build)
    return updated, len(added)
