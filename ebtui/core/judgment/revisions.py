"""Late revisions: a value the reader did not take, in a later sentence that names a cell, flags that cell.

After the main reading, every sentence, line or table row that names a criterion and is not the source of that
cell's value is searched, by structure, for a score-like value; one that differs from the value read, or a
change that would move it, flags the cell ("read as 8, but …"). A grade ("7+", "8-") as a cell's value leaves
the cell missing and flagged. See docs/JUDGMENT.md, "Late revisions"."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

from ebtui.core.judgment.accounting import numbers_in
from ebtui.core.judgment.vocabulary import (
    CRIT_RE,
    LABEL_LEVEL,
    OPPONENT_RE,
    TEAM_LABEL,
    WORD_VALUES,
    crit_name,
    heading_level,
    other,
    scoring_word,
    team_of_match,
)
from ebtui.core.judgment.wordclass import count_reason
from ebtui.core.records import CRITERION_LABELS, Judgment, ReviewReason, Scores, ScoreSource

# English's closed classes this module reads structure by (no open-class word is listed: verbs, nouns and
# adjectives are told by lemminflect's lexicon)
_ARTICLES = frozenset({"a", "an"})
_DETERMINERS = frozenset("a an the this that these those each every all both some any no another either neither "
                         "my your his her its our their".split())
_OBJECT_PRONOUNS = frozenset("it that this them him her".split())
_SUBJECTS = frozenset("i we you he she they it i'm i'll i'd we'll we'd let's".split())
_MODALS = frozenset("to will would should shall could can may might must 'll 'd".split())
_COPULAS = frozenset("be is was are were been being am".split())
_AUXILIARIES = _COPULAS | frozenset("has have had do does did having".split()) | _MODALS
#: directional particles and comparatives of quantity (a change's direction: "a point off", "up a notch")
_PARTICLES = frozenset("up down off back".split())
_QUANTITY_COMPARATIVES = frozenset("more less fewer".split())
#: prepositions that take a change's target ("down to six", "toward six", "put it at seven")
_TARGET_PREPOSITIONS = frozenset("to toward towards at into".split())
_PUNCT_VALUE = frozenset(":=—–-(")
#: the scale's units, as a change counts them ("a point", "a notch")
_UNITS = frozenset("point points notch notches peg pegs mark marks".split())
_CLOSED = _DETERMINERS | _OBJECT_PRONOUNS | _SUBJECTS | _AUXILIARIES | _PARTICLES | _TARGET_PREPOSITIONS | frozenset(
    "of in on for with by from than and or but nor so as not".split())
#: words before an article that make what follows no value of the cell: "short of a perfect score", "rather than
#: a six", "above a seven" (a preposition of comparison or exclusion)
_NOT_THE_VALUE = frozenset("of than from without beyond above below over under instead rather".split())
_NEGATION = frozenset("not never no nor".split())

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+(?:\.\d+)?|[^\sA-Za-z\d]")
_SENTENCE = re.compile(r"(?:[^.!?\n]|\.(?=\d)|[.!?](?![ \t\n]|$))+[.!?]*")
_CANDIDATE = re.compile(r"(?i)\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|marks?|notch|point|peg"
                        r"|match|matching|equal|same|line|level|par|scores?|ratings?|grades?|values?)\b")
_NUMBERISH = re.compile(r"(?i)\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten)\b")
#: a grade beside a whole number: "7+", "8-", "8−", "7-ish" (not "8-10", not "8 - strong")
_GRADE = re.compile(r"(?<![\w.])(?P<n>10|[1-9])(?:[ \t]*/[ \t]*10)?(?P<g>\+|[−-](?![\d\w])|-?ish(?![a-z]))",
                    re.IGNORECASE)
_FULL = re.compile(r"(?i)\b(?:full|top|perfect)[ \t]+(?:marks|score|points)\b")
_REFERENCE = re.compile(r"(?i)\b(?:to[ \t]+match|matching|(?:set[ \t]+)?equal[ \t]+(?:to|with)|(?:the[ \t]+)?same[ \t]+as"
                        r"|in[ \t]+line[ \t]+with|level[ \t]+with|on[ \t]+a[ \t]+par[ \t]+with)[ \t]+"
                        r"(?:(?:its|their|his|her|the|team[ \t]+[ab12]['’]s|[ab]['’]s)[ \t]+)?")
#: a change's target that is another criterion's value: "match it to its consistency score", "at their
#: principle articulation mark"
_TARGET_OWNER = re.compile(r"(?i)\b(?:to|with|at)[ \t]+(?:its|their|the|team[ \t]+[ab12]['’]s|[ab]['’]s)[ \t]+")
_NW = r"10|[1-9]|one|two|three|four|five|six|seven|eight|nine|ten"
#: a move between two values on the scale: "from 1 to 10", "from a 6 to an 8" (a range's "scale from 1 to 10"
#: is told apart by the scale's noun or a verb of scoring just before it)
_FROM_TO = re.compile(rf"(?i)\bfrom[ \t]+(?:an?[ \t]+)?(?:{_NW})(?![\d.])(?:[ \t]*/[ \t]*10)?[ \t]*(?:to|→|->)[ \t]*"
                      rf"(?:an?[ \t]+)?(?P<m>{_NW})\b(?![ \t]*(?:%|\.\d|/[ \t]*(?!10)\d))")
_RANGE_BEFORE = re.compile(r"(?i)\b(?:scales?|ranges?|rated|scored|graded|ratings?|scores?|marks?|points?)"
                           r"(?:[ \t]+[a-z]+)?[ \t]*$")
_SCORE_NOUN = re.compile(r"(?i)[ \t]+(?:score|mark|rating|grade|value|level)s?\b")
_BARE_TEAM = re.compile(r"(?<![\w'’])([AB])(?:['’]s(?![a-z])|(?=[ \t]*[:=]))")
#: a team named by what it did in the round: "the team that presented", "the responding team"
_ROLE_PHRASE = re.compile(r"(?i)\b(?:(?:team|side)[ \t]+(?:that|which|who)[ \t]+(?:[a-z]+[ \t]+)?(?P<v1>[a-z]+)"
                          r"|(?P<v2>[a-z]+ing)[ \t]+(?:team|side))\b")
_ROLE_LEMMAS = {"present": "a", "respond": "b", "comment": "b", "reply": "b", "answer": "b", "rebut": "b"}


@dataclass(frozen=True)
class _Tok:
    text: str
    low: str
    start: int
    end: int


@dataclass
class _Value:
    at: int  # where it starts in the unit
    shown: str
    value: int | None  # None: a change with no value of its own, or a grade
    moves: bool = False  # a change ("a point off"): moves whatever was read
    ref: str | None = None  # the criterion whose value it is ("to match its principle articulation score")


@lru_cache(maxsize=8192)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas  # type: ignore[import-untyped]

    return dict(getAllLemmas(word))


@lru_cache(maxsize=8192)
def _verb_form(word: str) -> str | None:
    """The verb form a word can be by lemminflect ("ing", "ed", "s", "base"), or None: no verb."""
    from lemminflect import getAllInflections

    low = word.lower().replace("’", "'")
    if low in _AUXILIARIES or low in _DETERMINERS or low in _OBJECT_PRONOUNS or low in _PARTICLES:
        return None
    for lemma in _lemmas(low).get("VERB", ()):
        forms = getAllInflections(lemma)
        for tag, name in (("VBG", "ing"), ("VBD", "ed"), ("VBN", "ed"), ("VBZ", "s"), ("VB", "base")):
            if low in forms.get(tag, ()) or (tag == "VB" and low == lemma):
                return name
    if _lemmas(low).get("VERB"):  # a form the inflection table lacks ("daring"): by its ending
        return "ing" if low.endswith("ing") else "ed" if low.endswith(("ed", "en")) else "s" if low.endswith("s") \
            else "base"
    return None


def _is_verb(toks: list[_Tok], i: int) -> bool:
    """Whether toks[i] stands as a verb: a verb form not inside a noun phrase (after a determiner or a
    preposition), a base form only after a modal, "to", a subject or at a clause's start ("make it seven")."""
    form = _verb_form(toks[i].low)
    if form is None:
        return False
    prev = toks[i - 1].low if i > 0 else ""
    if prev in _DETERMINERS and prev not in _OBJECT_PRONOUNS:
        return False
    if form in ("ing", "ed"):
        return True
    if form == "s":
        return not prev or prev.isalpha()  # "it pulls", "Team A's consistency pulls"
    if prev in _MODALS or prev in _SUBJECTS or prev.endswith(("'m", "'ll", "'d")):
        return True  # "I'll lower", "to raise", "we bump"
    # an imperative opens its clause and takes an object: "make it seven", "lower Team A's consistency"
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    return (not prev or prev in (";", ":", ",", "—", "–", "(", "and", "then", "so", "just")) and (
        nxt in _OBJECT_PRONOUNS or nxt in _DETERMINERS or nxt == "team" or bool(CRIT_RE.fullmatch(nxt)))


