"""Paragraphs under a criterion's label that speak of the teams in turn ("**Consistency.** Team A … a seven
here; … Team B … earns an eight"): each clause's value for the team it names (docs/JUDGMENT.md)."""

from __future__ import annotations

import re

from ebtui.core.judgment.accounting import SENTENCE, numbers_in
from ebtui.core.judgment.collective import verb_gives
from ebtui.core.judgment.corrections import THIRD_RE
from ebtui.core.judgment.provenance import Collector, TextState, open_before
from ebtui.core.judgment.vocabulary import CRIT_RE, Val, crit_name, team_of_match
from ebtui.core.judgment.wordclass import pos_of

#: what leaves a clause's value open wherever it stands: a condition, a question, a negation
_OPEN_CLAUSE = re.compile(r"(?i)(?<![a-z'’])(?:if|unless|whether|otherwise|not|never|no|nor|yet|cannot)(?![a-z'’])|\?"
                          r"|n['’]t(?![a-z])")


def _common_noun(clause: str, m: re.Match[str]) -> bool:
    """A criterion's one word used as a common noun, not as the criterion's label: after a possessive ("its
    principle", "Team B's framework") or before a noun it modifies ("the consistency case")."""
    if " " in m.group(0).strip() or "." in m.group(0):
        return False  # a criterion's full name ("framework awareness") or its abbreviation is a label
    if re.search(r"(?i)(?:(?<![a-z])(?:its|their|his|her|our|my)|['’]s)[ \t]+$", clause[:m.start()]):
        return True
    nxt = re.match(r"[ \t]+([a-z]+)", clause[m.end():])
    return nxt is not None and set(pos_of(nxt.group(1))) == {"NOUN"}




class ParagraphReading:
    """The paragraph half of the text reader (TextReader)."""

    col: Collector
    rx: re.Pattern[str]
    st: TextState
    accounted: list[tuple[int, int]] | None
    raw: str
    kept: tuple[list[int], int] | None

    def _paragraph_clauses(self, clean: str, label: re.Match[str]) -> bool:
        """A paragraph under a criterion's label that speaks of the teams in turn ("Team A … a seven here; …
        Team B … earns an eight"): a clause's one candidate value (every other number explained) is the score
        of the team it names as subject (not as an owner: "Team B's point"), or that the clause before named.
        Clauses naming another criterion or both teams give nothing. Read as prose (flagged unless settled)."""
        crit, team, read = crit_name(label.group(0)), self.st.team, False
        for sm in SENTENCE.finditer(clean, label.end()):
            clause = sm.group(0)
            names = list(self.rx.finditer(clause))
            subjects = {team_of_match(m) for m in names if not re.match(r"['’]s(?![a-z])", clause[m.end():])}
            if len(subjects) > 1:
                team = None
                continue
            named = bool(subjects)
            team = subjects.pop() if subjects else team
            if team not in ("a", "b") or any(crit_name(m.group(0)) != crit and not _common_noun(clause, m)
                                             for m in CRIT_RE.finditer(clause)):
                continue
            cands = [n for n in numbers_in(clause) if n.reason is None and n.value is not None
                     and not any(m.start() <= n.start < m.end() for m in names)]
            if len(cands) == 1 and (value := cands[0].value) is not None:
                n = cands[0]
                whole = int(value)
                shown = clause[n.start:n.end] if clause[n.start].isdigit() else str(whole if whole == value else value)
                # settled where the clause names its team as subject and its verb gives the score, with no
                # condition, question, counterfactual, modal or negation but the judge's plain "I'd give Team A
                # a seven" (a value in a clause of its own, "…; six.", stays open: whose, and of what, is a guess)
                lead = clause[:n.start]
                settled = named and not _OPEN_CLAUSE.search(clause) and not open_before(clause, 0, n.start) \
                    and verb_gives(re.split(r"[,;:—–(]", self.rx.sub(" ", lead))[-1])
                self.col.add_val(team, crit, Val(shown, None, None, sm.start() + n.start), "lines", kind="prose",
                                 settled=settled)
                if self.accounted is not None:
                    self.accounted.append(self._raw_span(sm.start() + n.start, sm.start() + n.end))
                read = True
        return read

    def _raw_span(self, a: int, b: int) -> tuple[int, int]:
        """Where clean[a:b] (the line without "*" and "`", stripped) stands in the raw line."""
        if self.kept is None:
            kept = [i for i, ch in enumerate(self.raw) if ch not in "*`"]
            self.kept = (kept, len(kept) - len("".join(self.raw[i] for i in kept).lstrip()))
        kept, lead = self.kept
        return kept[lead + a], kept[lead + b - 1] + 1

    def _paragraph_team(self, segment: str, owner: str | None) -> str | None:
        """The team a paragraph under a criterion's label is about, where it names one team only (the section's,
        if any) and no opponent or third party: "**Principle articulation.** Team A's principle … Score: 8"."""
        # a team named in the possessive ("rather than engage Team B's case") owns a thing, not the paragraph
        named = {team_of_match(m) for m in self.rx.finditer(segment) if not re.match(r"['’]s(?![a-z])", segment[m.end():])}
        named = named or ({owner} if owner is not None else set())
        if len(named) != 1 or (owner is not None and named != {owner}) or THIRD_RE.search(segment):
            return None
        return named.pop()
