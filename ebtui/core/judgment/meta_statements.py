"""What a judge says about its own scores: a statement that may change, remove or rescale a value flags it.

After the reading and the late-revision net, each sentence is read, by structure, for the judge speaking of its
own scoring: an instruction to the reader with the scores as object, the judge acting now on a score it gave,
an admitted error in its scoring, a mark on a value whose note may change it, a declared scale other than 1-10.
The cells it covers are missing and flagged. See docs/JUDGMENT.md, "What a judge says about its own scores"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from ebtui.core.judgment.accounting import numbers_in
from ebtui.core.judgment.change_phrases import lemmas, verb_form, verb_lemma
from ebtui.core.judgment.revisions import (
    Unit,
    crit_marks,
    quote,
    source_span,
    team_marks,
    units,
    where,
)
from ebtui.core.judgment.vocabulary import CRIT_RE, WORD_VALUES
from ebtui.core.records import CRITERIA, Judgment, ReviewReason, Scores

Cell = tuple[str, str]

# closed classes the net reads structure by (open-class words are told by lemminflect's lexicon)
_FIRST_PERSON = frozenset("i i'm i've i'd i'll we we've we're we'd we'll me my our us let's myself".split())
_SCORE_NOUNS = frozenset("score scores mark marks rating ratings grade grades cell cells scoring".split())
#: words that may open an imperative's clause before its verb ("Please treat …", "so swap them")
_OPENERS = frozenset("please kindly just simply so then and now also instead therefore thus hence".split())
_CLAUSE_PUNCT = frozenset(":;—–(,.!?")
_SUBJECTS = frozenset("i i'm i've i'd i'll we we've we're we'd they they're they've he she it you".split())
_FINITE = frozenset("is are was were will would may might can could should must do does did has have had remain "
                    "remains stand stands".split())
_UNCHANGED = re.compile(r"(?i)\b(?:unchanged|intact|as[ \t]+(?:is|given|they[ \t]+(?:are|stand)|it[ \t]+(?:is|stands)))\b")
_CONDITIONS = frozenset("if unless whether whenever".split())
_PREPOSITIONS = frozenset("for in on at of to with from by".split())
_SUBORDINATORS = frozenset("where when if because since which who whom whose while although though whether unless".split())
_CLOSED = _SUBORDINATORS | _OPENERS | _PREPOSITIONS | frozenset("team teams overall score scores".split())
#: pronouns that stand for scores named before ("Swap them", "treat it as unscored")
_PRONOUNS = frozenset("it them those these".split())
#: verbs of attending to, explaining, keeping or giving the scores: with the scores as object they change nothing
#: ("see the scores above", "I'll explain my scores", "I'll rate Team A's consistency first"); every other may
_KEEPING = frozenset(
    "see note find compare consider explain justify clarify summarize summarise describe discuss list present show "
    "provide offer share outline detail set lay walk break stand keep maintain confirm stick base reflect check "
    "review read look refer remember bear recall notice observe view give assign award record report follow use "
    "apply weigh hold mind reproduce copy restate repeat begin start put let score rate grade mark evaluate assess "
    "judge".split())
#: an error in the judge's own scoring ("the wrong way round", "by mistake", "a typo"), a misdeed verb by its
#: prefix ("misread", "mistyped"), an excess ("too generous", "too high")
_ERROR_WORDS = frozenset(
    "wrong wrongly mistake mistakes mistaken mistakenly error errors erroneous erroneously incorrect incorrectly "
    "typo typos slip oversight backwards inverted reversed transposed swapped switched flipped erratum errata "
    "corrigendum".split())
_NOT_MINE = frozenset("their its team's his her".split())
#: words that set cells apart from a change to many ("… except framework awareness")
_EXCEPT = re.compile(r"(?i)\b(?:except(?:[ \t]+for)?|excepting|excluding|other[ \t]+than|apart[ \t]+from"
                     r"|aside[ \t]+from|save[ \t]+for|but[ \t]+not|bar)\b")
_TEAMS_SCORES = re.compile(r"(?i)\b(?:team[ \t]+[ab12]|[ab]|teams)['’]s?[ \t]+(?:\w+[ \t]+)?(?:scores|marks|ratings|grades)\b")
_CUE = re.compile(r"(?i)\b(?:i|i'[a-z]+|we|my|our|me|us|let's|please|it|them|those|these|scores?|marks?|ratings?"
                  r"|grades?|cells?|scale|point|rubric|out[ \t]+of)\b")
_REFERENCE = re.compile(r"(?i)\b(?:with|to|as|than|like)[ \t]+(?:its|their|the|team[ \t]+[ab]['’]s)[ \t]+$")
_BOTH = re.compile(r"(?i)\b(?:both|two|each|all)[ \t]+(?:of[ \t]+)?(?:the[ \t]+)?(?:teams|sides)\b")
_NW = "one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|hundred|zero"
#: a declared scale: a range from 0 or 1 named as a scale ("a 1–5 scale", "on a scale of one to five"), an
#: "N-point scale", "out of N" not after a number ("all scores are out of 5")
_SCALE = re.compile(
    rf"(?i)(?:\b(?:scales?|ranges?|rubric)[ \t]+(?:of|from|running[ \t]+from)[ \t]+(?:0|1|zero|one)[ \t]*(?:-|–|—|to)"
    rf"[ \t]*(?P<hi1>\d{{1,3}}|{_NW})\b"
    rf"|(?<![\d.])\b(?:0|1|zero|one)[ \t]*(?:-|–|—|to)[ \t]*(?P<hi2>\d{{1,3}}|{_NW})\b(?=[ \t]*(?:-?[ \t]*point[ \t]+)?"
    rf"(?:scale|range|rubric|system)s?\b)"
    rf"|\b(?P<hi3>\d{{1,3}}|{_NW})[ \t]*-?[ \t]*point[ \t]+(?:scale|range|rubric|system)s?\b"
    rf"|(?<![\d \t])[ \t]*\bout[ \t]+of[ \t]+(?P<hi4>\d{{1,3}}|{_NW})\b(?![ \t]*[a-z]))")
_CONDITION = re.compile(r"(?i)\b(?:if|unless|were[ \t]+i|had[ \t]+i|suppose|imagine|hypothetically)\b")
_WOULD = re.compile(r"(?i)\b(?:would|could|might)\b|\b[a-z]+'d\b")
_SCALE_AFTER_NUMBER = re.compile(r"(?i)(?:\d|\b(?:" + _NW + r"))[ \t]*$")
_REJECTED = re.compile(r"(?i)\b(?:rather[ \t]+than|instead[ \t]+of|not|never|no|nor|n't|than)[ \t]+(?:an?[ \t]+|the[ \t]+)?$")
_OWNED = re.compile(r"(?i)\b(?:their|its|team[ \t]+[ab12]['’]s|[ab]['’]s|the[ \t]+team['’]s)[ \t]+(?:own[ \t]+)?$")
#: a mark on a value: `8*` (not an emphasis's closer), `8†`, `8‡`, `8§`, `8¹`, `8 (a)`
_MARK = re.compile(r"\\?(?P<m>\*{1,3}|[†‡§¶]{1,2}|[¹²³⁴⁵⁶⁷⁸⁹⁰]{1,2}|[ \t]?\([a-z]\)(?![ \t]*[A-Za-z]))")


_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+(?:\.\d+)?|[^\sA-Za-z\d]")
_DETERMINERS = frozenset("a an the this that these those each every all both some any my your his her its our their"
                         .split())


class _Tok(NamedTuple):
    text: str
    low: str
    start: int
    end: int


@dataclass
class _Statement:
    cells: set[Cell]
    why: str
    body: str


def _toks(body: str) -> list[_Tok]:
    return [_Tok(m.group(0), m.group(0).lower().replace("’", "'"), m.start(), m.end()) for m in _TOKEN.finditer(body)]


def _clause_start(toks: list[_Tok], k: int) -> bool:
    """Whether toks[k] opens its clause: the sentence's first word, after a clause's punctuation or an opener
    ("please", "so", "then"), or after a preposition and a value ("for 8 read 5")."""
    j = k - 1
    while j >= 0 and toks[j].low in _OPENERS:
        j -= 1
    if j < 0 or toks[j].text in _CLAUSE_PUNCT:
        if j < 0 or toks[j].text in ".!?:;—–" or any(t.low in ("please", "kindly") for t in toks[j + 1:k]):
            return True
        # after a comma or "and": not a verb coordinated with a subject's ("they map …, and refine …")
        back = toks[max(0, j - 40):j]
        cut = max((i for i, t in enumerate(back) if t.text in ".!?:;—–" and not (  # (not "e.g.", "i.e.")
            t.text == "." and i > 0 and len(back[i - 1].text) == 1)), default=-1)
        return not any(t.low in _SUBJECTS or t.low == "team" for t in back[cut + 1:])
    return j == k - 1 and k >= 2 and toks[k - 2].low in _PREPOSITIONS and _is_value(toks[k - 1]) and (
        k == 2 or toks[k - 3].text in _CLAUSE_PUNCT)


def _is_value(t: _Tok) -> bool:
    return (t.text.isdigit() and 1 <= int(t.text) <= 10) or t.low in WORD_VALUES


def _imperative(toks: list[_Tok], v: int, rx: re.Pattern[str]) -> bool:
    """A verb's base form opening its clause with an object right after it ("Swap them", "treat it as …",
    "take one point off", "read 5"): not a team's or a criterion's name ("Team A …", "Consistency: 7")."""
    t = toks[v]
    if t.low not in lemmas(t.low).get("VERB", ()) or not _clause_start(toks, v) or v + 1 >= len(toks):
        return False
    if rx.match(t.text) or CRIT_RE.match(t.text) or t.low in _CLOSED:
        return False
    nxt = toks[v + 1]
    if "ADJ" in lemmas(t.low) and not (nxt.low in _PRONOUNS or _is_value(nxt)):
        return False  # an adjective before its noun: "clear principle", "open questions"
    return nxt.low in _PRONOUNS or nxt.low in _DETERMINERS or _is_value(nxt) or bool(CRIT_RE.match(nxt.text)) or (
        nxt.low == "team" and v + 2 < len(toks) and toks[v + 2].text[:1] in ("A", "B", "1", "2"))


def _score_object(body: str, toks: list[_Tok], v: int) -> tuple[bool, frozenset[float]]:
    """What the verb at v takes for object, up to its clause's end: (scores, values). Scores: a score noun,
    a criterion's name heading its phrase, or a pronoun ("swap them"); values: numbers nothing explains."""
    span: list[_Tok] = []
    for t in toks[v + 1:v + 12]:
        if t.text in ".;!?—–,:" or t.low in _SUBORDINATORS or t.low == "that" and not span:
            break
        span.append(t)
    if not span or span[0].low == "to":
        return False, frozenset()  # (an infinitive's object is its own verb's: "I've tried to keep my scores …")
    # a score noun followed by a verb is a clause's subject, not the object: "I hope my scores are useful"
    scores = span[0].low in _PRONOUNS or any(t.low in _SCORE_NOUNS and not (
        k + 1 < len(span) and (span[k + 1].low in _FINITE or verb_form(span[k + 1].low) == "s")) for k, t in enumerate(span))
    words = " ".join(t.text for t in span)
    for c in CRIT_RE.finditer(words):
        nxt = words[c.end():c.end() + 20].lstrip()
        if not nxt or not nxt[0].isalpha() or nxt.split()[0].lower() in _SCORE_NOUNS | {"for", "to", "of", "as", "off"}:
            scores = True  # "lower Team A's consistency" (not "take the consistency case")
    a = span[0].start
    values = frozenset(n.value for n in numbers_in(body[a:span[-1].end]) if n.value is not None and (
        n.reason is None or n.reason.startswith("a number word") or (n.start == 0 and not n.reason.startswith("a count"))))
    return scores, values