def _verb_before(toks: list[_Tok], i: int, window: int = 12) -> int | None:
    for j in range(i - 1, max(-1, i - 1 - window), -1):
        if toks[j].text in ".;!?":
            return None
        if _is_verb(toks, j):
            return j
    return None


def _comparative(word: str) -> bool:
    from lemminflect import getAllInflections

    if word in _QUANTITY_COMPARATIVES:
        return True
    return any(word in getAllInflections(lemma).get(tag, ()) for cls in ("ADJ", "ADV")
               for lemma in _lemmas(word).get(cls, ()) for tag in ("JJR", "RBR"))


def _object_between(toks: list[_Tok], v: int, q: int) -> bool:
    """Whether the words between a verb (v) and q are its object: a pronoun, or a phrase naming a criterion."""
    span = toks[v + 1:q]
    if not span or len(span) > 7:
        return False
    if len(span) == 1 and span[0].low in _OBJECT_PRONOUNS:
        return True
    return any(CRIT_RE.fullmatch(t.text) for t in span) or (span[0].low in _DETERMINERS and any(
        t.low in ("score", "scores", "mark", "rating", "grade") for t in span))


def _score_subject(toks: list[_Tok], v: int) -> bool:
    """Whether the verb at v has a score for its subject: a criterion's name or a score noun right before it
    (not "it": "it conceded two points" is the team)."""
    return v > 0 and (toks[v - 1].low in ("score", "mark", "rating", "grade") or bool(CRIT_RE.fullmatch(
        toks[v - 1].text)) or (v > 1 and bool(CRIT_RE.fullmatch(f"{toks[v - 2].text} {toks[v - 1].text}"))))


