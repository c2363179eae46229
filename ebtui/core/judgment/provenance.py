"""What was found while reading: each candidate score with how it was read and its exact source text."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ebtui.core.judgment.accounting import SENTENCE, Loose, crit_marks, numbers_in, team_marks
from ebtui.core.judgment.vocabulary import (
    CRIT_RE,
    MODIFIER_RULE,
    NUM_RE,
    TRAILING_SCORE,
    Val,
    interpret,
    scoring_word,
    skipped,
)
from ebtui.core.judgment.wordclass import AUXILIARIES, FUNCTION_WORDS

# --------------------------------------------------------------------------------------------------------
# What was found, and what it adds up to
# --------------------------------------------------------------------------------------------------------


@dataclass
class Found:
    shown: str
    value: int | None
    problem: str | None
    kind: str = "line"  # json, json_repaired, table, line, prose, correction
    source: str = ""  # the exact text it was read from
    pos: int = 0  # offset of that text in the reply
    corrective: bool = False  # given as a correction of an earlier value
    via: str = "label"  # how its team was named: label (Team A / team_a), id (model id), role
    seq: int = 0  # reading order within the reply
    settled: bool = False  # read from a sentence whose structure leaves one reading (see settled_reading)


_TEXT_KINDS = ("line", "prose", "correction")


@dataclass
class Ctx:
    """Where the reader is: set before each line, table row or JSON object is read."""

    pos: int = 0
    source: str = ""
    clean: str = ""  # the line as read (markup removed): positions of numbers refer to it
    kind: str = "line"
    corrective: bool = False
    via: str = "label"
    section: str | None = None  # the team whose section the line stands in


_LABEL_PHRASE = re.compile(r"[\s>*_\-•]*(?:\d{1,2}[.)][ \t]+)?[A-Za-z][^:.;!?\n\d]{0,60}?[*_]*[ \t]*[:=→][ \t*_]*")
_FILLER = {
    "score", "scores", "scored", "rating", "ratings", "rated", "grade", "mark", "points", "pts", "for", "team",
    "teams", "criterion", "criteria", "and", "vs", "out", "of", "the", "a", "b", "s", "presenting", "responding",
    "presenter", "respondent", "responder", "side", "is", "total", "final", "revised", "corrected", "updated",
}


@lru_cache(maxsize=8)
def _name_starts(clean: str) -> list[int]:
    """Where CRIT_RE's matches in `clean` start, scanned once per line (see _last_name)."""
    return [m.start() for m in CRIT_RE.finditer(clean)]


def _last_name(clean: str, end: int) -> int | None:
    """Where the last of CRIT_RE's matches in clean[:end] starts (None: no match), in time independent of `end`:
    the same as `list(CRIT_RE.finditer(clean[:end]))[-1].start()`, which rescans the line for every number.
    Only a match ending at `end` can differ from the whole line's scan (the end of the text satisfies the
    closing lookahead where the next character may not), and no match holds a character other than a letter,
    a space, "_", "-" or "."; so before the run of such characters that ends at `end` both scans agree, and
    only that run is scanned again."""
    run = end
    while run > 0 and (clean[run - 1].isalpha() or clean[run - 1].isspace() or clean[run - 1] in "_-."):
        run -= 1
    tail = [m.start() for m in CRIT_RE.finditer(clean, run, end)]
    if tail:
        return tail[-1]
    starts = _name_starts(clean)
    k = bisect_left(starts, run) - 1
    return starts[k] if k >= 0 else None


