"""Reading scores out of JSON (strict or repaired): the schema's shape and shapes matched by name."""

from __future__ import annotations

import json
import re

from ebtui.core.judgment.change_phrases import lemmas, verb_form
from ebtui.core.judgment.lenient_json import Loose, Num, Obj, Partial
from ebtui.core.judgment.provenance import (
    Collector,
    Found,
)
from ebtui.core.judgment.vocabulary import (
    CRIT_RE,
    Val,
    crit_name,
    crit_of,
    score_in_cell,
    team_of,
    via_of,
)
from ebtui.core.records import CRITERIA, CRITERION_LABELS


def _norm_key(key: str) -> str:
    key = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)
    return re.sub(r"[\s_\-.]+", " ", key).strip().lower()


#: words that may stand beside a criterion's name in a key that names its score
_KEY_FILLER = {"score", "scores", "rating", "points", "grade", "mark", "value", "result", "final", "revised", "for",
               "on", "of", "the", "criterion", "criteria", "team", "a", "b", "s", "out", "pts", "level"}
_NAME_KEYS = {"team", "name", "model", "id", "label", "role", "side", "team name", "team id"}
_CRIT_NAME_KEYS = {"criterion", "criteria", "name", "category", "metric", "dimension", "aspect"}
_JUST_WORDS = re.compile(
    r"justif|rational|reason|comment|explan|feedback|assessment|evaluation|notes?\b|analysis|summary|strength|weakness",
)
_OVERALL_WORDS = re.compile(r"overall|summary|verdict|comparison|comparative|conclusion|^analysis$|^general")
#: a key's words that name a score (the rubric's vocabulary: "score", "rating")
_SCORE_WORDS = {"score", "scores", "rating", "ratings", "points", "grade", "mark", "marks", "value", "result", "pts"}
_KEY_GLUE = {"the", "of", "for", "s", "team", "a", "b"}
#: keys that may hold a team's seven scores as a list in the criteria's order
_LIST_KEYS = {"score", "scores", "rating", "ratings", "points", "marks", "grades", "values"}


def _score_key(nk: str) -> bool:
    """Whether a key (normalised) is a score's by its words alone: "score", "rating", "team_a_score"."""
    ws = [w for w in nk.split() if w not in _KEY_GLUE]
    return bool(ws) and all(w in _SCORE_WORDS for w in ws)


def _columns(node: Loose) -> dict[str, list[Loose]]:
    """Every scalar value of each key (normalised) in the objects of a JSON value: a key's column."""
    out: dict[str, list[Loose]] = {}
    stack: list[Loose] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Obj):
            for k, v in n:
                if isinstance(v, (list, Obj)):
                    stack.append(v)
                else:
                    out.setdefault(_norm_key(str(k)), []).append(v)
        elif isinstance(n, list):
            stack.extend(x for x in n if not isinstance(x, tuple))
    return out