def _by_change(toks: list[_Tok], by: int) -> bool:
    """Whether "by N" measures a change of a score: after a particle ("goes up by one"), or after a verb whose
    object or subject is a score ("lower it by 2", "consistency rises by one"; not "won by one")."""
    v = _verb_before(toks, by)
    if v is None or any(t.low in _COPULAS for t in toks[v + 1:by]):
        return False
    return toks[by - 1].low in _PARTICLES or _object_between(toks, v, by) or (v == by - 1 and _score_subject(toks, v))


def _value_place(toks: list[_Tok], i: int) -> bool:
    """Whether toks[i] (a number) stands where a score does: after an article and modifiers ("a middling six"),
    a change's preposition after a verb ("down to six"), a verb and its pronoun ("make it seven"), a copula
    ("should be 6"), a verb of scoring ("earns seven"), a label's separator."""
    if i == 0:
        return False
    prev = toks[i - 1].low
    if prev in _PUNCT_VALUE:
        return not (prev == ":" and i >= 2 and toks[i - 2].text in "\"'")  # a JSON number: the JSON reader's
    if any(t.low in _NEGATION or t.low.endswith(("n't", "n’t")) for t in toks[max(0, i - 4):i]):
        return False  # "should not be six", "I won't lower it to six"
    if prev in _COPULAS:
        # "its consistency should be 6", "it is six": the copula's subject is the score (not "the list is six")
        k = i - 2
        while k >= 0 and (toks[k].low in _AUXILIARIES or toks[k].low in ("now", "still", "really", "then")):
            k -= 1
        return k >= 0 and (toks[k].low in _OBJECT_PRONOUNS or bool(CRIT_RE.fullmatch(toks[k].text))
                           or toks[k].low in ("score", "mark", "rating", "grade"))
    if scoring_word(prev) and _verb_form(prev) is not None and prev not in _UNITS:
        return True
    j = i - 1
    while j >= 0 and j >= i - 2 and toks[j].text.isalpha() and toks[j].low not in _CLOSED and not (
            "NOUN" in _lemmas(toks[j].low) and len(_lemmas(toks[j].low)) == 1):
        j -= 1
    if j >= 0 and toks[j].low in _ARTICLES:
        return not (j > 0 and toks[j - 1].low in _NOT_THE_VALUE)  # "a 7", "a middling six" (not "short of a 9")
    if prev in _TARGET_PREPOSITIONS:
        return _verb_before(toks, i - 1) is not None
    return prev in _OBJECT_PRONOUNS and i >= 2 and _is_verb(toks, i - 2)


