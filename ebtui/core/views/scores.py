"""The score grid of one judgment as plain data: per team and criterion the effective value, the judge's
parsed value, how it was read (provenance kind), the exact source text and its review state. The CLI's
`rounds show` and the TUI's score card both render this, so they always agree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, Override, Round
from ebtui.core.review import TEAMS, ChecklistItem, checklist, describe_target, score_action


class KindLabel(NamedTuple):
    """How a provenance kind is shown: a one-letter mark in the grid and what it means."""

    mark: str
    text: str


UNKNOWN_KIND = KindLabel("?", "read before provenance was recorded")
#: provenance kind -> its label
KIND_LABELS: dict[str, KindLabel] = {
    "json": KindLabel("J", "JSON"),
    "json_repaired": KindLabel("j", "JSON with syntax repaired"),
    "table": KindLabel("T", "markdown table"),
    "line": KindLabel("L", "labelled line"),
    "prose": KindLabel("P", "prose (interpreted)"),
    "correction": KindLabel("C", "a later correction"),
    "imported": KindLabel("I", "imported: the original runner's recorded score (ebtui import)"),
    "missing": KindLabel("-", "missing: the judge gave no valid score"),
    "unknown": UNKNOWN_KIND,
}


@dataclass(frozen=True)
class ScoreCell:
    team: str
    criterion: str
    value: int | None  # effective (override applied)
    parsed: int | None  # the judge's value as parsed
    kind: str  # a KIND_LABELS key
    source: str  # the exact text it was read from ("" when none)
    note: str  # provenance note ("corrected from 7", "conflict: 7 vs 4")
    override: Override | None  # the override in force
    action: str  # "override", "accept" or ""
    review: str  # "open", "addressed" or "" (nothing to review)
    reasons: tuple[str, ...] = ()  # this score's checklist messages

    @property
    def mark(self) -> str:
        return KIND_LABELS.get(self.kind, UNKNOWN_KIND).mark


@dataclass(frozen=True)
class ScoreGridView:
    cells: dict[tuple[str, str], ScoreCell]
    totals: dict[str, int | None]  # effective
    parsed_totals: dict[str, int | None]
    items: list[ChecklistItem] = field(default_factory=list)
    parse_method: str = ""
    has_judgment: bool = True

    @property
    def open_items(self) -> list[ChecklistItem]:
        return [i for i in self.items if not i.addressed]

    @property
    def needs_review(self) -> bool:
        return bool(self.open_items)

    def cell(self, team: str, criterion: str) -> ScoreCell:
        return self.cells[(team, criterion)]


def score_grid(source: Round | Judgment | None) -> ScoreGridView:
    j = source.judgment if isinstance(source, Round) else source
    has = j is not None
    j = j or Judgment()
    items = checklist(j)
    active = j.active_overrides()
    cells: dict[tuple[str, str], ScoreCell] = {}
    for team in TEAMS:
        parsed = j.parsed_scores(team).as_dict()
        effective = j.effective_scores(team).as_dict()
        for crit in CRITERIA:
            src = j.source_of(team, crit)
            if src is not None:
                kind = src.kind if parsed[crit] is not None else "missing"
            else:
                kind = "missing" if parsed[crit] is None else ("unknown" if j.parse_method != "manual" else "missing")
            mine = [i for i in items if i.reason.team == team and i.reason.criterion == crit]
            review = "open" if any(not i.addressed for i in mine) else ("addressed" if mine else "")
            cells[(team, crit)] = ScoreCell(
                team=team, criterion=crit, value=effective[crit], parsed=parsed[crit], kind=kind,
                source=src.text if src else "", note=src.note if src else "", override=active.get((team, crit)),
                action=score_action(j, team, crit), review=review, reasons=tuple(i.reason.message for i in mine),
            )
    return ScoreGridView(
        cells=cells,
        totals={t: j.effective_scores(t).total() for t in TEAMS},
        parsed_totals={t: j.parsed_scores(t).total() for t in TEAMS},
        items=items,
        parse_method=j.parse_method,
        has_judgment=has,
    )


def label(criterion: str) -> str:
    return CRITERION_LABELS.get(criterion, criterion)


__all__ = ["KIND_LABELS", "ScoreCell", "ScoreGridView", "describe_target", "label", "score_grid"]