def _line_kind(clean: str, v: Val) -> str:
    """"line" where the number stands as a label's value ("3. Stakeholder recognition - 8", "Team A: 8/10",
    "**Consistency** (Team B): 7"), else "prose" (a sentence the number was read out of)."""
    if v.start < 0:
        return "prose"
    sent = sentence_at(clean, v.start)
    # (a clause set off after the value by a dash or a bracket is its reason: "7/10 — does this deserve a 9? No")
    aside = _ASIDE.search(clean, v.start, sent[1]) if sent is not None else None
    if sent is not None and (_OPEN_BEFORE.search(clean, sent[0], v.start)
                             or _OPEN_ANYWHERE.search(clean, sent[0], aside.start() if aside else sent[1])):
        return "prose"  # "I'd give consistency a 8", "Consistency scored a 5 if …": a modal, negation or condition
    trail = TRAILING_SCORE.search(clean, max(0, len(clean) - 80))
    names = list(CRIT_RE.finditer(clean, max(0, v.start - 200), v.start))
    if trail is not None and trail.start("num") == v.start and names and all(
            skipped(clean, m.start("num"), m.end("num")) for m in NUM_RE.finditer(clean, names[-1].end(), v.start)):
        # "- Principle articulation: 2 principles, stated early → 8/10": the line ends on its score, and every
        # number before it is explained (a count); where one is not ("1 here, really, …: 5") the read is prose
        return "line"
    # the whole line up to the number is one label phrase ending in a colon: "- Honesty about weaknesses: 9"
    if _LABEL_PHRASE.fullmatch(clean, 0, v.start) and CRIT_RE.search(clean, 0, v.start):
        return "line"
    last = _last_name(clean, v.start)
    # from the (last) criterion's name on: "Consistency: 7 … actually, Consistency: 6"
    prefix = clean[last:v.start] if last is not None else clean[: v.start]
    # "Consistency: Strong (8)": a rating of a word or two, then the number alone in brackets, is a label's value
    prefix = re.sub(r"([:=]|[-–—][ \t])[ \t*_]*(?:[A-Za-z][A-Za-z'’ -]{0,40}|[^\w\s()]{1,12}[ \t]*)\([ \t]*$", r"\1",
                    prefix)
    # "Consistency: a clear 8": a label's article and its modifiers (vocabulary.MODIFIER_RULE) before the number
    mods = _ARTICLE_MODIFIERS.search(prefix)
    if mods and MODIFIER_RULE and all(MODIFIER_RULE[0](w) for w in mods.group(2).split()):
        prefix = prefix[:mods.start()] + mods.group(1)
    # "… **Score: 8.**": a score label right before the number is a label's value, whatever came before it
    if re.search(r"(?i)(?<![a-z])(?:score|rating|grade|mark|points)[*_]*[ \t]*[:=]?[ \t*_]*$", prefix):
        return "line"
    prefix = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", prefix)
    prefix = CRIT_RE.sub(" ", prefix)
    prefix = re.sub(r"(?i)\bteam[\s_-]*(?:[ab12]|one|two)\b", " ", prefix)
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’]*", re.sub(r"\S*[\d.][\S]*", " ", prefix))
             if w.lower().replace("’", "'").removesuffix("'s") not in _FILLER]
    return "line" if not words else "prose"


#: what leaves a sentence's score open: a condition or a question anywhere in it; a modal or a negation before
#: the value ("would earn a 7", "does not deserve a 9") — closed classes, listed whole
_OPEN_ANYWHERE = re.compile(r"(?i)(?<![a-z'’])(?:if|unless|whether|otherwise)(?![a-z'’])|\?")
_OPEN_BEFORE = re.compile(r"(?i)(?<![a-z'’])(?:would|could|might|may|should|must|shall|ought|not|never|no|nor"
                          r"|neither|cannot)(?![a-z'’])|n['’]t(?![a-z])|['’]d(?![a-z])")


#: the judge's plain statement of a score in the conditional of politeness ("I'd give Team A a seven", "I would
#: put Team B at 6"): a first person, "would", then a word of scoring, or a verb that sets the team "at" the value
_STATEMENT = re.compile(r"(?i)(?<![a-z'’])(?:i|we)(?:['’]d|[ \t]+would)[ \t]+(?P<verb>[a-z]+)(?![a-z'’])")
#: a counterfactual however it is put: "would have", an inversion ("had it", "were they"), "but for"
_COUNTERFACTUAL = re.compile(r"(?i)(?<![a-z'’])(?:would|['’]d)[ \t]+have(?![a-z])|(?<![a-z'’])(?:had|were|should)[ \t]+"
                             r"(?:it|they|he|she|we|i|team[ \t]+\w+|the[ \t]+\w+)(?![a-z'’])|(?<![a-z])but[ \t]+for(?![a-z])")