_SCORE_TAIL = re.compile(r"(?i)[ \t]*\b(?:score|mark|rating|grade)s?[ \t]*$")


def _moved_is_a_score(lead: str) -> bool:
    """Whether what "from N to M" moves is a score: a criterion's name (and a score noun) or a score noun right
    before "from" ("moved Team A's consistency from 6 to 8"; not "changed its answer from 2 to 1")."""
    lead = lead.rstrip()
    tail = _SCORE_TAIL.search(lead)
    if tail is not None:
        return True
    return any(c.end() == len(lead) for c in CRIT_RE.finditer(lead))


def _values(unit: str, toks: list[_Tok]) -> list[_Value]:
    """The score-like values of one sentence, line or row, by structure (see _value_place and _changes)."""
    out: list[_Value] = []
    by_start = {t.start: k for k, t in enumerate(toks)}
    for n in numbers_in(unit) if _NUMBERISH.search(unit) else ():
        k = by_start.get(n.start)
        if k is None or n.value is None or n.value != int(n.value) or not 1 <= n.value <= 10 or "." in n.shown:
            continue
        word = toks[k].low in WORD_VALUES
        if n.reason is not None and not (word and n.reason.startswith("a number word in running text")):
            continue  # a count, a year, an enumerator, a scale, negated or asked: explained (accounting.py)
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        if nxt is not None and (nxt.low == "of" or (nxt.text == "-" and nxt.end < len(unit)
                                                    and unit[nxt.end:nxt.end + 1].isalpha())):
            continue  # "two of them", "a two-part test"
        if word and (count_reason(unit, n.end, n.value) or (n.value == 1 and nxt is not None and nxt.text.isalpha())):
            continue  # "three stakeholders", "one side"
        if _GRADE.match(unit, n.start) or not _value_place(toks, k):
            continue
        out.append(_Value(n.start, n.shown, int(n.value)))
    for m in _GRADE.finditer(unit):
        k = by_start.get(m.start())
        if k is not None and _value_place(toks, k):
            out.append(_Value(m.start(), m.group(0), None, moves=True))
    for m in _FULL.finditer(unit):
        k = by_start.get(m.start())
        if k is not None and _value_place(toks, k):
            out.append(_Value(m.start(), m.group(0), 10))
    for m in _FROM_TO.finditer(unit):  # a move between two values (not a scale's range): moves the cell
        w = m.group("m").lower()
        v = WORD_VALUES.get(w) or int(w)
        if _moved_is_a_score(unit[max(0, m.start() - 60):m.start()]) and \
                not _RANGE_BEFORE.search(unit, max(0, m.start() - 30), m.start()) and not count_reason(unit, m.end("m"), v):
            out.append(_Value(m.start("m"), m.group(0), v, moves=True))  # ("from 3 to 4 sources": a count)
    out += _changes(toks)
    for rx, scored in ((_REFERENCE, False), (_TARGET_OWNER, True)):
        for m in rx.finditer(unit):
            c = CRIT_RE.match(unit, m.end())
            k = by_start.get(m.start())
            if c is None or k is None or _verb_before(toks, k) is None or (
                    scored and not _SCORE_NOUN.match(unit, c.end())):
                continue
            out.append(_Value(m.start(), m.group(0) + c.group(0), None, ref=crit_name(c.group(0))))
    return out