def _explained(column: list[Loose]) -> bool:
    """Whether a key's column is no score by its values: not all whole scores 1-10 (a weight, a count, a
    product), the scale's maximum in every object (10, at least twice), or a rank (1, 2, … n, each once)."""
    if not all(_whole_score(x) for x in column):
        return True
    values = sorted(int(str(x).split("/")[0]) for x in column)
    top = values[-1] if values else 0
    ranks = top >= 3 and len(values) % top == 0 and values == sorted(list(range(1, top + 1)) * (len(values) // top))
    return (len(values) >= 2 and values[0] == 10) or ranks  # (a rank per team: 1..n once each, per team)


def _noun_field(nk: str) -> bool:
    """Whether a key (normalised) names a thing of its own: its last word a noun that is no score's word and
    can be no adjective or participle ("confidence", "certainty", "weight"; not "revised", "final", "new",
    "adjusted", whose noun, a score, is left out)."""
    ws = [w for w in nk.split() if w not in _KEY_GLUE]
    if not ws or ws[-1] in _SCORE_WORDS or not ws[-1].isalpha():
        return False
    forms = lemmas(ws[-1])
    return "NOUN" in forms and "ADJ" not in forms and "VERB" not in forms and not _deverbal(ws[-1])


def _deverbal(word: str) -> bool:
    """Whether a noun is made from a verb ("revision", "correction", "adjustment", "approval"): the act of
    changing, whose value is a score's new one."""
    for suffix in ("ation", "ition", "ion", "ment", "al"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3 and any(
                verb_form(x) is not None for x in (stem, stem + "e", stem + "ate")):
            return True
    return False


def _whole_score(item: Loose) -> bool:
    """Whether a list item is a whole score 1-10 as written: 8, "8", "8/10"."""
    if isinstance(item, bool) or not isinstance(item, str) or isinstance(item, Partial):
        return False
    v = score_in_cell(item) if not isinstance(item, Num) else Val(str(item), item.den)
    return v is not None and v.upper is None and v.den in (None, "10") and v.num.isdigit() and 1 <= int(v.num) <= 10 \
        and (isinstance(item, Num) or re.fullmatch(r"[ \t]*\d{1,2}(?:[ \t]*/[ \t]*10)?[ \t]*", item) is not None)


def criterion_order(node: Loose) -> tuple[str, ...] | None:
    """The order of the criteria a JSON reply states as a list of their names ("criteria": ["consistency", …]),
    else the rubric's; None where it states a list of names that is not the seven criteria once each, or two
    different orders (then no list of scores can be read by position)."""
    orders: set[tuple[str, ...]] = set()
    stack: list[Loose] = [node]
    while stack and len(orders) < 3:
        n = stack.pop()
        if isinstance(n, Obj):
            stack.extend(v for _, v in n)
        elif isinstance(n, list):
            names = [crit_of(x) if isinstance(x, str) and not isinstance(x, Num) else None for x in n]
            if sum(1 for x in names if x) >= 3:
                orders.add(tuple(x or "" for x in names))
            stack.extend(v for v in n if isinstance(v, (list, Obj)))
    if not orders:
        return CRITERIA
    order = orders.pop()
    return order if not orders and len(order) == 7 and set(order) == set(CRITERIA) else None


class JsonWalker:
    def __init__(self, col: Collector, rx: re.Pattern[str], text: str = "") -> None:
        self.col = col
        self.rx = rx
        self.text = text
        self.cursor = 0
        self.end = len(text)
        self.via: dict[str | None, str] = {}
        self.order: tuple[str, ...] | None = CRITERIA
        self.columns: dict[str, list[Loose]] = {}  # each key's values in the JSON (_columns)

    def start(self, span: tuple[int, int]) -> None:
        self.cursor, self.end = span

    def team_of_key(self, key: str) -> str | None:
        return team_of(key, self.rx)

    def crit_of_key(self, key: str) -> str | None:
        """The criterion a key names, where the key is that criterion's name (with at most team names, score
        words or numbering around it): "consistency", "Consistency score", "team_a_consistency", "1. Principle
        articulation". A key that says something else about the criterion ("num_stakeholders",
        "stakeholders_named", "principle_count", "consistency_justification") does not name its score."""
        m = CRIT_RE.search(key)
        if m is None:
            return None
        rest = _norm_key(self.rx.sub(" ", CRIT_RE.sub(" ", key)))
        words = [w for w in re.findall(r"[a-z]+", rest) if w not in _KEY_FILLER]
        if words and not _JUST_WORDS.search(rest):
            return None
        return crit_name(m.group(0))

    def _locate(self, key: str, value: Loose) -> None:
        """Point the context at the member "key": value as written in the reply."""
        shown = str(value) if not isinstance(value, bool) and value is not None else json.dumps(value)
        rx = re.compile(rf"[\"'“]?{re.escape(key)}[\"'”]?\s*[:=]\s*[\"'“]?{re.escape(shown)}[\"'”]?")
        m = rx.search(self.text, self.cursor, min(self.end, self.cursor + 4000))
        if m:
            self.col.ctx.pos, self.col.ctx.source = m.start(), m.group(0)
            self.cursor = m.end()
        else:  # written some other way (escapes, odd quotes): the member's key and the rest of its line
            k = re.compile(rf"[\"'“]?{re.escape(key)}[\"'”]?\s*[:=][^\n]{{0,160}}").search(
                self.text, self.cursor, min(self.end, self.cursor + 4000))
            self.col.ctx.source = k.group(0).rstrip(", ") if k else ""
            if k:
                self.col.ctx.pos = k.start()

    def own_field(self, nk: str) -> bool:
        """Whether a key beside the cells' scores is a field of the judge's own layout, no second value: it stands
        in every object that holds a score (as many values as the score keys hold) and names a thing of its own
        ("confidence": 9 beside each "score"). A key in only some objects, or one that leaves its noun out
        ("revised": 6, "final": 6), is a second value."""
        scored = sum(len(v) for k, v in self.columns.items() if _score_key(k))
        return scored >= 7 and len(self.columns.get(nk, ())) >= scored and _noun_field(nk)

    def score(self, team: str | None, crit: str, value: Loose, key: str = "", second: bool = False) -> None:
        if isinstance(value, Partial):
            return  # cut off: "1" may have been "10"
        self._locate(key or crit, value)
        via = self.via.get(team, "label")
        late = False
        if team is None and second:
            # a second value of a criterion that names no team of this round: a person says whose it was
            self.col.doubts.append((crit, self.col.ctx.source))
            return
        if isinstance(value, Num):
            self.col.add_val(team, crit, Val(str(value), value.den, corrective=late), "json", via=via)
        elif isinstance(value, bool) or value is None:
            shown = json.dumps(value)
            self.col.add(team, crit, Found(shown, None, f"given as {shown}", kind=self.col.ctx.kind), "json", via)
        elif isinstance(value, str):
            v = score_in_cell(value)
            if v is not None:  # "8", "8/10", "8 out of 10"; words with no number are not a score
                self.col.add_val(team, crit, Val(v.num, v.den, v.upper, v.start, late), "json", via=via)

    def scores_by_position(self, team: str, key: str, items: list[Loose]) -> bool:
        """A team's seven scores as a list in the criteria's order (the order a "criteria" list states, else the
        rubric's): only exactly seven whole scores 1-10; a list of any other length or content is not scores."""
        if self.order is None or len(items) != len(self.order) or not all(_whole_score(x) for x in items):
            return False
        k = re.compile(rf"[\"'“]?{re.escape(key)}[\"'”]?\s*[:=]\s*\[[^\]]{{0,200}}\]").search(
            self.text, self.cursor, min(self.end, self.cursor + 4000))
        if k is not None:
            self.col.ctx.pos, self.col.ctx.source = k.start(), k.group(0)
            self.cursor = k.end()
        for crit, item in zip(self.order, items, strict=True):
            assert isinstance(item, str)
            v = Val(str(item), item.den) if isinstance(item, Num) else score_in_cell(item)
            if v is not None:
                self.col.add_val(team, crit, Val(v.num, v.den), "json",
                                 via=self.via.get(team, "label"))
        return True

    def walk(self, node: Loose, team: str | None, crit: str | None, depth: int = 0) -> None:
        if depth > 64:
            return
        if depth == 0:
            self.order = criterion_order(node)
            self.columns = _columns(node)
        if isinstance(node, list) and not isinstance(node, Obj):
            for item in node:
                self.walk(item, team, crit, depth + 1)
            return
        if not isinstance(node, Obj):
            return
        # an object that names its own team or criterion: {"team": "A", "scores": {...}}
        named = False
        for k, v in node:
            nk = _norm_key(str(k))
            if isinstance(v, str) and nk in _NAME_KEYS and (t := self.team_of_key(v)):
                team = t
                self.via.setdefault(t, via_of(list(self.rx.finditer(v))))
            if isinstance(v, str) and nk in _CRIT_NAME_KEYS and (c := crit_of(v)):
                crit = c
                named = True  # {"criterion": "consistency", "new_score": 5}: an entry naming its own cell
        # the members of an object that names a criterion: a key of score words is its score; any other key
        # whose value is a whole score 1-10 (and whose column is not explained as a weight, a count, the scale
        # or a rank) is a second value for the cell ("revised_score": 6 beside "score": 7; "new_score" in a list
        # naming the team and criterion): two values and nothing to settle them are a conflict
        kinds = {str(k): _score_key(_norm_key(str(k))) or (
            _whole_score(v) and not _explained(self.columns.get(_norm_key(str(k)), [v]))
            and _norm_key(str(k)) not in _NAME_KEYS | _CRIT_NAME_KEYS
            and not CRIT_RE.search(str(k)) and not self.own_field(_norm_key(str(k)))
            and "second")  # ("stakeholders_named": another thing about the criterion)
            for k, v in node if not isinstance(v, (list, Obj))} if crit is not None else {}
        for k, v in node:
            key = str(k)
            nk = _norm_key(key)
            kt = self.team_of_key(key)
            if kt is not None:
                self.via.setdefault(kt, via_of(list(self.rx.finditer(key))))
            kc = self.crit_of_key(key)
            scalar = not isinstance(v, (list, Obj))
            if isinstance(v, list) and not isinstance(v, Obj) and kc is None and crit is None and (
                    kt is not None or (team is not None and nk in _LIST_KEYS)) and \
                    self.scores_by_position(kt or team or "", key, v):
                continue
            if kc is not None:
                t = kt or team
                if scalar and not isinstance(v, Partial) and isinstance(v, str) and _JUST_WORDS.search(nk):
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
            elif scalar and crit is not None and kinds.get(key):
                # (an entry naming its criterion but no team of this round: whose it was, a person says)
                self.score(team, crit, v, key, second=kinds[key] == "second" or (team is None and named))
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