def open_before(clean: str, s0: int, start: int) -> bool:
    """Whether a modal or a negation before the value leaves it open: every one is, except the judge's plain
    statement "I'd give Team A a seven" / "I would put Team B at 6" in a sentence with no counterfactual."""
    for m in _OPEN_BEFORE.finditer(clean, s0, start):
        st = _STATEMENT.search(clean, max(s0, m.start() - 4), min(start, m.end() + 30))
        if st is None or not st.start() <= m.start() < st.start("verb") or _COUNTERFACTUAL.search(clean, s0, start):
            return True
        verb = st.group("verb").lower()
        if not (scoring_word(verb) or re.search(r"(?i)(?<![a-z])at[ \t]+(?:an?[ \t]+)?$", clean[st.end():start])) \
                or verb in ("have", "not", "be", "never"):
            return True
    return False


_MODAL = re.compile(r"(?i)(?<![a-z'’])(?:would|could|might)(?![a-z'’])|['’]d(?![a-z])")
_CONDITION = re.compile(r"(?i)(?<![a-z'’])(?:if|unless)(?![a-z'’])")


def counterfactual(clean: str, start: int) -> bool:
    """Whether the value at `start` is what the judge would give under a condition ("I'd give it a 7 if it
    had …", "would have been 8 had it …", "a 9 but for …"): a counterfactual, or a modal before the value in
    a sentence with a condition."""
    sent = sentence_at(clean, start)
    if sent is None:
        return False
    return bool(_COUNTERFACTUAL.search(clean, sent[0], sent[1]) or (
        _MODAL.search(clean, sent[0], start) and _CONDITION.search(clean, sent[0], sent[1])))


_ARTICLE_MODIFIERS = re.compile(r"([:=]|[-–—][ \t])[ \t*_]*an?[ \t]+((?:[A-Za-z][A-Za-z'’-]*[ \t]+){1,2})$")
_ASIDE = re.compile(r"[—–()\[\]:]|[ \t]-[ \t]")
_WINDOW = 400  # characters either side of a value: a longer sentence is not settled (and a line stays linear)


def sentence_at(clean: str, pos: int) -> tuple[int, int] | None:
    """The sentence of `clean` holding `pos`, looked for within _WINDOW characters (None: longer than that)."""
    lo = max(0, pos - _WINDOW)
    for m in SENTENCE.finditer(clean, lo, min(len(clean), pos + _WINDOW)):
        if m.start() <= pos < m.end():
            return None if m.start() == lo and lo > 0 else (m.start(), m.end())
    return None


def _gives_score(between: str) -> bool:
    """Whether the words between a criterion and its value give it that value: the verb nearest the value, if
    any, is the rubric's word for giving a score ("earns", "deserves", "I award them") or a copula ("is"),
    never another verb ("falls short of a 9", "misses a 9")."""
    from lemminflect import getAllLemmas  # type: ignore[import-untyped]

    for w in reversed(re.findall(r"[A-Za-z]+(?:['’][a-z]+)?", CRIT_RE.sub(" ", between))):
        low = w.lower()
        if low in FUNCTION_WORDS:
            if low in AUXILIARIES:
                return True  # "is a 6", "was an 8"
            continue
        lemmas = getAllLemmas(low)
        if "VERB" in lemmas or "AUX" in lemmas:
            return scoring_word(low)
    return True


