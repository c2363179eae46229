"""The reading of a judge's reply (see docs/JUDGMENT.md and the package docstring)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ebtui.core.judgment.lenient_json import _json_candidates, _JsonCandidate, _Num, _Obj, _Partial
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment, Scores

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
_NUM = r"(?<![\w.\-/])(?P<num>\d{1,6}(?:\.\d{1,6})?)(?![\d.]\d)"
_DEN = r"(?:[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>\d{1,6}(?:\.\d{1,6})?)(?!\w|\.\d))"
_RANGE = r"(?:[ \t]*(?:-|–|to)[ \t]*(?P<upper>\d{1,2})(?!\w|\.\d))"
# after a bare number, a word makes it a count ("7 criteria", "3 stakeholders"), not a score
_NOT_COUNT = (
    r"(?![ \t]*(?:%|(?!(?:points?|pts|out|and|but|while|whereas|for|in|on|as|at|with|because|since|given|versus"
    r"|vs|compared|than|here|overall|which|though|although|so|if|to|from|by|the|this|that|it|its|their|team)"
    r"(?![A-Za-z]))[A-Za-z]))"
)
_NUM_RE = re.compile(rf"{_NUM}(?:{_DEN}|{_RANGE}{_NOT_COUNT}|{_NOT_COUNT})")
_NUM_DEN_RE = re.compile(rf"{_NUM}{_DEN}")
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


def _val(m: re.Match[str]) -> _Val:
    d = m.groupdict()
    return _Val(d["num"], d.get("den"), d.get("upper"))


def _score_in(line: str, start: int, end: int) -> _Val | None:
    """The score that line[start:end] (the stretch after a criterion's name) gives, by preference: a
    self-correction ("actually 6"), a number out of ten ("8/10"), a number right after the name, a number
    after a colon or dash. A number must start inside the stretch; what follows it is judged on the whole
    line ("3 stakeholders" stays a count even when the next criterion's name comes right after)."""
    stop = min(len(line), end + 40)  # enough to see "out of 10" or "stakeholders" after a number
    if _CORRECTION_HINT.search(line, start, stop):
        corrections = [m for m in _CORRECTION_RE.finditer(line, start, stop) if m.start("num") < end]
        if corrections:
            return _val(corrections[-1])
    m = _NUM_DEN_RE.search(line, start, stop)
    if m and m.start("num") < end:
        return _val(m)
    m = _AFTER_NAME_RE.match(line, start, stop)
    if m and m.start("num") < end:
        return _val(m)
    m = _AFTER_COLON_RE.search(line, start, stop)
    if m and m.start("num") < end:
        return _val(m)
    return None


def _score_in_cell(cell: str) -> _Val | None:
    cell = cell.strip()
    if not cell:
        return None
    m = _NUM_DEN_RE.search(cell) or _NUM_RE.search(cell)
    return _val(m) if m else None


# --------------------------------------------------------------------------------------------------------
# What was found, and what it adds up to
# --------------------------------------------------------------------------------------------------------


@dataclass
class _Found:
    shown: str
    value: int | None
    problem: str | None


@dataclass
class _Collector:
    scores: dict[str, dict[str, list[_Found]]] = field(default_factory=lambda: {"a": {}, "b": {}})
    justification: dict[str, list[str]] = field(default_factory=lambda: {"a": [], "b": []})
    overall: list[str] = field(default_factory=list)
    unattributed: int = 0
    sources: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # review reasons found while reading

    def add(self, team: str | None, crit: str, found: _Found, source: str) -> None:
        if team is None:
            self.unattributed += 1
            return
        self.scores[team].setdefault(crit, []).append(found)
        self.sources.add(source)

    def add_val(self, team: str | None, crit: str, v: _Val, source: str) -> None:
        value, problem = _interpret(v)
        self.add(team, crit, _Found(v.shown(), value, problem), source)

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
    def __init__(self, col: _Collector, rx: re.Pattern[str]) -> None:
        self.col = col
        self.rx = rx

    def team_of_key(self, key: str) -> str | None:
        return _team_of(key, self.rx)

    def score(self, team: str | None, crit: str, value: Any) -> None:
        if isinstance(value, _Partial):
            return  # cut off: "1" may have been "10"
        if isinstance(value, _Num):
            self.col.add_val(team, crit, _Val(str(value), value.den), "json")
        elif isinstance(value, bool) or value is None:
            shown = json.dumps(value)
            self.col.add(team, crit, _Found(shown, None, f"given as {shown}"), "json")
        elif isinstance(value, str):
            v = _score_in_cell(value)
            if v is not None:  # "8", "8/10", "8 out of 10"; words with no number are not a score
                self.col.add_val(team, crit, v, "json")

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
            if isinstance(v, str) and nk in _CRIT_NAME_KEYS and (c := _crit_of(v)):
                crit = c
        for k, v in node:
            key = str(k)
            nk = _norm_key(key)
            kt = self.team_of_key(key)
            kc = _crit_of(key)
            scalar = not isinstance(v, (list, _Obj))
            if kc is not None:
                t = kt or team
                if scalar and not isinstance(v, _Partial) and isinstance(v, str) and _JUST_WORDS.search(nk):
                    if t:
                        self.col.justification[t].append(f"{CRITERION_LABELS[kc]}: {v}")
                elif scalar:
                    self.score(t, kc, v)
                else:
                    self.walk(v, t, kc, depth + 1)
            elif kt is not None:
                rest = _norm_key(self.rx.sub(" ", key))
                if isinstance(v, str) and (crit is None or _JUST_WORDS.search(rest)):
                    self.col.justification[kt].append(str(v))
                elif scalar and crit is not None:
                    self.score(kt, crit, v)
                else:
                    self.walk(v, kt, crit, depth + 1)
            elif nk in _SCORE_KEYS and scalar and crit is not None:
                self.score(team, crit, v)
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


#: a real judgment names each criterion a few times; past this many mentions a reply is not one, and
#: reading stops (keeps hostile input fast)
_MAX_MENTIONS = 2000


@dataclass
class _TextState:
    team: str | None = None
    crit: str | None = None
    section: str | None = None  # "a", "b", "overall" or None: where prose goes


class _TextReader:
    def __init__(self, col: _Collector, rx: re.Pattern[str]) -> None:
        self.col = col
        self.rx = rx
        self.st = _TextState()
        self.buffers: dict[str, list[str]] = {"a": [], "b": [], "overall": []}
        #: text given under an explicit "Justification:" label, preferred to the section's prose
        self.labelled: dict[str, list[str]] = {"a": [], "b": []}
        self.mentions_left = _MAX_MENTIONS

    # -- lines ----------------------------------------------------------------------------------------
    def read(self, text: str) -> None:
        table: list[str] = []
        for raw in text.splitlines():
            if raw.count("|") >= 2 or (raw.lstrip().startswith("|") and raw.count("|") >= 1):
                table.append(raw)
                continue
            if table:
                self.table(table)
                table = []
            self.line(raw)
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
        heading = bool(_HEADING_RE.match(raw) or _BOLD_LINE_RE.fullmatch(raw)) or (
            len(clean) <= 80 and clean.endswith(":")
        )
        heading = heading and bool(re.search(r"[A-Za-z]", clean))  # "**8/10**" is a score, not a heading
        low = clean.lower()
        crits: list[re.Match[str]] = []
        if self.mentions_left > 0 and any(w in low for w, _ in _CRIT_KEYWORDS):
            for m in _CRIT_RE.finditer(clean):
                crits.append(m)
                self.mentions_left -= 1
                if self.mentions_left <= 0:
                    self.col.notes.append(f"the reply names criteria over {_MAX_MENTIONS} times; the rest was not read")
                    break
        teams = list(self.rx.finditer(clean))
        lead, lead_end = self._leading_team(clean, teams)
        ov = _OVERALL_LABEL_RE.fullmatch(clean)
        scored = False

        if heading:
            self.st.crit = None
            tset = {_team_of_match(m) for m in teams}
            if not tset and (bt := _bare_team(clean)):
                tset = {bt}
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

    def _pairs(self, segment: str) -> list[tuple[str, _Val]]:
        """"Team A 8, Team B 6" / "Team A: 8/10 … Team B: 7/10" inside one stretch of text."""
        out = []
        for m in self.rx.finditer(segment):
            n = _AFTER_NAME_RE.match(segment, m.end())
            if n:
                out.append((_team_of_match(m), _val(n)))
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
            pairs = self._pairs(segment)
            if pairs:
                for t, v in pairs:
                    self.col.add_val(t, crit, v, "lines")
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
            self.col.add_val(team, crit, v, "lines")
            scored = True
        return scored

    def _under_criterion(self, clean: str, teams: list[re.Match[str]]) -> bool:
        """Lines under a criterion heading: "Team A: 8/10" or "Score: 8"."""
        crit = self.st.crit
        assert crit is not None
        pairs = self._pairs(clean)
        if pairs:
            for t, v in pairs:
                self.col.add_val(t, crit, v, "lines")
            return True
        m = re.match(
            r"[\s\->*]*(?:(?:score|rating|grade|mark|points)[ \t]*[:=\-–—]?[ \t]*)?(?=\d)", clean, re.IGNORECASE
        )
        if m and not teams:
            n = _NUM_RE.match(clean, m.end())
            if n and not re.match(r"[.)][ \t]+\w", clean[n.end():]):  # "2. Team A ..." is a list item
                self.col.add_val(self.st.team, crit, _val(n), "lines")
                return True
        return False

    # -- tables ---------------------------------------------------------------------------------------
    def table(self, lines: list[str]) -> None:
        rows: list[list[str]] = []
        for raw in lines:
            s = raw.strip()
            if s.startswith("|"):
                s = s[1:]
            if s.endswith("|"):
                s = s[:-1]
            cells = [_MARKUP_RE.sub("", _STRIKE_RE.sub("", c)).strip() for c in s.split("|")]
            if all(_TABLE_SEP_CELL.fullmatch(c) or not c for c in cells):
                continue
            rows.append(cells)
        if not rows:
            return
        header = rows[0]
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
                for i, t in col_team.items():
                    if i < len(row) and (v := _score_in_cell(row[i])):
                        self.col.add_val(t, crit, v, "table")
            return
        if len(col_crit) >= 2:
            # a column per criterion: | Team | Principle | Consistency | ...
            for row in rows[1:]:
                team = next((t for cell in row[:2] if cell and (t := _team_of(cell, self.rx))), None)
                for i, crit in col_crit.items():
                    if i < len(row) and (v := _score_in_cell(row[i])):
                        self.col.add_val(team, crit, v, "table")
            return
        # one table per team: | Criterion | Score | Justification | (the team from the heading above it,
        # or from a team column in the row)
        score_col = next((i for i, h in enumerate(header) if _SCORE_HEADER_RE.search(h) and not _crit_of(h)), None)
        just_col = next((i for i, h in enumerate(header) if _JUST_HEADER_RE.search(h)), None)
        team_col = next((i for i, h in enumerate(header) if re.fullmatch(r"(?i)team|model|side|role", h)), None)
        body = rows[1:] if score_col is not None or just_col is not None or team_col is not None else rows
        for row in body:
            crit_at = next((i for i, cell in enumerate(row) if _crit_of(cell)), None)
            if crit_at is None:
                continue
            crit = _crit_of(row[crit_at])
            assert crit is not None
            team = self.st.team
            if team_col is not None and team_col < len(row):
                team = _team_of(row[team_col], self.rx) or team
            if score_col is not None:
                v = _score_in_cell(row[score_col]) if score_col < len(row) else None
            else:
                v = next((x for cell in row[crit_at + 1:] if (x := _score_in_cell(cell))), None)
            if v is not None:
                self.col.add_val(team, crit, v, "table")
            if just_col is not None and just_col < len(row) and row[just_col] and team is not None:
                self.buffers[team].append(f"{CRITERION_LABELS[crit]}: {row[just_col]}")


# --------------------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------------------


def _label(team: str) -> str:
    return f"team {_TEAM_LABEL[team]}"


def _finish(text: str, col: _Collector, method: str, reasons: list[str]) -> Judgment:
    scores: dict[str, Scores] = {}
    for team in ("a", "b"):
        values: dict[str, int | None] = {}
        team_missing = 0
        team_reasons: list[str] = []
        for crit in CRITERIA:
            found = col.scores[team].get(crit, [])
            if not found:
                values[crit] = None
                team_missing += 1
                team_reasons.append(f"{_label(team)}: {crit} missing")
                continue
            last = found[-1]
            shown = list(dict.fromkeys(f.shown for f in found))
            if len(shown) > 1:
                listed = shown if len(shown) <= 4 else [*shown[:2], "…", *shown[-1:]]
                team_reasons.append(
                    f"{_label(team)}: {crit} given more than once ({', then '.join(listed)}); the last one was used"
                )
            value = last.value
            if value is not None and str(value) not in text:  # never a score the reply does not hold
                value = None
                team_reasons.append(f"{_label(team)}: {crit} {last.shown} could not be traced to the reply (left missing)")
            values[crit] = value
            if last.problem:
                team_reasons.append(f"{_label(team)}: {crit} {last.problem} (left missing)")
        if team_missing == len(CRITERIA):
            team_reasons = [f"{_label(team)}: all seven scores missing"]
        reasons.extend(team_reasons)
        scores[team] = Scores(**values)
    reasons.extend(col.notes)
    if col.unattributed:
        reasons.append(f"{col.unattributed} score(s) found without a team to give them to (left out)")
    return Judgment(
        team_a_scores=scores["a"],
        team_b_scores=scores["b"],
        team_a_justification="\n\n".join(j for j in col.justification["a"] if j.strip()).strip(),
        team_b_justification="\n\n".join(j for j in col.justification["b"] if j.strip()).strip(),
        overall_analysis="\n\n".join(o for o in col.overall if o.strip()).strip(),
        raw_response=text,
        needs_review=bool(reasons),
        review_reasons=list(dict.fromkeys(reasons)),
        parse_method=method,
    )


def parse_judgment(text: str, *, team_a_id: str | None = None, team_b_id: str | None = None) -> Judgment:
    """Read a judge's reply. Never raises, never invents a score; see the module docstring."""
    raw = text if isinstance(text, str) else ""
    try:
        return _parse(raw, team_a_id or "", team_b_id or "")
    except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the reply; it is flagged instead
        return Judgment(
            raw_response=raw,
            needs_review=True,
            review_reasons=[f"internal parser error ({type(exc).__name__}); the reply needs reading by hand"],
            parse_method="none",
        )


_NOT_NEWLINE = re.compile(r"[^\n]+")


def _score_entries(col: _Collector) -> int:
    return sum(len(found) for d in col.scores.values() for found in d.values()) + col.unattributed


def _parse(text: str, team_a_id: str, team_b_id: str) -> Judgment:
    if not text.strip():
        return _finish(text, _Collector(), "none", ["empty reply"])
    rx = _team_regex(team_a_id.strip(), team_b_id.strip())

    # JSON, every object in order (a later object corrects an earlier one)
    jcol = _Collector()
    walker = _JsonWalker(jcol, rx)
    scored: list[_JsonCandidate] = []
    pieces: list[str] = []  # the text with its JSON blanked out, for the text reader
    pos = 0
    for cand in _json_candidates(text):
        before = _score_entries(jcol)
        walker.walk(cand.value, None, None)
        if _score_entries(jcol) != before:
            scored.append(cand)
        start, end = cand.span
        pieces.append(text[pos:start])
        pieces.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        pos = end
    pieces.append(text[pos:])

    # text, always read (JSON blanked out: it is read as JSON or not at all): it gives the scores when
    # there is no JSON, and prose where the JSON lacks it
    tcol = _Collector()
    _TextReader(tcol, rx).read("".join(pieces))

    reasons: list[str] = []
    if jcol.count() and jcol.count() >= tcol.count():
        col = jcol
        method = "json" if all(c.strict for c in scored) else "json_repaired"
        repairs = sorted(set().union(*(c.repairs for c in scored)))
        truncated = any(c.truncated for c in scored)
        if truncated:
            reasons.append("the reply was cut off before its JSON ended; only complete scores were kept")
        if repairs:
            reasons.append(f"the JSON had to be repaired ({', '.join(repairs)})")
        if len(scored) > 1:
            reasons.append(f"the reply holds {len(scored)} JSON objects; the last value given for each score was used")
        elif not truncated and not _is_schema_shape(scored[0].value):
            reasons.append("the JSON is not in the requested shape; its fields were matched by name")
        for team in ("a", "b"):
            if not col.justification[team]:
                col.justification[team] = tcol.justification[team]
        if not col.overall:
            col.overall = tcol.overall
    elif tcol.count():
        col = tcol
        method = "table" if "table" in tcol.sources else "lines"
        reasons.append(
            "scores read from a markdown table, not JSON" if method == "table" else "scores read from lines of text, not JSON"
        )
        for team in ("a", "b"):
            if jcol.justification[team] and not col.justification[team]:
                col.justification[team] = jcol.justification[team]
        if jcol.overall and not col.overall:
            col.overall = jcol.overall
    else:
        col = tcol
        col.unattributed += jcol.unattributed
        method = "none"
        reasons.append("no scores found in the reply")
        for team in ("a", "b"):
            col.justification[team] = col.justification[team] or jcol.justification[team]
        col.overall = col.overall or jcol.overall
    return _finish(text, col, method, reasons)
