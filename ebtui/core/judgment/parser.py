"""The reading of a judge's reply (see docs/JUDGMENT.md and the package docstring)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ebtui.core.judgment.lenient_json import _json_candidates, _JsonCandidate, _Num, _Obj, _Partial
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, ReviewReason, Scores, ScoreSource

# --------------------------------------------------------------------------------------------------------
# Vocabulary: criteria and teams as judges actually name them
# --------------------------------------------------------------------------------------------------------

_S = r"[\s_-]*"  # between words of a name: "principle articulation", "principle_articulation", "PrincipleArt…"
_S1 = r"[\s_-]+"
_CRIT_ALTS = "|".join(
    [
        rf"principle{_S}articulation",
        rf"articulation{_S1}of{_S1}(?:the{_S1}|a{_S1}|its{_S1})?principles?",
        r"principles?",
        r"articulation",
        r"consistency",
        rf"stakeholders?{_S}(?:recognition|analysis|identification|awareness|consideration|mapping)",
        r"stakeholders?",
        rf"uncertainty{_S}(?:integration|handling|acknowledge?ment|management)",
        rf"(?:handling|acknowledge?ment|integration){_S1}of{_S1}uncertainty",
        r"uncertainty",
        rf"(?:(?:moral|ethical){_S1})?frameworks?{_S}(?:awareness|use|usage|selection)",
        rf"(?:moral|ethical){_S1}frameworks?",
        r"frameworks?",
        rf"intellectual{_S}(?:honesty|integrity)",
        r"honesty",
        rf"constructive{_S}engagement",
        r"constructiveness",
        r"engagement",
    ]
)
# (the lookahead on first letters is only for speed: it lets the engine skip most positions cheaply)
_CRIT_RE = re.compile(rf"(?i)(?<![a-z0-9])(?=[pacsuifmeh])(?:{_CRIT_ALTS})(?![a-z0-9])")
_CRIT_KEYWORDS = (
    ("principle", "principle_articulation"),
    ("articulation", "principle_articulation"),
    ("consisten", "consistency"),
    ("stakeholder", "stakeholder_recognition"),
    ("uncertain", "uncertainty_integration"),
    ("framework", "framework_awareness"),
    ("honest", "intellectual_honesty"),
    ("integrity", "intellectual_honesty"),
    ("engage", "constructive_engagement"),
    ("constructive", "constructive_engagement"),
)


def _crit_name(matched: str) -> str:
    low = matched.lower()
    for word, crit in _CRIT_KEYWORDS:
        if word in low:
            return crit
    raise AssertionError(matched)  # unreachable: every alternative holds a keyword


def _crit_of(text: str) -> str | None:
    """The criterion a key or cell names (the first one, if it names several)."""
    m = _CRIT_RE.search(text)
    return _crit_name(m.group(0)) if m else None


_TEAM_LABEL = {"a": "A", "b": "B"}
_ROLE_A = rf"present(?:ing|er|ers|ation){_S1}(?:team|side)|presenters?"
_ROLE_B = rf"respon(?:ding|dent|der|se){_S1}(?:team|side)|respondents?|responders?"


@lru_cache(maxsize=64)
def _team_regex(a_id: str, b_id: str) -> re.Pattern[str]:
    alts = [rf"(?P<ta>team{_S}a)", rf"(?P<tb>team{_S}b)", rf"(?P<ra>{_ROLE_A})", rf"(?P<rb>{_ROLE_B})"]
    # ids only tell the teams apart when they differ (a model debating itself has one id twice)
    if a_id and b_id and a_id.lower() != b_id.lower():
        ids = [("ia", a_id), ("ib", b_id)]
        ids.sort(key=lambda p: -len(p[1]))  # longest first, so one id containing the other matches whole
        alts = [rf"(?<![\w./-])(?P<{g}>{re.escape(i)})(?![\w-])" for g, i in ids] + alts
    first = "tpr" + "".join(i[0].lower() for i in (a_id, b_id) if i and a_id.lower() != b_id.lower())
    return re.compile(rf"(?i)(?<![a-z0-9])(?=[{re.escape(first)}])(?:{'|'.join(alts)})(?![a-z0-9])")


def _team_of_match(m: re.Match[str]) -> str:
    return "a" if (m.lastgroup or "").endswith("a") else "b"


def _teams_in(text: str, rx: re.Pattern[str]) -> set[str]:
    return {_team_of_match(m) for m in rx.finditer(text)}


def _bare_team(text: str) -> str | None:
    """"A", "**B**:", "(a)" — a team named by its bare letter (only where a whole cell/key/heading is it)."""
    core = re.sub(r"[^A-Za-z0-9]+", " ", text).strip().lower()
    return core if core in ("a", "b") else None


def _team_of(text: str, rx: re.Pattern[str]) -> str | None:
    teams = _teams_in(text, rx)
    if len(teams) == 1:
        return teams.pop()
    if not teams:
        return _bare_team(text)
    return None  # names both teams


# --------------------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Val:
    """A score as written: "8", "7.5", "11", "8/100", "7-8"."""

    num: str
    den: str | None = None
    upper: str | None = None  # "7-8": a range
    start: int = -1  # where the number starts in the text it was read from
    corrective: bool = False  # given as a correction ("actually 6")

    def shown(self) -> str:
        if self.upper is not None:
            return f"{self.num}-{self.upper}"
        return f"{self.num}/{self.den}" if self.den is not None else self.num


def _interpret(v: _Val) -> tuple[int | None, str | None]:
    """(score, None) or (None, why it is not one)."""
    if v.upper is not None:
        return None, f"{v.shown()} is a range, not one score"
    if v.den is not None and v.den not in ("10", "10.0"):
        return None, f"{v.shown()} is not on the 1-10 scale"
    if not re.fullmatch(r"\d+(?:\.\d+)?", v.num):
        return None, f"{v.num} is not a whole number from 1 to 10"
    whole, _, frac = v.num.partition(".")
    if frac.strip("0"):
        return None, f"{v.num} is not a whole number"
    n = int(whole)
    if not 1 <= n <= 10:
        return None, f"{v.num} is outside 1-10"
    return n, None


# a number that may be a score; never part of a longer number, word, fraction or id ("gpt-4", "v2", "1/2")
# (never the first digits of a longer number: "70%" is not 7, "10 examples" is not 1)
_NUM = r"(?<![\w.\-/])(?P<num>\d{1,6}(?:\.\d{1,6})?)(?!\d)(?!\.\d)(?![ \t]*%)"
_DEN = r"(?:[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>\d{1,6}(?:\.\d{1,6})?)(?!\w|\.\d|[ \t]*%))"
_RANGE = r"(?:[ \t]*(?:-|–|to)[ \t]*(?P<upper>\d{1,2})(?!\w|\.\d))"
# after a bare number, a word makes it a count ("7 criteria", "3 stakeholders"), not a score
_NOT_COUNT = (
    r"(?![ \t]*(?:%|(?!(?:points?|pts|and|but|while|whereas|for|in|on|as|at|with|because|since|given|versus"
    r"|vs|compared|than|here|overall|which|though|although|so|if|to|from|by|the|this|that|it|its|their|team)"
    r"(?![A-Za-z]))[A-Za-z]))"
)
# "7 out of 10 test cases" is a count, whatever its denominator; "1-1" is a range or nothing, never 1
_DEN = _DEN + _NOT_COUNT
_NOT_COUNT = _NOT_COUNT + r"(?![ \t]*[-–][ \t]*\d)"
_NUM_RE = re.compile(rf"{_NUM}(?:{_DEN}|{_RANGE}{_NOT_COUNT}|{_NOT_COUNT})")
_NUM_DEN_RE = re.compile(rf"{_NUM}{_DEN}")
# a number out of ten ("8/10", "8 out of 10"): preferred in a stretch of text; another denominator is not
_NUM_TEN_RE = re.compile(rf"{_NUM}(?:[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>10(?:\.0)?)(?!\w|\.\d|[ \t]*%)){_NOT_COUNT}")
# what may stand between a name and its score: "Consistency: 8", "Consistency - **8**", "scored 8",
# "Team A (gpt-4o): 8" has the id removed before this is used
_SEP = (
    r"(?:[\s:=()\[\]\-–—,.*\"'|>]|(?<![A-Za-z])(?:scored|scores?|score|gets?|got|receives?|received|earns?"
    r"|earned|is|was|rated|rating|with|of|a|an|grade|mark|points?)(?![A-Za-z])){0,12}?"
)
_AFTER_NAME_RE = re.compile(rf"{_SEP}{_NUM}(?:{_DEN}|{_RANGE}{_NOT_COUNT}|{_NOT_COUNT})", re.IGNORECASE)
_AFTER_COLON_RE = re.compile(rf"(?:[:=]|[-–—][ \t])[ \t\"'*(]*{_NUM}(?:{_DEN}|{_RANGE}{_NOT_COUNT}|{_NOT_COUNT})")
_CORRECTION_RE = re.compile(
    r"(?<![A-Za-z])(?:actually|correction|corrected|revised?|rather(?![ \t]+than)|make[ \t]+(?:it|that)"
    r"|on[ \t]+reflection|i[ \t]+mean|chang(?:e|ed|ing)[ \t]+(?:it|this|that|my[ \t]+score)?[ \t]*to)"
    r"(?![A-Za-z])[^\d\n]{0,24}?"
    rf"{_NUM}(?:{_DEN}|{_NOT_COUNT})",
    re.IGNORECASE,
)
_CORRECTION_HINT = re.compile(r"(?i)actual|correct|revis|rather|make|reflect|mean|chang")
_STRIKE_RE = re.compile(r"~~[^~\n]{0,200}~~")


def _val(m: re.Match[str], corrective: bool = False) -> _Val:
    d = m.groupdict()
    return _Val(d["num"], d.get("den"), d.get("upper"), m.start("num"), corrective)


# a candidate that is not the judge's score: negated ("not 9", "rather than 8"), asked ("a 9?"), a rubric
# anchor ("1 = no principle stated"), or a comparison ("higher than 6")
_NEGATED_BEFORE = re.compile(
    r"(?i)(?:\bnot|n't|\bnever|\bnor|rather[ \t]+than|instead[ \t]+of|\bthan|\bno|\bwithout|\bfrom)"
    r"[ \t]*(?:(?:a|an|even|quite|really)[ \t]+)?[*_\"'(]*$"
)
_AFTER_SKIP = re.compile(r"[ \t]*[*_\"')]*[ \t]*(?:/[ \t]*10)?[ \t]*[*_\"')]*[ \t]*(?:\?|=(?!=)|(?:or|to)[ \t]+\d)")


def _skipped(line: str, start: int, end: int) -> bool:
    return bool(_NEGATED_BEFORE.search(line[max(0, start - 24):start]) or _AFTER_SKIP.match(line, end))


def _score_in(line: str, start: int, end: int) -> _Val | None:
    """The score that line[start:end] (the stretch after a criterion's name) gives, by preference: a
    self-correction ("actually 6"), a number out of ten ("8/10"), a number right after the name, a number
    after a colon or dash. A number must start inside the stretch; what follows it is judged on the whole
    line ("3 stakeholders" stays a count even when the next criterion's name comes right after)."""
    stop = min(len(line), end + 40)  # enough to see "out of 10" or "stakeholders" after a number
    if _CORRECTION_HINT.search(line, start, stop):
        corrections = [m for m in _CORRECTION_RE.finditer(line, start, stop)
                       if m.start("num") < end and not _skipped(line, m.start("num"), m.end())]
        if corrections:
            return _val(corrections[-1], corrective=True)
    for rx, anchored in ((_NUM_TEN_RE, False), (_AFTER_NAME_RE, True), (_AFTER_COLON_RE, False)):
        pos = start
        while pos < stop:
            m = rx.match(line, pos, stop) if anchored else rx.search(line, pos, stop)
            if not m or m.start("num") >= end:
                break
            if not _skipped(line, m.start("num"), m.end()):
                return _val(m)
            if anchored:
                break
            pos = m.end("num")
    return None


def _score_in_cell(cell: str) -> _Val | None:
    """A table cell's or JSON string's score: "8", "**8**", "8/10", "8 (strong)", "Score: 8" — a number that
    opens the cell, or one out of ten. Anything else ("between 3 and 1", "not a 9", "7 out of 10 test cases")
    is not a score."""
    cell = cell.strip()
    if not cell:
        return None
    m = _NUM_TEN_RE.search(cell)
    if m and not _skipped(cell, m.start("num"), m.end()):
        return _val(m)
    lead = re.match(r"[\s*_~`>\"'(\[]*(?:(?:score|rating|grade|mark)[ \t]*[:=\-–—]?[ \t]*)?", cell, re.IGNORECASE)
    m = _NUM_RE.match(cell, lead.end() if lead else 0)
    if m and not _skipped(cell, m.start("num"), m.end()):
        return _val(m)
    return None


# --------------------------------------------------------------------------------------------------------
# What was found, and what it adds up to
# --------------------------------------------------------------------------------------------------------


@dataclass
class _Found:
    shown: str
    value: int | None
    problem: str | None
    kind: str = "line"  # json, json_repaired, table, line, prose, correction
    source: str = ""  # the exact text it was read from
    pos: int = 0  # offset of that text in the reply
    corrective: bool = False  # given as a correction of an earlier value
    via: str = "label"  # how its team was named: label (Team A / team_a), id (model id), role
    seq: int = 0  # reading order within the reply


_TEXT_KINDS = ("line", "prose", "correction")


@dataclass
class _Ctx:
    """Where the reader is: set before each line, table row or JSON object is read."""

    pos: int = 0
    source: str = ""
    clean: str = ""  # the line as read (markup removed): positions of numbers refer to it
    kind: str = "line"
    corrective: bool = False
    via: str = "label"


_FILLER = {
    "score", "scores", "scored", "rating", "ratings", "rated", "grade", "mark", "points", "pts", "for", "team",
    "teams", "criterion", "criteria", "and", "vs", "out", "of", "the", "a", "b", "s", "presenting", "responding",
    "presenter", "respondent", "responder", "side", "is", "total", "final", "revised", "corrected", "updated",
}


def _line_kind(clean: str, v: _Val) -> str:
    """"line" where the number stands as a label's value ("3. Stakeholder recognition - 8", "Team A: 8/10",
    "**Consistency** (Team B): 7"), else "prose" (a sentence the number was read out of)."""
    if v.start < 0:
        return "prose"
    prefix = clean[: v.start]
    names = list(_CRIT_RE.finditer(prefix))
    if names:  # from the (last) criterion's name on: "Consistency: 7 … actually, Consistency: 6"
        prefix = prefix[names[-1].start():]
    prefix = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", prefix)
    prefix = _CRIT_RE.sub(" ", prefix)
    prefix = re.sub(r"(?i)\bteam[\s_-]*[ab]\b", " ", prefix)
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’]*", re.sub(r"\S*[\d.][\S]*", " ", prefix))
             if w.lower().replace("’", "'").removesuffix("'s") not in _FILLER]
    return "line" if not words else "prose"