def _changes_now(toks: list[_Tok], v: int, rx: re.Pattern[str]) -> bool:
    """Whether the verb at v is the judge acting now, or the reader told to: an imperative, or a first person's
    present, progressive, future, perfect or wish ("I'm withdrawing", "I'll lower", "I've dropped", "let me")."""
    if _imperative(toks, v, rx):
        return True
    back = [t.low for t in toks[max(0, v - 4):v]]
    if not back or not any(w in _FIRST_PERSON for w in back):
        return False
    form = verb_form(toks[v].low)
    prev = back[-1]
    if form == "ing":
        return prev in ("i'm", "am", "we're", "are") or (prev in ("now", "hereby") and len(back) > 1)
    if form == "base" and prev == "to":  # "I want to …", "I've decided to …" (not "I'm happy to …": an offer)
        return len(back) > 1 and verb_form(back[-2]) is not None and "ADJ" not in lemmas(back[-2])
    if form == "base" and prev in ("i'd", "we'd", "would", "could", "might"):  # a wish, unless a hedge ("I'd update
        # Team A's consistency if shown …") or of a pronoun ("I would call it a draw": the round)
        return not any(t.low in _CONDITIONS for t in toks[v:]) and not (v + 1 < len(toks) and toks[v + 1].low in _PRONOUNS)
    if form == "base":
        return prev in ("i'll", "will", "shall", "must", "let's", "me", "i", "we", "hereby", "now", "we'll")
    if form == "ed" and prev == "have":  # a perfect, not a counterfactual ("I would have lowered …")
        return len(back) > 1 and back[-2] in ("i", "we")
    return form == "ed" and prev in ("i've", "we've", "hereby", "now")




