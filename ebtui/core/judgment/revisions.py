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
from ebtui.core.judgment.change_phrases import (
    ARTICLES,
    AUXILIARIES,
    CLOSED,
    COPULAS,
    DETERMINERS,
    NEGATION,
    NOT_THE_VALUE,
    OBJECT_PRONOUNS,
    PUNCT_VALUE,
    TARGET_PREPOSITIONS,
    Tok,
    Value,
    changes,
    is_verb,
    lemmas,
    score_noun,
    verb_before,
    verb_form,
)
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

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+(?:\.\d+)?|[^\sA-Za-z\d]")
_SENTENCE = re.compile(r"(?:[^.!?\n]|\.(?=\d)|[.!?](?![ \t\n]|$))+[.!?]*")
#: what a sentence needs to hold a value or a change at all: a number, or a quantity's word (any noun may follow)
_CANDIDATE = re.compile(r"(?i)\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|an?|another|by"
                        r"|match|matching|equal|same|line|level|par|full|top|perfect"
                        r"|scores?|ratings?|grades?|values?|marks?)\b")
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
#: a move between two values on the scale: "from 6 to 8", "from a 6 to an 8" (the scale's own ends, "from 1 to
#: 10", are its range unless a criterion's name stands right before "from")
_FROM_TO = re.compile(rf"(?i)\bfrom[ \t]+(?:an?[ \t]+)?(?P<f>{_NW})(?![\d.])(?:[ \t]*/[ \t]*10)?[ \t]*(?:to|→|->)[ \t]*"
                      rf"(?:an?[ \t]+)?(?P<m>{_NW})\b(?![ \t]*(?:%|\.\d|/[ \t]*(?!10)\d))")
_WORD_AFTER = re.compile(r"[ \t]+([A-Za-z]+)")
_BARE_TEAM = re.compile(r"(?<![\w'’])([AB])(?:['’]s(?![a-z])|(?=[ \t]*[:=]))")
#: a team named by what it did in the round: "the team that presented", "the responding team"
_ROLE_PHRASE = re.compile(r"(?i)\b(?:(?:team|side)[ \t]+(?:that|which|who)[ \t]+(?:[a-z]+[ \t]+)?(?P<v1>[a-z]+)"
                          r"|(?P<v2>[a-z]+ing)[ \t]+(?:team|side))\b")
_ROLE_LEMMAS = {"present": "a", "respond": "b", "comment": "b", "reply": "b", "answer": "b", "rebut": "b"}


def _value_place(toks: list[Tok], i: int) -> bool:
    """Whether toks[i] (a number) stands where a score does: after an article and modifiers ("a middling six"),
    a change's preposition after a verb ("down to six"), a verb and its pronoun ("make it seven"), a copula
    ("should be 6"), a verb of scoring ("earns seven"), a label's separator."""
    if i == 0:
        return False
    prev = toks[i - 1].low
    if prev in PUNCT_VALUE:
        return not (prev == ":" and i >= 2 and toks[i - 2].text in "\"'")  # a JSON number: the JSON reader's
    if any(t.low in NEGATION or t.low.endswith(("n't", "n’t")) for t in toks[max(0, i - 4):i]):
        return False  # "should not be six", "I won't lower it to six"
    if prev in COPULAS:
        # "its consistency should be 6", "it is six": the copula's subject is the score (not "the list is six")
        k = i - 2
        while k >= 0 and (toks[k].low in AUXILIARIES or toks[k].low in ("now", "still", "really", "then")):
            k -= 1
        return k >= 0 and (toks[k].low in OBJECT_PRONOUNS or bool(CRIT_RE.fullmatch(toks[k].text))
                           or score_noun(toks[k].low))
    if scoring_word(prev) and verb_form(prev) is not None and not (i >= 2 and (
            toks[i - 2].low in DETERMINERS or toks[i - 2].low in WORD_VALUES or toks[i - 2].text.isdigit())):
        return True  # "earns seven" (not "two points, seven": a noun after a quantity is no verb)
    j = i - 1
    while j >= 0 and j >= i - 2 and toks[j].text.isalpha() and toks[j].low not in CLOSED and not (
            "NOUN" in lemmas(toks[j].low) and len(lemmas(toks[j].low)) == 1):
        j -= 1
    if j >= 0 and toks[j].low in ARTICLES:
        return not (j > 0 and toks[j - 1].low in NOT_THE_VALUE)  # "a 7", "a middling six" (not "short of a 9")
    if prev in TARGET_PREPOSITIONS:
        return verb_before(toks, i - 1) is not None
    return prev in OBJECT_PRONOUNS and i >= 2 and is_verb(toks, i - 2)


