"""A consistency-test answer classified by the documented cue lexicon (ebtui.core.frameworks): the rules only,
below the fit and the tables, so the analysis columns can use them without importing either."""

from __future__ import annotations

from dataclasses import dataclass, field

from ebtui.core.facts import TEAM_PHASES as TEAM_PHASES  # the phases in which a team speaks, in order
from ebtui.core.frameworks import consistency_cues_of, fold, sentence_separators


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
    folded, pieces = fold(text), sentence_separators(text)
    for label in ("acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged", "kept_principle"):
        hits = consistency_cues_of(text, label, folded, pieces)  # (a class is looked for only while none before it matched)
        if hits:
            return ConsistencyClassification(label, [h.sentence for h in hits], [h.cue for h in hits])
    return ConsistencyClassification("unclassified", [], [])
