"""A consistency-test answer classified by the documented cue lexicon (ebtui.core.frameworks): the rules only,
below the fit and the tables, so the analysis columns can use them without importing either."""

from __future__ import annotations

from dataclasses import dataclass, field

from ebtui.core.facts import TEAM_PHASES as TEAM_PHASES  # the phases in which a team speaks, in order
from ebtui.core.frameworks import consistency_cues_of, fold


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
    finder = _finder()
    present = finder.present(text, folded) if finder is not None else None
    for label in ("acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged", "kept_principle"):
        if present is not None and not present[label]:
            continue  # no cue of the class anywhere in the text: no sentence carries one
        hits = consistency_cues_of(text, label, folded)  # (a class is looked for only while none before it matched)
        if hits:
            return ConsistencyClassification(label, [h.sentence for h in hits], [h.cue for h in hits])
    return ConsistencyClassification("unclassified", [], [])


class _CueFinder:
    """Whether any cue of each class occurs anywhere in a text, found with one Aho-Corasick pass for the
    literals the cue patterns open with (as frame._Starts does for the frameworks): the class's exact
    pattern confirms each place; its patterns without such a literal are searched for as before. Only for
    classes whose cues cannot look outside their sentence (a cue in a sentence is then one in the text)."""

    def __init__(self) -> None:
        import ahocorasick_rs

        from ebtui.core.analysis.frame import literal_prefix
        from ebtui.core.frameworks import CONSISTENCY_CUES, AnyOf

        lits: dict[str, set[str]] = {}
        self.exact: dict[str, AnyOf] = {}
        self.rest: dict[str, AnyOf | None] = {}
        for label, pats in CONSISTENCY_CUES.items():
            whole = AnyOf(pats)
            if whole.scan is None or not whole.local:
                raise ImportError("a cue the literals cannot stand for")  # (the caller falls back to the lexicon)
            self.exact[label] = whole
            found = [literal_prefix(p) for p in pats]
            rest = tuple(p for p, lit in zip(pats, found, strict=True) if not lit)
            self.rest[label] = AnyOf(rest) if rest else None
            for lit in filter(None, found):
                lits.setdefault(lit, set()).add(label)
        self.literals = list(lits)
        self.owners = [sorted(lits[x]) for x in self.literals]
        self.auto = ahocorasick_rs.AhoCorasick(self.literals, matchkind=ahocorasick_rs.MATCHKIND_STANDARD)

    def present(self, text: str, folded: str) -> dict[str, bool]:
        places: dict[str, set[int]] = {label: set() for label in self.exact}
        for i, start, _end in self.auto.find_matches_as_indexes(folded, overlapping=True):
            for label in self.owners[i]:
                places[label].add(start)
        out = {}
        for label, at in places.items():
            exact = self.exact[label].exact
            rest = self.rest[label]
            out[label] = any(exact.match(text, k) is not None for k in at) or \
                (rest is not None and rest.search(text, folded) is not None)
        return out


_FINDER: list[_CueFinder | None] = []


def _finder() -> _CueFinder | None:
    """The one _CueFinder (None without ahocorasick_rs: every class is looked for as before)."""
    if not _FINDER:
        try:
            _FINDER.append(_CueFinder())
        except ImportError:
            _FINDER.append(None)
    return _FINDER[0]