@dataclass
class _Collector:
    scores: dict[str, dict[str, list[_Found]]] = field(default_factory=lambda: {"a": {}, "b": {}})
    justification: dict[str, list[str]] = field(default_factory=lambda: {"a": [], "b": []})
    overall: list[str] = field(default_factory=list)
    unattributed: int = 0
    sources: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # review reasons found while reading
    ctx: _Ctx = field(default_factory=_Ctx)
    seq: int = 0

    def add(self, team: str | None, crit: str, found: _Found, source: str, via: str | None = None) -> None:
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

    def add_val(self, team: str | None, crit: str, v: _Val, source: str, *, via: str | None = None,
                kind: str | None = None) -> None:
        value, problem = _interpret(v)
        if kind is None:
            kind = _line_kind(self.ctx.clean, v) if source == "lines" else self.ctx.kind
        self.add(team, crit, _Found(v.shown(), value, problem, kind=kind, corrective=v.corrective), source, via)

    def count(self) -> int:
        return sum(len(d) for d in self.scores.values())




def _norm_key(key: str) -> str:
    key = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)
    return re.sub(r"[\s_\-.]+", " ", key).strip().lower()


_SCORE_KEYS = {"score", "value", "rating", "points", "grade", "mark", "result"}
_NAME_KEYS = {"team", "name", "model", "id", "label", "role", "side", "team name", "team id"}
_CRIT_NAME_KEYS = {"criterion", "criteria", "name", "category", "metric", "dimension", "aspect"}
_JUST_WORDS = re.compile(
    r"justif|rational|reason|comment|explan|feedback|assessment|evaluation|notes?\b|analysis|summary|strength|weakness",
)
_OVERALL_WORDS = re.compile(r"overall|summary|verdict|comparison|comparative|conclusion|^analysis$|^general")


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list):
        return "\n".join(t for t in (_text_of(v) for v in value) if t)
    if isinstance(value, _Obj):
        return "\n".join(f"{k}: {t}" for k, v in value if (t := _text_of(v)))
    return ""