def settled_reading(clean: str, start: int, team: str, crit: str, rx: re.Pattern[str] | None,
                    section: str | None) -> bool:
    """Whether a score read out of a sentence has one reading by structure: the sentence names its criteria
    and holds as many candidate values (every other number explained), each beside its own criterion in turn;
    it names no team but this one (else the line before it or the section does); no condition, question,
    modal or negation leaves it open."""
    sent = sentence_at(clean, start)
    if sent is None or rx is None:
        return False
    s0, s1 = sent
    text = clean[s0:s1]
    if _OPEN_ANYWHERE.search(text) or open_before(clean, s0, start) or counterfactual(clean, start):
        return False
    names = [(m.start(), m.end()) for m in rx.finditer(text)]
    cands = [(n.start + s0, "n") for n in numbers_in(text) if n.reason is None
             and not any(a <= n.start < b for a, b in names)]
    if start not in {p for p, _ in cands}:
        return False  # the value read is one the accounting explains as something else
    marks = [(p + s0, c) for p, c in crit_marks(text)]
    if len({c for _, c in marks}) != len(marks) or len(marks) != len(cands) or crit not in {c for _, c in marks}:
        return False
    seq = sorted(marks + cands)
    if any(seq[i][1] == "n" and seq[i + 1][1] == "n" or seq[i][1] != "n" and seq[i + 1][1] != "n"
           for i in range(len(seq) - 1)):
        return False  # two criteria or two values side by side: which goes with which is open
    at = [p for p, _ in seq].index(start)
    mate = seq[at + 1] if seq[0][1] == "n" else seq[at - 1]
    if mate[1] != crit or not _gives_score(clean[min(mate[0], start):max(mate[0], start)]):
        return False
    teams = {t for p, t in team_marks(text, rx, section)}
    if teams:
        return teams == {team}
    lo = max(0, s0 - _WINDOW)  # (the team named before it in the line: looked for in the window before it)
    before = {t for p, t in team_marks(clean[lo:s0], rx, section)}
    return before == {team} if before else section == team


@dataclass
class Collector:
    scores: dict[str, dict[str, list[Found]]] = field(default_factory=lambda: {"a": {}, "b": {}})
    justification: dict[str, list[str]] = field(default_factory=lambda: {"a": [], "b": []})
    overall: list[str] = field(default_factory=list)
    unattributed: int = 0
    sources: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # review reasons found while reading
    #: (team, criterion) -> the line or row that named the criterion for the team, but held no number that
    #: could be identified as its score (quoted where the score stays missing)
    unread: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (criterion, sentence): a correction of that criterion's score that names no team of this round
    doubts: list[tuple[str, str]] = field(default_factory=list)
    #: (team, criterion) -> (sentence, position): a change of that score the judge weighed but did not state as
    #: made ("I weighed lowering it to 6"); the cell is a conflict unless a later correction settles it
    hedges: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    ctx: Ctx = field(default_factory=Ctx)
    seq: int = 0
    #: numbers nothing explains, in text that names a cell (see accounting.py): conflicts unless a value read
    #: for a cell the same text names explains them
    loose: list[Loose] = field(default_factory=list)
    rx: re.Pattern[str] | None = None  # the round's team names (set by the text reader)
    #: cells given as another cell's score ("same as principle articulation"): references.Reference, resolved
    #: after the reading (references.resolve)
    references: list[Any] = field(default_factory=list)

    def add(self, team: str | None, crit: str, found: Found, source: str, via: str | None = None) -> None:
        if team is None:
            self.unattributed += 1
            return
        c = self.ctx
        found.pos = c.pos if not found.pos else found.pos
        found.source = found.source or c.source
        if found.kind == "line":
            found.kind = c.kind if source != "lines" else found.kind
        found.corrective = found.corrective or c.corrective
        found.via = via or c.via
        self.seq += 1
        found.seq = self.seq
        self.scores[team].setdefault(crit, []).append(found)
        self.sources.add(source)

    def add_val(self, team: str | None, crit: str, v: Val, source: str, *, via: str | None = None,
                kind: str | None = None, settled: bool | None = None) -> None:
        value, problem = interpret(v)
        if kind is None:
            kind = _line_kind(self.ctx.clean, v) if source == "lines" else self.ctx.kind
        if settled is None:
            settled = kind == "prose" and team is not None and v.start >= 0 and settled_reading(
                self.ctx.clean, v.start, team, crit, self.rx, self.ctx.section)
        self.add(team, crit, Found(v.shown(), value, problem, kind=kind, corrective=v.corrective, settled=settled),
                 source, via)

    def count(self) -> int:
        return sum(len(d) for d in self.scores.values())


@dataclass
class TextState:
    team: str | None = None
    crit: str | None = None
    section: str | None = None  # "a", "b", "overall" or None: where prose goes
    via: str = "label"  # how the current team was named
    corrective: bool = False  # under a "Revised scores" / "Correction" heading
    pair: tuple[str, str] | None = None  # under "Scores (Team A / Team B)": "Consistency: 8 / 6" gives both
    level: int = 0  # the level of the heading that opened the team's section (see text_reader._heading_level)