def _changes(toks: list[_Tok]) -> list[_Value]:
    """Changes with no value of their own, by structure: a quantity of the scale's unit ("a point", "one notch")
    with a particle or comparative after it ("knocking a point off", "a point lower"), or after a verb's object
    and a particle or "by" ("bump it up a notch", "lower it by a point"), or right after the object."""
    out = []
    for q in range(1, len(toks)):
        if toks[q].low not in _UNITS:
            if toks[q - 1].low == "by" and (toks[q].low in WORD_VALUES or toks[q].text.isdigit()) and \
                    q + 1 < len(toks) and toks[q + 1].low not in _UNITS and _by_change(toks, q - 1):
                out.append(_Value(toks[q].start, f"by {toks[q].text}", None, moves=True))  # "goes up by one"
            continue
        d = q - 1
        if toks[d].low not in _ARTICLES and toks[d].low not in WORD_VALUES and not toks[d].text.isdigit() \
                and toks[d].low != "another":
            continue
        if toks[d].low in WORD_VALUES or toks[d].text.isdigit():
            if d > 0 and toks[d - 1].low in _ARTICLES | {"the"}:
                continue
        after = toks[q + 1].low if q + 1 < len(toks) else ""
        after2 = toks[q + 2].low if q + 2 < len(toks) else ""
        before = toks[d - 1].low if d > 0 else ""
        if after in ("of", "about", "that", "which", "where", "when", "who"):
            continue  # "made a point of answering", "a point about the nurses": an argument, no quantity
        v = _verb_before(toks, d)
        if v is None or any(t.low in _COPULAS for t in toks[v + 1:d]):
            continue  # ("… which is why its score is 3 points higher": a difference, stated)
        moved = False
        if after in _PARTICLES or (_comparative(after) and after2 != "than"):
            moved = True  # "knocking a point off", "put it a point lower" (not "a point higher than B's")
        elif before in _PARTICLES or before == "by":
            moved = _object_between(toks, v, d - 1)  # "bump it up a notch" (not "picked up a point")
        elif v < d - 1:
            moved = _object_between(toks, v, d)  # "raise it a notch"
        else:
            moved = _score_subject(toks, v)  # "Team A's consistency drops a notch" (not "Team B raised a point")
        if moved:
            out.append(_Value(toks[d].start, f"{toks[d].text} {toks[q].text}", None, moves=True))
    return out


# --------------------------------------------------------------------------------------------------------
# Where each value belongs: the cell a sentence names, by its team and criterion
# --------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _role_team(verb: str) -> str | None:
    low = verb.lower()
    for lemma in (*_lemmas(low).get("VERB", ()), *_lemmas(low).get("NOUN", ()), low):
        for root, team in _ROLE_LEMMAS.items():
            if lemma.startswith(root):
                return team
    return None