def _clauses(toks: list[_Tok]) -> list[list[_Tok]]:
    """A sentence's clauses: split at . ; : — ( ) and a subordinator ("… a case where their rule is wrong")."""
    out: list[list[_Tok]] = [[]]
    for t in toks:
        if t.text in ".;:—–()!?" or t.low in _SUBORDINATORS:
            out.append([])
        else:
            out[-1].append(t)
    return [c for c in out if c]


def _error_marker(toks: list[_Tok]) -> str | None:
    """An admitted error in the judge's own scoring: an error word not owned by a team ("their error", "errors
    in Team B's case"), a verb of misdoing ("misread"), an excess ("too generous"), a counterfactual ("I
    should have scored")."""
    for k, t in enumerate(toks):
        prev = toks[k - 1].low if k else ""
        nxt = toks[k + 1].low if k + 1 < len(toks) else ""
        if t.low in _ERROR_WORDS:
            if prev in _NOT_MINE or prev.endswith("'s") or (nxt in ("in", "of", "from") and k + 2 < len(toks)
                                                              and toks[k + 2].low not in ("my", "our")):
                continue
            return t.text
        if t.low.startswith("mis") and len(t.low) > 5 and "VERB" in lemmas(t.low) and "VERB" in lemmas(t.low[3:]):
            return t.text
        if t.low == "too" and nxt and any(c in lemmas(nxt) for c in ("ADJ", "ADV")) and nxt not in ("many", "much"):
            return f"too {nxt}"
        if t.low in ("should", "shouldn't", "ought", "must") and prev in _FIRST_PERSON | _SCORE_NOUNS and \
                any(x.low == "have" for x in toks[k + 1:k + 4]):
            return f"{prev} {t.text} have"
    return None


