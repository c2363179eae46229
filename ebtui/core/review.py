"""A judgment's review state, one rule in one place: the review checklist (what a human must still look at)
and whether the judgment still needs review. An item is addressed only by an override of its scores or an
explicit acceptance of the parsed values; clearing an override re-opens it. How a human addresses an item
is ebtui.core.overrides; the rules: docs/JUDGMENT.md, "The review checklist and overrides".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ebtui.core.facts import TEAMS as TEAMS
from ebtui.core.facts import parse_criterion
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, ReviewReason


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
                except ValueError:
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