_LAST_WORD = re.compile(r"([A-Za-z]+)[ \t]*$")


def _moved_is_a_score(lead: str, scale: bool) -> bool:
    """Whether what "from N to M" moves is a score: a criterion's name, or (unless N to M is the scale's own
    range, 1 to 10) a score noun of the rubric right before "from" ("moved Team A's consistency from 6 to 8",
    "its score from 6 to 8"; not "changed its answer from 2 to 1", "each score from 1 to 10")."""
    lead = lead.rstrip()
    if any(c.end() == len(lead) for c in CRIT_RE.finditer(lead)):
        return True
    tail = _LAST_WORD.search(lead)
    return not scale and tail is not None and score_noun(tail.group(1))


def _values(unit: str, toks: list[Tok]) -> list[Value]:
    """The score-like values of one sentence, line or row, by structure (see _value_place and _changes)."""
    out: list[Value] = []
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
        out.append(Value(n.start, n.shown, int(n.value)))
    for m in _GRADE.finditer(unit):
        k = by_start.get(m.start())
        if k is not None and _value_place(toks, k):
            out.append(Value(m.start(), m.group(0), None, moves=True))
    for m in _FULL.finditer(unit):
        k = by_start.get(m.start())
        if k is not None and _value_place(toks, k):
            out.append(Value(m.start(), m.group(0), 10))
    for m in _FROM_TO.finditer(unit):  # a move between two values (not a scale's range): moves the cell
        w = m.group("m").lower()
        v = WORD_VALUES.get(w) or int(w)
        f = m.group("f").lower()
        scale = (WORD_VALUES.get(f) or int(f), v) == (1, 10)
        if _moved_is_a_score(unit[max(0, m.start() - 60):m.start()], scale) and not count_reason(unit, m.end("m"), v):
            out.append(Value(m.start("m"), m.group(0), v, moves=True))  # ("from 3 to 4 sources": a count)
    out += changes(toks)
    for rx, scored in ((_REFERENCE, False), (_TARGET_OWNER, True)):
        for m in rx.finditer(unit):
            c = CRIT_RE.match(unit, m.end())
            k = by_start.get(m.start())
            if c is None or k is None or verb_before(toks, k) is None or (
                    scored and not ((w := _WORD_AFTER.match(unit, c.end())) and score_noun(w.group(1)))):
                continue
            out.append(Value(m.start(), m.group(0) + c.group(0), None, ref=crit_name(c.group(0))))
    return out


# --------------------------------------------------------------------------------------------------------
# Where each value belongs: the cell a sentence names, by its team and criterion
# --------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _role_team(verb: str) -> str | None:
    low = verb.lower()
    for lemma in (*lemmas(low).get("VERB", ()), *lemmas(low).get("NOUN", ()), low):
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
        if m.group(0).lower().endswith("s") and nxt and verb_form(nxt.group(1)) == "ed":
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


def _units(text: str, rx: re.Pattern[str], kept: frozenset[int] = frozenset()) -> list[_Unit]:
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
            if heading_level(line) <= level and start + len(line) - len(line.lstrip()) not in kept:
                team, crit, level = None, None, 0  # (unless sections.py keeps it: "**What they did well**")
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


def _owner_after(body: str, v: Value, tmarks: list[tuple[int, str]], cmarks: list[tuple[int, str]]) -> str | None:
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


def flag_revisions(j: Judgment, text: str, rx: re.Pattern[str], kept: frozenset[int] = frozenset()) -> Judgment:
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
    for unit in _units(text, rx, kept):
        body = text[unit.start:unit.end]
        if unit.team == "x" or not _CANDIDATE.search(body) or not (unit.crit or CRIT_RE.search(body)) \
                or _THIRD.search(body):
            continue  # (a third party's numbers are its own)
        toks = [Tok(m.group(0), m.group(0).lower().replace("’", "'"), m.start(), m.end()) for m in _TOKEN.finditer(body)]
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
units, team_marks, crit_marks = _units, _team_marks, _crit_marks
source_span, quote, where = _span, _quote, _where