#: a modal "be" right after the range: the range is the subject of a judgment about values, not the scale used
_JUDGED_BAND = re.compile(r"(?i)(?:[ \t]*(?:-?[ \t]*point[ \t]+)?(?:scale|range|rubric|system)s?)?"
                          r"[ \t]*(?:would|could|might|should|may)[ \t]+(?:not[ \t]+)?be\b")


def _scale(body: str, toks: list[_Tok]) -> str | None:
    """A scale other than 1-10 declared for the judge's scores ("I've used a 1–5 scale", "all scores are out of
    5"): not one the judge rejects ("rather than 1–5"), not a team's ("their 1-5 triage scale")."""
    clauses: list[list[_Tok]] = []
    for m in _SCALE.finditer(body):
        hi = next(g for g in (m.group("hi1"), m.group("hi2"), m.group("hi3"), m.group("hi4")) if g)
        top = WORD_VALUES.get(hi.lower()) or {"twelve": 12, "twenty": 20, "hundred": 100, "zero": 0}.get(hi.lower())
        top = top if top is not None else int(hi)
        lead = body[max(0, m.start() - 40):m.start()]
        if top == 10 or top < 2 or _REJECTED.search(lead) or _OWNED.search(re.sub(r"(?i)\b(?:an?|the)[ \t]+$", "", lead)):
            continue
        if m.group("hi4") and _SCALE_AFTER_NUMBER.search(body[:m.start()]):
            continue  # "4 out of 5": a value (the reader's), or a ratio
        if _CONDITION.search(body[:m.start()]) and _WOULD.search(body):
            continue  # a hypothetical: "if I had to rank them on a 5-point scale I would give them 4/5"
        if _JUDGED_BAND.match(body, m.end()):
            continue  # a band of values judged, no scale used: "a 1-2 range would be too generous"
        clauses = clauses or _clauses(toks)
        clause = next((c for c in clauses if c[0].start <= m.start() <= c[-1].end), toks)
        mine = any(t.low in _FIRST_PERSON | _SCORE_NOUNS for t in clause) or any(
            verb_lemma(t.low) in ("score", "rate", "grade", "mark") and verb_form(t.low) for t in clause)
        if mine or len(body) <= 60:  # (in the clause that holds it: not "Team B's plan used a 1-5 scale, which I …")
            return m.group(0).strip()
    return None