class _JsonWalker:
    def __init__(self, col: _Collector, rx: re.Pattern[str], text: str = "") -> None:
        self.col = col
        self.rx = rx
        self.text = text
        self.cursor = 0
        self.end = len(text)
        self.via: dict[str | None, str] = {}

    def start(self, span: tuple[int, int]) -> None:
        self.cursor, self.end = span

    def team_of_key(self, key: str) -> str | None:
        return _team_of(key, self.rx)

    def _locate(self, key: str, value: Any) -> None:
        """Point the context at the member "key": value as written in the reply."""
        shown = str(value) if not isinstance(value, bool) and value is not None else json.dumps(value)
        rx = re.compile(rf"[\"'“]?{re.escape(key)}[\"'”]?\s*[:=]\s*[\"'“]?{re.escape(shown)}[\"'”]?")
        m = rx.search(self.text, self.cursor, min(self.end, self.cursor + 4000))
        if m:
            self.col.ctx.pos, self.col.ctx.source = m.start(), m.group(0)
            self.cursor = m.end()
        else:
            self.col.ctx.source = f'"{key}": {json.dumps(value) if isinstance(value, str) else shown}'

    def score(self, team: str | None, crit: str, value: Any, key: str = "") -> None:
        if isinstance(value, _Partial):
            return  # cut off: "1" may have been "10"
        self._locate(key or crit, value)
        via = self.via.get(team, "label")
        if isinstance(value, _Num):
            self.col.add_val(team, crit, _Val(str(value), value.den), "json", via=via)
        elif isinstance(value, bool) or value is None:
            shown = json.dumps(value)
            self.col.add(team, crit, _Found(shown, None, f"given as {shown}", kind=self.col.ctx.kind), "json", via)
        elif isinstance(value, str):
            v = _score_in_cell(value)
            if v is not None:  # "8", "8/10", "8 out of 10"; words with no number are not a score
                self.col.add_val(team, crit, v, "json", via=via)

    def walk(self, node: Any, team: str | None, crit: str | None, depth: int = 0) -> None:
        if depth > 64:
            return
        if isinstance(node, list) and not isinstance(node, _Obj):
            for item in node:
                self.walk(item, team, crit, depth + 1)
            return
        if not isinstance(node, _Obj):
            return
        # an object that names its own team or criterion: {"team": "A", "scores": {...}}
        for k, v in node:
            nk = _norm_key(str(k))
            if isinstance(v, str) and nk in _NAME_KEYS and (t := self.team_of_key(v)):
                team = t
                self.via.setdefault(t, _via_of(list(self.rx.finditer(v))))
            if isinstance(v, str) and nk in _CRIT_NAME_KEYS and (c := _crit_of(v)):
                crit = c
        for k, v in node:
            key = str(k)
            nk = _norm_key(key)
            kt = self.team_of_key(key)
            if kt is not None:
                self.via.setdefault(kt, _via_of(list(self.rx.finditer(key))))
            kc = _crit_of(key)
            scalar = not isinstance(v, (list, _Obj))
            if kc is not None:
                t = kt or team
                if scalar and not isinstance(v, _Partial) and isinstance(v, str) and _JUST_WORDS.search(nk):
                    if t:
                        self.col.justification[t].append(f"{CRITERION_LABELS[kc]}: {v}")
                elif scalar:
                    self.score(t, kc, v, key)
                else:
                    self.walk(v, t, kc, depth + 1)
            elif kt is not None:
                rest = _norm_key(self.rx.sub(" ", key))
                if isinstance(v, str) and (crit is None or _JUST_WORDS.search(rest)):
                    self.col.justification[kt].append(str(v))
                elif scalar and crit is not None:
                    self.score(kt, crit, v, key)
                else:
                    self.walk(v, kt, crit, depth + 1)
            elif nk in _SCORE_KEYS and scalar and crit is not None:
                self.score(team, crit, v, key)
            elif isinstance(v, str) and team is None and _OVERALL_WORDS.search(nk):
                self.col.overall.append(str(v))
            elif isinstance(v, str) and _JUST_WORDS.search(nk):
                if team is not None:
                    label = f"{CRITERION_LABELS[crit]}: " if crit else ""
                    self.col.justification[team].append(label + str(v))
                else:
                    self.col.overall.append(str(v))
            elif not scalar:
                self.walk(v, team, crit, depth + 1)


