"""A consistency-test answer classified by the documented cue lexicon (ebtui.core.frameworks): the rules only,
below the fit and the tables, so the analysis columns can use them without importing either."""

from __future__ import annotations

from dataclasses import dataclass, field

from ebtui.core.facts import TEAM_PHASES as TEAM_PHASES  # the phases in which a team speaks, in order
from ebtui.core.frameworks import CueStarts, consistency_cues_of, fold, sentence_separators

#: the classes whose cues are looked for, in the order the rules try them
ORDER = ("acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged", "kept_principle")
_STARTS: list[CueStarts] = []


def _starts() -> CueStarts:
    if not _STARTS:
        _STARTS.append(CueStarts(ORDER))
    return _STARTS[0]


@dataclass
class ConsistencyClassification:
    label: str  # one of CONSISTENCY_CLASSES
    evidence: list[str]  # the sentences that support it
    cues: list[str] = field(default_factory=list)
    classifier: str = "rules"  # "rules" or "model:<name>"
    error: str | None = None


def classify_consistency(text: str) -> ConsistencyClassification:
    """Classify a consistency-test answer with the documented cue lexicon (frameworks.CONSISTENCY_CUES).

    Refinement beats a named difference; a change of conclusion counts as inconsistent only when no
    acknowledging cue (refinement, difference) appears; kept-principle comes last; nothing matched:
    "unclassified" (the rules could not tell — not a verdict on the model).
    """
    folded = fold(text)
    starts = _starts()
    places = starts.places(folded) if starts.ok else None  # (every class's literals found in one scan)
    pieces: tuple[list[int], list[int]] | None = None
    for k, label in enumerate(ORDER):  # (a class is looked for only while none before it matched)
        if places is not None and not places[k]:
            continue  # no place a cue of this class could start: it has none
        pieces = pieces if pieces is not None else sentence_separators(text)
        hits = consistency_cues_of(text, label, folded, pieces, places[k] if places is not None else None)
        if hits:
            return ConsistencyClassification(label, [h.sentence for h in hits], [h.cue for h in hits])
    return ConsistencyClassification("unclassified", [], [])