def _statement(body: str, toks: list[_Tok], rx: re.Pattern[str]) -> tuple[str | None, bool, frozenset[float] | None]:
    """Whether a sentence is the judge changing its scores: (why, about scores at all, the values it gives a
    cell where it only gives values: "for 8 read 5")."""
    about = any(t.low in _SCORE_NOUNS for t in toks) or bool(CRIT_RE.search(body))
    scale = _scale(body, toks)
    if scale is not None:
        return f"a scale other than 1-10 ({scale})", True, None
    asked = body.rstrip().endswith("?")  # (a question changes nothing: "Would you like me to adjust any scores?")
    cond = -1  # where a clause opened by "if", "unless", "whether" began ("… if you'd like me to revise the scores")
    for v in range(len(toks)):
        if toks[v].low in _CONDITIONS:
            cond = v
        elif toks[v].text in ".;:—–()!?":
            cond = -1
        if asked or cond >= 0 or not toks[v].text.isalpha() or not (
                verb_form(toks[v].low) or "VERB" in lemmas(toks[v].low)) or not _changes_now(toks, v, rx):
            continue
        scores, values = _score_object(body, toks, v)
        lemma = verb_lemma(toks[v].low)
        if values and _imperative(toks, v, rx) and not scores:
            return f"“{toks[v].text}” with a value", True, values
        if not scores:
            continue
        rest = set()
        for t in toks[v + 1:v + 16]:
            if t.text in ".;:—–()!?" or t.low in _SUBORDINATORS:
                break
            rest.add(t.low)
        if _UNCHANGED.search(body[toks[v].end:]):
            continue  # "I'm leaving all scores as they are", "… unchanged"
        if lemma not in _KEEPING or rest & {"off", "up", "down", "back", "lower", "higher", "unscored", "blank"}:
            return f"“{toks[v].text}” with the scores as object", True, None
    for clause in _clauses(toks):
        if any(t.low in _FIRST_PERSON for t in clause) and (any(t.low in _SCORE_NOUNS | _PRONOUNS for t in clause)
                                                              or CRIT_RE.search(" ".join(t.text for t in clause))):
            err = _error_marker(clause)
            if err is not None:
                return f"an error in the scoring (“{err}”)", True, None
    if about:  # a score withdrawn in the passive: "Team B's consistency score is withdrawn"
        for k in range(1, len(toks) - 1):
            if toks[k].low in ("is", "are", "was", "were", "be", "been") and toks[k - 1].low in _SCORE_NOUNS and \
                    verb_form(toks[k + 1].low) == "ed" and verb_lemma(toks[k + 1].low) not in _KEEPING and \
                    toks[k + 1].low not in ("given", "out", "based"):
                return f"a score “{toks[k + 1].text}”", True, None
    return None, about, None