def _team_marks(unit: str, rx: re.Pattern[str], section: str | None) -> list[tuple[int, str]]:
    marks = [(m.start(), team_of_match(m)) for m in rx.finditer(unit)]
    marks += [(m.start(), m.group(1).lower()) for m in _BARE_TEAM.finditer(unit)]
    for m in _ROLE_PHRASE.finditer(unit):
        team = _role_team(m.group("v1") or m.group("v2") or "")
        if team is not None:
            marks.append((m.start(), team))
    if section in ("a", "b"):
        names = [(c.start(), c.end()) for c in CRIT_RE.finditer(unit)]  # "engaging constructively with the other side"
        marks += [(m.start(), other(section)) for m in OPPONENT_RE.finditer(unit)
                  if not any(a <= m.start() < b for a, b in names)]
    return sorted(marks)


def _crit_marks(unit: str) -> list[tuple[int, str]]:
    """Where the sentence names a criterion, and which; not a plural counted ("3 stakeholders", "stakeholders
    named: four", "frameworks cited — A: two")."""
    out = []
    for m in CRIT_RE.finditer(unit):
        if re.search(r"\d[ \t]*$", unit[max(0, m.start() - 8):m.start()]):
            continue
        nxt = re.match(r"[ \t]+([a-z]+)", unit[m.end():m.end() + 30])
        if m.group(0).lower().endswith("s") and nxt and _verb_form(nxt.group(1)) == "ed":
            continue
        out.append((m.start(), crit_name(m.group(0))))
    return out


def _nearest(marks: list[tuple[int, str]], at: int, *fallbacks: str | None, after: bool = True) -> str | None:
    """The mark nearest before `at`, else the first of `fallbacks` given (a section's, a paragraph's), else the
    first mark after it (`marks` sorted by position; found by bisection, so a line of many is still linear)."""
    k = bisect_left(marks, (at, ""))
    if k > 0:
        return marks[k - 1][1]
    given = next((f for f in fallbacks if f is not None), None)
    if given is not None or not after:
        return given
    k = bisect_right(marks, (at, "\uffff"))
    return marks[k][1] if k < len(marks) else None


@dataclass
class _Unit:
    start: int
    end: int
    team: str | None  # the section's team
    crit: str | None  # the heading's criterion
    para: str | None  # the team the paragraph named last before this sentence


_HEADING = re.compile(r"[ \t]*(?:#{1,6}[ \t]|(?:\*\*|__)[^*_\n]{1,80}(?:\*\*|__)[ \t]*:?[ \t]*$|[^\n.!?]{1,60}:[ \t]*$)")
#: a heading that says what follows supersedes what came before ("Final scores", "Revised")
_LATE_HEADING = re.compile(r"(?im)^[ \t#*_>-]*[^\n]{0,40}\b(?:final|revised|corrected|adjusted|updated|amended)\b[^\n.!?]{0,40}$")
#: a team named right after the value, as its owner: "a 6 for Team B's consistency"
_OWNER_AFTER = re.compile(r"(?i)[ \t]*(?:/[ \t]*10[ \t]*)?(?:points?[ \t]+)?(?:for|to|on)[ \t]+(?:the[ \t]+)?")
_THIRD = re.compile(
    r"(?i)(?<![a-z0-9])team[ \t_-]*(?:[c-z]|[03-9]|three|four)(?![a-z0-9])"
    r"|(?<![a-z])(?:previous|another|third|earlier|prior|hypothetical|last|former|past|fictional)"
    r"[ \t]+(?:team|side|group|round|week|year)s?(?![a-z])")