def _is_schema_shape(value: Any) -> bool:
    """Exactly what JUDGMENT_SCHEMA asks for, every score a bare whole number."""
    # key order is free (Gemini, for one, may answer in alphabetical order); duplicates are not
    if not isinstance(value, _Obj) or sorted(k for k, _ in value) != ["overall_analysis", "team_a", "team_b"]:
        return False
    d = dict(value)
    if not isinstance(d["overall_analysis"], str):
        return False
    for t in ("team_a", "team_b"):
        team = d[t]
        if not isinstance(team, _Obj) or sorted(k for k, _ in team) != ["justification", "scores"]:
            return False
        td = dict(team)
        if not isinstance(td["justification"], str) or not isinstance(td["scores"], _Obj):
            return False
        keys = [k for k, _ in td["scores"]]
        if sorted(keys) != sorted(CRITERIA) or len(keys) != len(CRITERIA):
            return False
        if not all(isinstance(v, _Num) and re.fullmatch(r"\d+", v) for _, v in td["scores"]):
            return False
    return True


# --------------------------------------------------------------------------------------------------------
# Text: markdown tables and "Criterion: 8/10" lines under team headings
# --------------------------------------------------------------------------------------------------------

_HEADING_RE = re.compile(r"\s{0,3}#{1,6}\s")
_BOLD_LINE_RE = re.compile(r"\s*(?:\*\*|__)[^*_\n]{1,100}(?:\*\*|__)\s*:?\s*")
_MARKUP_RE = re.compile(r"[*`]+")
_TABLE_SEP_CELL = re.compile(r"\s*:?-{2,}:?\s*")
_OVERALL_LABEL_RE = re.compile(
    r"[\W_]*(?:overall(?:[ \t]+(?:analysis|assessment|evaluation|comments?|verdict|summary|thoughts|judg[e]?ment))?"
    r"|summary|final[ \t]+(?:verdict|assessment|thoughts|analysis)|verdict|comparative[ \t]+(?:analysis|assessment)"
    r"|analysis[ \t]+of[ \t]+the[ \t]+exchange)(?![A-Za-z])[ \t]*(?P<colon>[:—–-])?[ \t]*(?P<rest>.*)",
    re.IGNORECASE,
)
_JUST_LABEL_RE = re.compile(
    r"[\W_]*(?:justification|rationale|reasoning|comments?|explanation|assessment|notes?)(?![A-Za-z])"
    r"[ \t]*[:—–-][ \t]*(?P<rest>.*)",
    re.IGNORECASE,
)
# what may follow a team's name for the line to be a label: "Team A:", "Team A (gpt-4o) -",
# "Team A's justification:", "Team A" alone — but not "Team B's response was good: ..."
_LABEL_REST_RE = re.compile(
    r"(?:[ \t]*\([^()\n]{0,80}\))?(?:[ \t]*[-—–,][ \t]*[\w./ ]{0,40}?(?:\([^()\n]{0,80}\))?)?"
    r"(?:[ \t]*(?:'s[ \t]+)?(?:justification|rationale|reasoning|scores?|evaluation|assessment|comments?"
    r"|feedback)(?![A-Za-z]))?[ \t]*(?:[:—–-]|$)",
    re.IGNORECASE,
)
_SCORE_HEADER_RE = re.compile(r"score|rating|points|grade|mark|/ ?10", re.IGNORECASE)
_JUST_HEADER_RE = re.compile(r"justif|rationale|reason|comment|explan|notes?|why", re.IGNORECASE)
_NOT_SCORE_HEADER = re.compile(
    r"(?i)\b(?:max(?:imum)?|out[ \t]+of|possible|weight(?:ing)?|weighted|rank(?:ing)?|total|sum|avg|average|mean"
    r"|scale|range|target|threshold|benchmark|previous|prior|old|original|initial)\b"
)
# a team the round does not have: "Team C", "Team 3", "the previous team", "another team"
_THIRD_RE = re.compile(
    r"(?i)(?<![a-z0-9])team[ \t_-]*(?![ab](?![a-z0-9]))(?:[c-z]|\d{1,2}|one|two|three|three)(?![a-z0-9])"
    r"|(?<![a-z])(?:previous|other|another|third|earlier|prior|opposing|hypothetical|rival|last|former|different)"
    r"[ \t]+(?:team|side|group|debater|presenter|respondent)s?(?![a-z])"
)
# language that makes a later value a correction of an earlier one
_CORR_LANG = re.compile(
    r"(?i)(?<![a-z])(?:should(?:[ \t]+(?:have|instead|really))?[ \t]+(?:be(?:en)?|read)|correct(?:ion|ed|ing)?"
    r"|revis(?:e|ed|ing|ion)|amend(?:ed|ing|ment)?|adjust(?:ed|ing)?|lower(?:ed|ing)?|rais(?:e|ed|ing)"
    r"|bump(?:ed|ing)?|chang(?:e|ed|ing)|updat(?:e|ed|ing)|on[ \t]+reflection|on[ \t]+second[ \t]+thought"
    r"|actually|i[ \t]+meant|typo|mistake|erratum)(?![a-z])"
)
_CORR_HEADING = re.compile(
    r"(?i)(?<![a-z])(?:revised|corrected|correction|corrections|updated|amended|erratum|on[ \t]+reflection"
    r"|on[ \t]+second[ \t]+thought|adjusted)(?![a-z])"
)
# a sentence's correction is about a score: it says so, or speaks as the judge, or is "should be N, not M"
_CN = rf"[*\"']*{_NUM}(?:{_DEN}|{_NOT_COUNT})"
#: where the corrected value stands, in order of preference; (pattern, needs score talk in the sentence)
_CORR_TARGETS: list[tuple[re.Pattern[str], bool]] = [
    (re.compile(rf"(?i)(?<![a-z])from[ \t]+(?:a[ \t]+)?\d{{1,2}}(?:[ \t]*/[ \t]*10)?[ \t]+(?:down[ \t]+|up[ \t]+)?to[ \t]+(?:a[ \t]+)?{_CN}"), True),
    (re.compile(rf"(?i)(?<![a-z])should(?:[ \t]+(?:have|instead|really))?[ \t]+(?:be(?:en)?|read)[ \t]+(?:a[ \t]+)?{_CN}"), False),
    (re.compile(rf"(?i){_CN}[ \t]*,?[ \t]*\(?(?:and[ \t]+)?not[ \t]+(?:a[ \t]+)?\d"), False),
    (re.compile(rf"(?i)(?<![a-z])(?:to|as|at)[ \t]+(?:a[ \t]+)?{_CN}"), True),
    (re.compile(rf"(?i)(?:correction|corrected|revised|updated|amended)[^\d\n]{{0,60}}?[:=\-–—][ \t]*{_CN}"), False),
]
_SCORE_TALK = re.compile(r"(?i)(?<![a-z])(?:scores?|scored|scoring|rating|rated|grade|marks?|points|i|i'd|i'll|i've|i'm|my|me|we)(?![a-z])|/[ \t]*10")