def _scope(body: str, unit: Unit, rx: re.Pattern[str], prior: tuple[set[str], set[str]] | None,
           read: dict[Cell, int], whole: bool = False) -> set[Cell]:
    """The cells a statement covers: its named criteria (less those it excepts) of its named teams; a team's
    cells where it names no criterion; what the statement before it named where it names nothing ("Swap them")."""
    cmarks = crit_marks(body)
    ex = _EXCEPT.search(body)
    excepted = {c for at, c in cmarks if ex is not None and at >= ex.end() and not re.search(
        r"\d|\b(?:" + _NW + r")\b", body[at:])}
    crits = {c for _, c in cmarks} - excepted
    named = {c for at, c in cmarks if not _REFERENCE.search(body, max(0, at - 30), at)} - excepted
    crits = named or crits  # (not the criterion a value is matched to: "in line with its consistency score")
    teams = {t for _, t in team_marks(body, rx, unit.team) if t in ("a", "b")}
    if _BOTH.search(body):
        teams = {"a", "b"}
    if not crits and not teams and not excepted and prior is not None and not whole:
        teams, crits = prior
    if not crits and not excepted and unit.crit and not whole:
        crits = {unit.crit}
    if not teams:
        teams = {unit.team} if unit.team in ("a", "b") and not whole else {"a", "b"}
    crits = (crits or set(CRITERIA) - excepted)
    return {(t, c) for t in teams for c in crits if (t, c) in read}


def _noted(text: str, read: dict[Cell, int], spans: dict[Cell, tuple[int, int]],
           rx: re.Pattern[str]) -> tuple[list[_Statement], list[tuple[int, int]]]:
    """Values carrying a mark (`8*`, `7†`) whose note may change them: a note holding another number, changing
    the scores, or no note found; and where the notes are (read with their marks, not alone)."""
    marked: dict[str, set[Cell]] = {}
    for cell, (a, b) in spans.items():
        line_start = text.rfind("\n", 0, a) + 1
        for m in re.finditer(rf"(?<![\d.]){read[cell]}(?![\d.])", text[a:b]):
            end = a + m.end()
            mk = _MARK.match(text, end)
            if mk is None:
                continue
            mark = mk.group("m").strip()
            seg = text[max(line_start, text.rfind("|", line_start, a + m.start()) + 1):a + m.start()]
            if mark.startswith("*") and re.search(rf"(?<![*\\])\*{{{len(mark)}}}(?!\*)", seg):
                continue  # an emphasis's closer: "**8**", "*Consistency: 8*"
            marked.setdefault(mark, set()).add(cell)
    out = []
    notes: list[tuple[int, int]] = []
    for mark, cells in marked.items():
        note = None
        for line in re.finditer(r"(?m)^[ \t>]*\\?(.*)$", text):
            body = line.group(0).strip().lstrip(">").strip().lstrip("\\")
            if body.startswith(mark) and len(body) > len(mark) and (not mark.startswith("*") or body[len(mark)] in " \t:)"):
                if any(spans[c][0] <= line.start() < spans[c][1] for c in cells):
                    continue
                end = text.find("\n\n", line.start())
                note = text[line.start():end if end >= 0 else len(text)]
                notes.append((line.start(), line.start() + len(note)))
                break
        for cell in cells:
            why = _note_changes(note, read[cell], rx)
            if why is not None:
                out.append(_Statement({cell}, f"its mark {mark} {why}", note or text[spans[cell][0]:spans[cell][1]]))
    return out, notes