def _units(text: str, rx: re.Pattern[str]) -> list[_Unit]:
    """The reply's sentences, lines and table rows, each with the team of its section, the criterion of its
    heading and the team its paragraph last named: a short line naming one team ("## Team A", "**Team B**",
    '"team_a": {') opens that team's section; an unknown heading at its level or above closes it."""
    out: list[_Unit] = []
    team: str | None = None
    level = 0
    crit: str | None = None
    para: str | None = None
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        body = line.strip()
        if not body:
            para = None
            continue
        short = len(body) <= 60 and not re.search(r"[.!?]$", body) and not re.search(r"\d", rx.sub(" ", body))
        teams = {team_of_match(m) for m in rx.finditer(body)}
        heading = _HEADING.match(line) is not None
        if short and len(teams) == 1 and (len(body) <= 30 or heading):
            team, crit, para, level = teams.pop(), None, None, heading_level(line)
            continue
        crits = {crit_name(m.group(0)) for m in CRIT_RE.finditer(body)} if heading and not teams else set()
        if len(crits) == 1 and heading_level(line) < LABEL_LEVEL:
            crit, para = crits.pop(), None  # "### 2. Consistency (1 = contradictory, 10 = coherent)"
            continue
        if heading and not teams and _THIRD.search(body):
            team, crit, para, level = "x", None, None, heading_level(line)  # a third party's section: its own
            continue
        if heading and not teams and not crits and not re.search(r"\d", body):
            if heading_level(line) <= level:
                team, crit, level = None, None, 0
            para = None
            continue
        if body.startswith("|"):
            out.append(_Unit(start, start + len(line), team, crit, para))
            continue
        for m in _SENTENCE.finditer(line):
            if m.group(0).strip():
                out.append(_Unit(start + m.start(), start + m.end(), team, crit, para))
                first = rx.search(m.group(0))
                para = team_of_match(first) if first else para
    return out


def _owner_after(body: str, v: _Value, tmarks: list[tuple[int, str]], cmarks: list[tuple[int, str]]) -> str | None:
    """The team of the cell named right after a value that no criterion precedes: "a 6 for Team B",
    "knocking a point off Team A's consistency" (a team named after a value whose criterion came first is a
    word of its reason: "Consistency: 7 — answers Team B's claim")."""
    end = v.at + len(v.shown)
    k = bisect_left(tmarks, (end, ""))
    if k == len(tmarks):
        return None
    owner = _OWNER_AFTER.match(body, end)
    if owner is not None and tmarks[k][0] == owner.end():
        return tmarks[k][1]
    c = bisect_left(cmarks, (end, ""))
    if (c == 0 or v.ref) and c < len(cmarks) and tmarks[k][0] < cmarks[c][0] and not (
            k > 0 and tmarks[k - 1][0] < v.at):
        return tmarks[k][1]
    return None


# --------------------------------------------------------------------------------------------------------
# The audit
# --------------------------------------------------------------------------------------------------------


def _span(src: ScoreSource, text: str) -> tuple[int, int]:
    at = src.position if src.position is not None else -1
    if at >= 0 and text.startswith(src.text, at):
        return at, at + len(src.text)
    found = text.find(src.text, max(0, at)) if src.text else -1
    if found < 0 and src.text:
        found = text.find(src.text)
    return (found, found + len(src.text)) if found >= 0 else (max(0, at), max(0, at) + 1)


def _quote(source: str, limit: int = 120) -> str:
    one = " ".join(source.split())
    return f"“{one[:limit]}{'…' if len(one) > limit else ''}”"


def _where(team: str, crit: str) -> str:
    return f"Team {TEAM_LABEL[team]} {CRITERION_LABELS[crit]}"


def _overlaps(unit: _Unit, span: tuple[int, int, str, str]) -> bool:
    return unit.start < span[1] and span[0] < unit.end + 1