def _via_of(matches: list[re.Match[str]]) -> str:
    """How a team was named: "label" (Team A, team_a), "id" (the model's id) or "role" (presenting team)."""
    groups = {m.lastgroup for m in matches}
    if not groups or groups & {"ta", "tb"}:
        return "label"
    if groups & {"ia", "ib"}:
        return "id"
    return "role"


#: a real judgment names each criterion a few times; past this many mentions a reply is not one, and
#: reading stops (keeps hostile input fast)
_MAX_MENTIONS = 2000


@dataclass
class _TextState:
    team: str | None = None
    crit: str | None = None
    section: str | None = None  # "a", "b", "overall" or None: where prose goes
    via: str = "label"  # how the current team was named
    corrective: bool = False  # under a "Revised scores" / "Correction" heading


class _TextReader:
    def __init__(self, col: _Collector, rx: re.Pattern[str]) -> None:
        self.col = col
        self.rx = rx
        self.st = _TextState()
        self.buffers: dict[str, list[str]] = {"a": [], "b": [], "overall": []}
        #: text given under an explicit "Justification:" label, preferred to the section's prose
        self.labelled: dict[str, list[str]] = {"a": [], "b": []}
        self.mentions_left = _MAX_MENTIONS
        self.recent: list[str] = []  # the last few non-empty lines (for "Revised table:" above a table)

    # -- lines ----------------------------------------------------------------------------------------
    def read(self, text: str) -> None:
        table: list[tuple[int, str]] = []
        offset = 0
        for raw in text.splitlines(keepends=True):
            at = offset
            offset += len(raw)
            raw = raw.rstrip("\r\n")
            if raw.count("|") >= 2 or (raw.lstrip().startswith("|") and raw.count("|") >= 1):
                table.append((at, raw))
                continue
            if table:
                self.table(table)
                table = []
            self.col.ctx = _Ctx(pos=at + len(raw) - len(raw.lstrip()), source=raw.strip(), kind="line",
                                corrective=self.st.corrective, via=self.st.via)
            self.line(raw)
            if raw.strip():
                self.recent.append(raw)
                del self.recent[:-3]
        if table:
            self.table(table)
        for key in ("a", "b"):
            body = "\n".join(self.labelled[key] or self.buffers[key]).strip()
            if body:
                self.col.justification[key].append(body)
        body = "\n".join(self.buffers["overall"]).strip()
        if body:
            self.col.overall.append(body)

    def line(self, raw: str) -> None:
        if "~~" in raw:
            raw = _STRIKE_RE.sub(" ", raw)
        clean = raw.replace("*", "").replace("`", "").strip()
        if not clean:
            return
        self.col.ctx.clean = clean
        heading = bool(_HEADING_RE.match(raw) or _BOLD_LINE_RE.fullmatch(raw)) or (
            len(clean) <= 80 and clean.endswith(":")
        )
        heading = heading and bool(re.search(r"[A-Za-z]", clean))  # "**8/10**" is a score, not a heading
        low = clean.lower()
        crits: list[re.Match[str]] = []
        if self.mentions_left > 0 and any(w in low for w, _ in _CRIT_KEYWORDS):
            for m in _CRIT_RE.finditer(clean):
                if re.search(r"\d[ \t]*$", clean[max(0, m.start() - 8):m.start()]):
                    continue  # "3 stakeholders", "2 frameworks": a count, not the criterion's label
                crits.append(m)
                self.mentions_left -= 1
                if self.mentions_left <= 0:
                    self.col.notes.append(f"the reply names criteria over {_MAX_MENTIONS} times; the rest was not read")
                    break
        teams = list(self.rx.finditer(clean))
        lead, lead_end = self._leading_team(clean, teams)
        ov = _OVERALL_LABEL_RE.fullmatch(clean)
        scored = False
        third = _THIRD_RE.search(clean)

        if crits and _CORR_LANG.search(clean) and self._prose_corrections(clean):
            return  # "Team A's consistency should be 5, not 7": read as a correction, nothing else
        if heading:
            self.st.crit = None
            self.st.corrective = bool(_CORR_HEADING.search(clean))
            self.col.ctx.corrective = self.st.corrective
            tset = {_team_of_match(m) for m in teams}
            if not tset and (bt := _bare_team(clean)):
                tset = {bt}
            if not tset and third:  # "## Team C (a hypothetical)", "### The previous team": nobody's scores
                self.st.team = self.st.section = None
                return
            if tset:
                self.st.via = _via_of([m for m in teams]) if teams else "label"
            if ov and not crits and not tset:
                self.st.team = None
                self.st.section = "overall"
                if ov.group("rest"):
                    self.buffers["overall"].append(ov.group("rest"))
                return
            if len(tset) == 1:
                self.st.team = self.st.section = tset.pop()
            elif len(tset) == 2:
                self.st.team = self.st.section = None
            if len(crits) == 1 and not _NUM_RE.search(clean[crits[0].end():]):
                self.st.crit = _crit_name(crits[0].group(0))
                return
        elif lead is not None and not crits and (self.st.crit is None or not self._pairs(clean)):
            self.st.team = self.st.section = lead  # "Team A:" / "Team B (gpt-4o) -" label lines
            self.st.via = _via_of(teams[:1]) if teams else "label"
        elif third and third.start() < 3 and not teams and not crits:
            self.st.team = self.st.section = None  # "Team C: ..." label line
            return
        elif ov and ov.group("colon") and not crits:
            self.st.team = None
            self.st.section = "overall"
            self.buffers["overall"].append(ov.group("rest"))
            return

        if crits:
            if self.st.crit is not None and crits[0].start() > 0:
                # "- Team A: 8/10 — a clear principle" under a criterion heading: the score comes first
                prefix = clean[: crits[0].start()]
                scored = self._under_criterion(prefix, [m for m in teams if m.end() <= crits[0].start()])
            scored = self._criteria_line(clean, crits, teams) or scored
        elif self.st.crit is not None:
            scored = self._under_criterion(clean, teams)
        if lead is not None and crits:
            self.st.team = lead
            self.st.via = _via_of(teams[:1]) if teams else "label"

        if heading:
            return
        j = _JUST_LABEL_RE.fullmatch(clean)
        target = self.st.section
        if lead is not None and not scored:
            j = _JUST_LABEL_RE.fullmatch(clean, lead_end) or j
            target = lead
        if j is not None and target in ("a", "b"):
            self.labelled[target].append(j.group("rest"))
        elif target is not None:
            self.buffers[target].append(raw.strip())

    def _prose_corrections(self, clean: str) -> bool:
        """Sentences that correct a score: "Team A's consistency should be 5, not 7", "I'd revise Team B's
        framework awareness to 8", "Correction: consistency (Team A) from 7 to 5". Each needs one criterion,
        one team (or the section's team) and correction language about a score."""
        found = False
        for sm in re.finditer(r"[^.!?;]+(?:[.!?;](?=\d)[^.!?;]*)*[.!?;]?", clean):
            sent = sm.group(0)
            lang = _CORR_LANG.search(sent)
            if not lang:
                continue
            crits = {_crit_name(m.group(0)) for m in _CRIT_RE.finditer(sent)}
            tms = list(self.rx.finditer(sent))
            teams = {_team_of_match(m) for m in tms}
            if len(crits) != 1 or len(teams) > 1 or _THIRD_RE.search(sent):
                continue
            team = teams.pop() if teams else self.st.team
            if team is None:
                continue
            target = None
            for rx, needs_talk in _CORR_TARGETS:
                for m in rx.finditer(sent):
                    if m.start("num") < lang.start() and rx is not _CORR_TARGETS[0][0]:
                        continue
                    if needs_talk and not _SCORE_TALK.search(sent):
                        continue
                    if _skipped(sent, m.start("num"), m.end("num")):
                        continue
                    target = m
                    break
                if target:
                    break
            if target is None:
                continue
            v = _val(target, corrective=True)
            value, problem = _interpret(v)
            self.col.ctx = _Ctx(pos=self.col.ctx.pos + sm.start() if sent in self.col.ctx.source else self.col.ctx.pos,
                                source=sent.strip(), clean=sent, kind="correction", corrective=True,
                                via=_via_of(tms) if tms else self.st.via)
            self.col.add(team, crits.pop(), _Found(v.shown(), value, problem, kind="correction", corrective=True),
                         "lines")
            found = True
        return found

    def _leading_team(self, clean: str, teams: list[re.Match[str]]) -> tuple[str | None, int]:
        """A line that starts by naming a team as a label: "Team A:", "Team B (gpt-4o) -", "Team A", "B:".
        Returns the team and where its name ends."""
        if teams and not clean[: teams[0].start()].strip(" #>-_|([\t"):
            if _LABEL_REST_RE.match(clean, teams[0].end()):
                return _team_of_match(teams[0]), teams[0].end()
        bt = re.match(r"[^\w\n]{0,8}([ABab])(?![\w])", clean)
        if bt and _LABEL_REST_RE.match(clean, bt.end()) and len(clean) > 2 and ":" in clean[bt.end():bt.end() + 3]:
            return bt.group(1).lower(), bt.end()
        return None, 0

    def _pairs(self, segment: str, offset: int = 0) -> list[tuple[str, _Val, str]]:
        """"Team A 8, Team B 6" / "Team A: 8/10 … Team B: 7/10" inside one stretch of text (offset: where
        the stretch starts in the line)."""
        out = []
        for m in self.rx.finditer(segment):
            n = _AFTER_NAME_RE.match(segment, m.end())
            if n and not _skipped(segment, n.start("num"), n.end()):
                v = _val(n)
                v = _Val(v.num, v.den, v.upper, v.start + offset, v.corrective)
                out.append((_team_of_match(m), v, _via_of([m])))
        return out

    def _criteria_line(self, clean: str, crits: list[re.Match[str]], teams: list[re.Match[str]]) -> bool:
        scored = False
        ti = 0  # teams named before the current criterion (both lists are in order: one linear pass)
        for idx, cm in enumerate(crits):
            while ti < len(teams) and teams[ti].end() <= cm.start():
                ti += 1
            crit = _crit_name(cm.group(0))
            end = crits[idx + 1].start() if idx + 1 < len(crits) else len(clean)
            segment = clean[cm.end():end]
            pairs = self._pairs(segment, cm.end())
            if pairs:
                for t, v, via in pairs:
                    self.col.add_val(t, crit, v, "lines", via=via)
                scored = True
                continue
            # a team named after the score belongs to what follows it, not to this criterion
            first_team = self.rx.search(segment)
            if first_team:
                end = cm.end() + first_team.start()
            v = _score_in(clean, cm.end(), end)
            if v is None:
                continue
            team = _team_of_match(teams[ti - 1]) if ti else self.st.team
            via = _via_of([teams[ti - 1]]) if ti else None
            # a third party named after the team and before the criterion ("unlike the previous team, whose
            # consistency ...") owns this score, not the team
            since = teams[ti - 1].end() if ti else 0
            if _THIRD_RE.search(clean, since, cm.start()):
                team = None
            if idx and _CORR_LANG.search(clean, crits[idx - 1].end(), cm.start()):
                v = _Val(v.num, v.den, v.upper, v.start, True)  # "7 … actually, Consistency: 6"
            self.col.add_val(team, crit, v, "lines", via=via)
            scored = True
        return scored

    def _under_criterion(self, clean: str, teams: list[re.Match[str]]) -> bool:
        """Lines under a criterion heading: "Team A: 8/10" or "Score: 8"."""
        crit = self.st.crit
        assert crit is not None
        pairs = self._pairs(clean)
        if pairs:
            for t, v, via in pairs:
                self.col.add_val(t, crit, v, "lines", via=via)
            return True
        m = re.match(
            r"[\s\->*]*(?:(?:score|rating|grade|mark|points)[ \t]*[:=\-–—]?[ \t]*)?(?=\d)", clean, re.IGNORECASE
        )
        if m and not teams:
            n = _NUM_RE.match(clean, m.end())
            # "2. Team A ..." is a list item; "1 = no principle stated" a rubric anchor
            if n and not re.match(r"[.)][ \t]+\w", clean[n.end():]) and not _skipped(clean, n.start("num"), n.end()):
                self.col.add_val(self.st.team, crit, _val(n), "lines")
                return True
        return False

    # -- tables ---------------------------------------------------------------------------------------
    def table(self, lines: list[tuple[int, str]]) -> None:
        rows: list[list[str]] = []
        where: list[tuple[int, str]] = []
        corrective = self.st.corrective or any(_CORR_HEADING.search(r) for r in self.recent)
        for at, raw in lines:
            s = raw.strip()
            if s.startswith("|"):
                s = s[1:]
            if s.endswith("|"):
                s = s[:-1]
            cells = [_MARKUP_RE.sub("", _STRIKE_RE.sub("", c)).strip() for c in s.split("|")]
            if all(_TABLE_SEP_CELL.fullmatch(c) or not c for c in cells):
                continue
            rows.append(cells)
            where.append((at + len(raw) - len(raw.lstrip()), raw.strip()))
        if not rows:
            return
        header = rows[0]
        corrective = corrective or bool(_CORR_HEADING.search(" ".join(header)))
        row_at = {id(r): w for r, w in zip(rows, where, strict=True)}

        def at_row(row: list[str]) -> None:
            pos, src = row_at[id(row)]
            self.col.ctx = _Ctx(pos=pos, source=src, clean=src, kind="table", corrective=corrective, via=self.st.via)

        col_team = {
            i: t for i, c in enumerate(header) if c and (t := _team_of(c, self.rx)) and not _JUST_HEADER_RE.search(c)
        }
        col_crit = {i: c for i, h in enumerate(header) if h and (c := _crit_of(h))}
        if col_team and len(set(col_team.values())) <= 2 and not col_crit:
            # a column per team: | Criterion | Team A | Team B |
            for row in rows[1:]:
                crit = next((c for i, cell in enumerate(row) if i not in col_team and (c := _crit_of(cell))), None)
                if crit is None:
                    continue  # "Total", "Average"
                at_row(row)
                for i, t in col_team.items():
                    if i < len(row) and (v := _score_in_cell(row[i])):
                        self.col.add_val(t, crit, v, "table", via=_via_of(list(self.rx.finditer(header[i]))))
            return
        if len(col_crit) >= 2:
            # a column per criterion: | Team | Principle | Consistency | ...
            for row in rows[1:]:
                team_cell = next((cell for cell in row[:2] if cell and _team_of(cell, self.rx)), "")
                team = _team_of(team_cell, self.rx) if team_cell else None
                at_row(row)
                for i, crit in col_crit.items():
                    if i < len(row) and not _NOT_SCORE_HEADER.search(header[i]) and (v := _score_in_cell(row[i])):
                        self.col.add_val(team, crit, v, "table", via=_via_of(list(self.rx.finditer(team_cell))))
            return
        # one table per team: | Criterion | Score | Justification | (the team from the heading above it,
        # or from a team column in the row)
        score_col = next((i for i, h in enumerate(header)
                          if _SCORE_HEADER_RE.search(h) and not _crit_of(h) and not _NOT_SCORE_HEADER.search(h)), None)
        # columns that never hold the team's score: Max, Out of, Weight, Rank, Total, ...

        just_col = next((i for i, h in enumerate(header) if _JUST_HEADER_RE.search(h)), None)
        team_col = next((i for i, h in enumerate(header) if re.fullmatch(r"(?i)team|model|side|role", h)), None)
        body = rows[1:] if score_col is not None or just_col is not None or team_col is not None else rows
        not_score = {i for i, h in enumerate(header) if _NOT_SCORE_HEADER.search(h)} if body is not rows else set()
        for row in body:
            crit_at = next((i for i, cell in enumerate(row) if _crit_of(cell)), None)
            if crit_at is None:
                continue
            crit = _crit_of(row[crit_at])
            assert crit is not None
            team = self.st.team
            via = None
            if team_col is not None and team_col < len(row) and row[team_col].strip():
                team = _team_of(row[team_col], self.rx)  # a team this round does not have owns nothing
                via = _via_of(list(self.rx.finditer(row[team_col])))
            if score_col is not None:
                v = _score_in_cell(row[score_col]) if score_col < len(row) else None
            else:
                v = next((x for i, cell in enumerate(row[crit_at + 1:], crit_at + 1)
                          if i not in not_score and (x := _score_in_cell(cell))), None)
            if v is not None:
                at_row(row)
                self.col.add_val(team, crit, v, "table", via=via)
            if just_col is not None and just_col < len(row) and row[just_col] and team is not None:
                self.buffers[team].append(f"{CRITERION_LABELS[crit]}: {row[just_col]}")