def _note_changes(note: str | None, value: int, rx: re.Pattern[str]) -> str | None:
    if note is None:
        return "has no note"
    for n in numbers_in(note):  # another number a score could be (not "this one", "each one")
        word = not n.shown[:1].isdigit()
        if n.value is not None and n.value != value and 0 <= n.value <= 10 and not (word and (
                re.search(r"(?i)\b(?:this|that|the|each|every|any|no|which|one|another)[ \t]+$", note[:n.start])
                or (n.reason is not None and not n.reason.startswith("a number word")))):
            return f"has a note with {n.shown}"
    why, _, _ = _statement(note, _toks(note), rx)
    return None if why is None else f"has a note with {why}"


def flag_meta(j: Judgment, text: str, rx: re.Pattern[str]) -> Judgment:
    """The judgment with each cell the judge's own statement may change, remove or rescale, missing and flagged."""
    read: dict[Cell, int] = {}
    spans: dict[Cell, tuple[int, int]] = {}
    for src in j.provenance:
        if src.value is not None:
            read[(src.team, src.criterion)] = src.value
            spans[(src.team, src.criterion)] = source_span(src, text)
    if not read:
        return j
    found, notes = _noted(text, read, spans, rx)
    prior: tuple[set[str], set[str]] | None = None
    last_end = 0
    for unit in units(text, rx):
        if re.search(r"\n[ \t]*\n", text[last_end:unit.start]):
            prior = None  # (a paragraph's pronoun points inside it)
        last_end = unit.end
        body = text[unit.start:unit.end]
        if unit.team == "x" or body.lstrip().startswith("|") or any(a <= unit.start < b for a, b in notes):
            continue
        if not _CUE.search(body) and not CRIT_RE.search(body):
            continue  # (no first person, score word, pronoun, criterion or scale: nothing here speaks of the scores)
        toks = _toks(body)
        why, about, values = _statement(body, toks, rx)
        if why is not None:
            whole = why.startswith("a scale")  # (a declared scale holds for the whole reply, before or after)
            cells = _scope(body, unit, rx, prior, read, whole=whole)
            cells = {c for c in cells if values is None or read[c] not in values}  # (a value restated: none)
            own = {c for c in cells if spans[c][0] < unit.end and unit.start < spans[c][1]}
            if not whole:  # a value read after the statement settles it ("I was too generous …" then "Revised scores")
                own |= {c for c in cells if spans[c][0] >= unit.end}
            if cells - own:
                found.append(_Statement(cells - own, why, body))
        cm = {c for _, c in crit_marks(body)}
        if cm or _TEAMS_SCORES.search(body):  # what a later "them" or "it" stands for
            prior = ({t for _, t in team_marks(body, rx, unit.team) if t in ("a", "b")}, cm)
    if not found:
        return j
    return _apply(j, found, read)


def _apply(j: Judgment, found: list[_Statement], read: dict[Cell, int]) -> Judgment:
    items: list[ReviewReason] = []
    done: set[Cell] = set()
    for s in found:
        for cell in sorted(s.cells - done):
            items.append(ReviewReason(team=cell[0], criterion=cell[1], kind="meta", message=(
                f"{where(*cell)}: read as {read[cell]}, but the judge's own statement may change it "
                f"({s.why}) in {quote(s.body)}; left missing")))
            done.add(cell)
    scores = {t: j.parsed_scores(t).as_dict() for t in ("a", "b")}
    provenance = []
    for src in j.provenance:
        if (src.team, src.criterion) in done:
            scores[src.team][src.criterion] = None
            src = src.model_copy(update={"value": None, "note": "the judge's own statement may change it"})
        provenance.append(src)
    review = [*j.review_items, *items]
    return j.model_copy(update={
        "team_a_scores": Scores(**scores["a"]), "team_b_scores": Scores(**scores["b"]), "provenance": provenance,
        "review_items": review, "needs_review": True,
        "review_reasons": list(dict.fromkeys(i.message for i in review))})