def flag_revisions(j: Judgment, text: str, rx: re.Pattern[str]) -> Judgment:
    """The judgment with each cell a later sentence revises, and each graded value ("7+"), missing and flagged."""
    read: dict[tuple[str, str], int] = {}
    spans: dict[tuple[str, str], tuple[int, int, str, str]] = {}
    for src in j.provenance:
        if src.value is not None:
            read[(src.team, src.criterion)] = src.value
            a, b = _span(src, text)
            spans[(src.team, src.criterion)] = (a, b, src.kind, src.text)
    if not read:
        return j
    items: list[ReviewReason] = []
    graded: set[tuple[str, str]] = set()
    for cell, (_, _, _, source) in spans.items():
        value = read[cell]
        g = next((m for m in _GRADE.finditer(source) if m.group("n") == str(value)), None)
        if g is not None:
            graded.add(cell)
            items.append(ReviewReason(team=cell[0], criterion=cell[1], kind="invalid",
                                      message=f"{_where(*cell)}: {g.group(0)} in {_quote(source)} is not a whole "
                                              "score; left missing"))
    flagged: set[tuple[str, str]] = set(graded)
    late = [m.start() for m in _LATE_HEADING.finditer(text)]
    for unit in _units(text, rx):
        body = text[unit.start:unit.end]
        if unit.team == "x" or not _CANDIDATE.search(body) or not (unit.crit or CRIT_RE.search(body)) \
                or _THIRD.search(body):
            continue  # (a third party's numbers are its own)
        toks = [_Tok(m.group(0), m.group(0).lower().replace("’", "'"), m.start(), m.end()) for m in _TOKEN.finditer(body)]
        values = _values(body, toks)
        if not values:
            continue
        tmarks = _team_marks(body, rx, unit.team)
        cmarks = _crit_marks(body)
        for v in values:
            crit = _nearest(cmarks, v.at, unit.crit, after=v.ref is None)  # (what a reference names is no owner)
            named = _owner_after(body, v, tmarks, cmarks) or _nearest(tmarks, v.at, unit.team, unit.para)
            if crit is None:
                continue
            teams = [named] if named else ["a", "b"]
            if not v.moves and not v.ref and any(
                    v.value == read.get((t, crit)) and (len(teams) == 2 or (
                        _overlaps(unit, spans[(t, crit)]) and spans[(t, crit)][2] not in ("prose", "correction")))
                    for t in ("a", "b") if (t, crit) in spans):
                continue  # the value this very label or row gave its cell (whatever team its reason names), or
                # (whose is unclear) one team's value restated; a sentence's team the reader may have guessed
            for team in teams:
                cell = (team, crit)
                if cell in flagged or cell not in read:
                    continue
                a, b, kind, _ = spans[cell]
                if _overlaps(unit, spans[cell]):
                    continue  # the cell's own source
                if unit.start < a and (v.moves or kind == "correction" or bisect_left(late, a) > bisect_left(late, unit.end)):
                    continue  # before the value it would move, or that a correction or final heading settled
                target = read.get((team, v.ref)) if v.ref else v.value
                if not v.moves and (target is None or target == read[cell]):
                    continue  # the value read, restated
                what = f"{v.shown} ({target})" if v.ref else v.shown
                items.append(ReviewReason(team=team, criterion=crit, kind="revision",
                                          message=f"{_where(team, crit)}: read as {read[cell]}, but "
                                                  f"{'later ' if unit.start > a else ''}{what} in {_quote(body)}; left missing"))
                flagged.add(cell)
    if not items:
        return j
    return _with(j, items, graded, flagged)


def _with(j: Judgment, items: list[ReviewReason], graded: set[tuple[str, str]],
          revised: set[tuple[str, str]]) -> Judgment:
    scores = {t: j.parsed_scores(t).as_dict() for t in ("a", "b")}
    provenance = []
    for src in j.provenance:
        if (src.team, src.criterion) in revised:  # two values and no structure to settle them: a conflict
            scores[src.team][src.criterion] = None
            note = "a grade, not a whole score" if (src.team, src.criterion) in graded else "revised later, unsettled"
            src = src.model_copy(update={"value": None, "note": note})
        provenance.append(src)
    review = [*j.review_items, *items]
    return j.model_copy(update={
        "team_a_scores": Scores(**scores["a"]), "team_b_scores": Scores(**scores["b"]), "provenance": provenance,
        "review_items": review, "needs_review": True,
        "review_reasons": list(dict.fromkeys(i.message for i in review))})


# public names for the net run after this one (meta_statements.py reads sentences, names and quotes by these)
Unit = _Unit
units, team_marks, crit_marks, verb_form, lemmas = _units, _team_marks, _crit_marks, _verb_form, _lemmas
source_span, quote, where = _span, _quote, _where