# --------------------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------------------


def _label(team: str) -> str:
    return f"Team {_TEAM_LABEL[team]}"


def _where(team: str, crit: str) -> str:
    return f"{_label(team)} {CRITERION_LABELS[crit]}"


def _quote(source: str, limit: int = 120) -> str:
    one = " ".join(source.split())
    return f"“{one[:limit]}{'…' if len(one) > limit else ''}”"


_DRAFT_RE = re.compile(r"(?i)(?<![a-z])(?:draft|preliminary|provisional|tentative|initial[ \t]+(?:scores?|thoughts))(?![a-z])")
_KIND_WORDS = {"json": "JSON", "json_repaired": "repaired JSON", "table": "a table", "line": "a labelled line",
               "prose": "prose", "correction": "a correction"}


def _finish(text: str, col: _Collector, method: str, whole: list[ReviewReason]) -> Judgment:
    """Resolve what was found into one value per score, its provenance and the review checklist."""
    scores: dict[str, Scores] = {}
    items: list[ReviewReason] = []
    provenance: list[ScoreSource] = []
    kinds: list[str] = []
    for team in ("a", "b"):
        values: dict[str, int | None] = {}
        vias: set[str] = set()
        for crit in CRITERIA:
            values[crit] = None
            found = sorted(col.scores[team].get(crit, []), key=lambda f: (f.pos, f.seq))
            if not found:
                items.append(ReviewReason(team=team, criterion=crit, kind="missing",
                                          message=f"{_where(team, crit)}: missing (the judge gave no score)"))
                continue
            # prose only counts where nothing structured gave the score (or where it corrects it)
            use = [f for f in found if f.kind != "prose" or f.corrective] or found
            # a value the judge called a draft is superseded by any later one
            draft = next((i for i, f in enumerate(use[:-1]) if _DRAFT_RE.search(f.source[:400])), None)
            if draft is not None:
                use = use[: draft + 1] + [_Found(**{**f.__dict__, "corrective": True}) for f in use[draft + 1:]]
            # one score given twice ("8/10" in a section, "8" in a summary table) is one value
            key = lambda f: f.value if f.value is not None else f"?{f.shown}"  # noqa: E731
            shown = list(dict.fromkeys(f.shown for f in use))
            distinct = list(dict.fromkeys(key(f) for f in use))
            chosen = use[0]
            corrected_from: str | None = None
            if len(distinct) > 1:
                last_corr = max((i for i, f in enumerate(use) if f.corrective), default=None)
                later = use[last_corr:] if last_corr is not None else []
                if last_corr is not None and all(key(f) == key(use[last_corr]) for f in later) and any(
                    key(f) != key(use[last_corr]) for f in use[:last_corr]
                ):
                    chosen = use[last_corr]
                    corrected_from = ", ".join(dict.fromkeys(f.shown for f in use[:last_corr]
                                                             if key(f) != key(chosen)))
                else:
                    items.append(ReviewReason(
                        team=team, criterion=crit, kind="conflict",
                        message=f"{_where(team, crit)}: given as {' and '.join(shown[:4])} with no correction "
                                f"({'; '.join(_quote(f.source, 60) for f in use[:3])}); left missing"))
                    provenance.append(ScoreSource(team=team, criterion=crit, kind=use[-1].kind, value=None,
                                                  text=use[-1].source, position=use[-1].pos,
                                                  note=f"conflict: {' vs '.join(shown[:4])}"))
                    continue
            vias |= {f.via for f in use}
            value = chosen.value
            kind = "correction" if corrected_from is not None else chosen.kind
            note = f"corrected from {corrected_from} (read from {_KIND_WORDS.get(chosen.kind, chosen.kind)})" \
                if corrected_from is not None else ""
            if value is not None and not re.search(rf"(?<!\d){value}(?!\d)", text):
                value = None  # never a score the reply does not hold
                note = "could not be traced to the reply"
            if chosen.problem or value is None:
                problem = chosen.problem or "could not be traced to the reply"
                items.append(ReviewReason(team=team, criterion=crit, kind="invalid",
                                          message=f"{_where(team, crit)}: {problem} in {_quote(chosen.source)}; left missing"))
            elif corrected_from is not None:
                items.append(ReviewReason(team=team, criterion=crit, kind="correction",
                                          message=f"{_where(team, crit)}: {corrected_from} corrected to {value} "
                                                  f"by {_quote(chosen.source)}"))
            elif kind in ("prose", "correction"):
                items.append(ReviewReason(team=team, criterion=crit, kind="prose",
                                          message=f"{_where(team, crit)}: {value} read from prose {_quote(chosen.source)}"))
            values[crit] = value
            kinds.append(chosen.kind)
            provenance.append(ScoreSource(team=team, criterion=crit, kind=kind, value=value, text=chosen.source,
                                          position=chosen.pos, note=note))
        for via, how in (("id", "its model id"), ("role", "its role (presenting/responding)")):
            if via in vias:
                items.append(ReviewReason(team=team, kind="team_by_name",
                                          message=f"{_label(team)} was identified by {how}, not as {_label(team)}; "
                                                  "check the scores went to the right team"))
        scores[team] = Scores(**values)
    missing = any(s.missing() for s in scores.values())
    for note in col.notes:
        whole.append(ReviewReason(kind="parser", message=note))
    if col.unattributed and missing:
        whole.append(ReviewReason(kind="unattributed",
                                  message=f"{col.unattributed} score(s) found for no team of this round (left out)"))
    items = whole + items
    if method not in ("none",) and kinds:
        if all(k == "json" for k in kinds):
            method = "json"
        elif all(k in ("json", "json_repaired") for k in kinds):
            method = "json_repaired"
        elif "table" in kinds:
            method = "table"
        else:
            method = "lines"
    messages = list(dict.fromkeys(i.message for i in items))
    return Judgment(
        team_a_scores=scores["a"],
        team_b_scores=scores["b"],
        team_a_justification="\n\n".join(j for j in col.justification["a"] if j.strip()).strip(),
        team_b_justification="\n\n".join(j for j in col.justification["b"] if j.strip()).strip(),
        overall_analysis="\n\n".join(o for o in col.overall if o.strip()).strip(),
        raw_response=text,
        needs_review=bool(items),
        review_reasons=messages,
        review_items=items,
        provenance=provenance,
        parse_method=method,
    )


def parse_judgment(text: str, *, team_a_id: str | None = None, team_b_id: str | None = None) -> Judgment:
    """Read a judge's reply. Never raises, never invents a score; see docs/JUDGMENT.md."""
    raw = text if isinstance(text, str) else ""
    try:
        return _parse(raw, team_a_id or "", team_b_id or "")
    except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the reply; it is flagged instead
        msg = f"internal parser error ({type(exc).__name__}); the reply needs reading by hand"
        return Judgment(
            raw_response=raw,
            needs_review=True,
            review_reasons=[msg],
            review_items=[ReviewReason(kind="parser", message=msg)],
            parse_method="none",
        )


_NOT_NEWLINE = re.compile(r"[^\n]")


def _score_entries(col: _Collector) -> int:
    return sum(len(found) for d in col.scores.values() for found in d.values()) + col.unattributed


def _parse(text: str, team_a_id: str, team_b_id: str) -> Judgment:
    if not text.strip():
        return _finish(text, _Collector(), "none", [ReviewReason(kind="missing", message="empty reply")])
    rx = _team_regex(team_a_id.strip(), team_b_id.strip())

    # JSON, every object in order (a later object that gives scores corrects an earlier one)
    jcol = _Collector()
    walker = _JsonWalker(jcol, rx, text)
    scored: list[_JsonCandidate] = []
    pieces: list[str] = []  # the text with its JSON blanked out (same length), for the text reader
    pos = 0
    for cand in _json_candidates(text):
        before = _score_entries(jcol)
        jcol.ctx = _Ctx(pos=cand.span[0], kind="json" if cand.strict else "json_repaired",
                        corrective=bool(scored))
        walker.start(cand.span)
        walker.walk(cand.value, None, None)
        if _score_entries(jcol) != before:
            scored.append(cand)
        start, end = cand.span
        pieces.append(text[pos:start])
        pieces.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        pos = end
    pieces.append(text[pos:])

    # text, always read (JSON blanked out: it is read as JSON or not at all): tables, labelled lines,
    # prose, and corrections written after the JSON
    tcol = _Collector()
    _TextReader(tcol, rx).read("".join(pieces))

    whole: list[ReviewReason] = []
    col = jcol
    for team in ("a", "b"):
        for crit, found in tcol.scores[team].items():
            col.scores[team].setdefault(crit, []).extend(found)
        if not col.justification[team]:
            col.justification[team] = tcol.justification[team]
    col.overall = col.overall or tcol.overall
    col.unattributed += tcol.unattributed
    col.notes += tcol.notes
    col.sources |= tcol.sources
    if any(c.truncated for c in scored):
        whole.append(ReviewReason(kind="truncated",
                                  message="the reply was cut off before its JSON ended; only complete scores were kept"))
    method = "json" if col.count() else "none"
    if not col.count():
        whole.append(ReviewReason(kind="missing", message="no scores found in the reply"))
    return _finish(text, col, method, whole)
