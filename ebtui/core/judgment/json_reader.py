"""Reading scores out of JSON (strict or repaired): the schema's shape and shapes matched by name."""

from __future__ import annotations

import json
import re

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
from ebtui.core.records import CRITERION_LABELS


def _norm_key(key: str) -> str:
    key = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)
    return re.sub(r"[\s_\-.]+", " ", key).strip().lower()


#: words that may stand beside a criterion's name in a key that names its score
_KEY_FILLER = {"score", "scores", "rating", "points", "grade", "mark", "value", "result", "final", "revised", "for",
               "on", "of", "the", "criterion", "criteria", "team", "a", "b", "s", "out", "pts", "level"}
_SCORE_KEYS = {"score", "value", "rating", "points", "grade", "mark", "result"}
_NAME_KEYS = {"team", "name", "model", "id", "label", "role", "side", "team name", "team id"}
_CRIT_NAME_KEYS = {"criterion", "criteria", "name", "category", "metric", "dimension", "aspect"}
_JUST_WORDS = re.compile(
    r"justif|rational|reason|comment|explan|feedback|assessment|evaluation|notes?\b|analysis|summary|strength|weakness",
)
_OVERALL_WORDS = re.compile(r"overall|summary|verdict|comparison|comparative|conclusion|^analysis$|^general")


class JsonWalker:
    def __init__(self, col: Collector, rx: re.Pattern[str], text: str = "") -> None:
        self.col = col
        self.rx = rx
        self.text = text
        self.cursor = 0
        self.end = len(text)
        self.via: dict[str | None, str] = {}

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

    def score(self, team: str | None, crit: str, value: Loose, key: str = "") -> None:
        if isinstance(value, Partial):
            return  # cut off: "1" may have been "10"
        self._locate(key or crit, value)
        via = self.via.get(team, "label")
        if isinstance(value, Num):
            self.col.add_val(team, crit, Val(str(value), value.den), "json", via=via)
        elif isinstance(value, bool) or value is None:
            shown = json.dumps(value)
            self.col.add(team, crit, Found(shown, None, f"given as {shown}", kind=self.col.ctx.kind), "json", via)
        elif isinstance(value, str):
            v = score_in_cell(value)
            if v is not None:  # "8", "8/10", "8 out of 10"; words with no number are not a score
                self.col.add_val(team, crit, v, "json", via=via)

    def walk(self, node: Loose, team: str | None, crit: str | None, depth: int = 0) -> None:
        if depth > 64:
            return
        if isinstance(node, list) and not isinstance(node, Obj):
            for item in node:
                self.walk(item, team, crit, depth + 1)
            return
        if not isinstance(node, Obj):
            return
        # an object that names its own team or criterion: {"team": "A", "scores": {...}}
        for k, v in node:
            nk = _norm_key(str(k))
            if isinstance(v, str) and nk in _NAME_KEYS and (t := self.team_of_key(v)):
                team = t
                self.via.setdefault(t, via_of(list(self.rx.finditer(v))))
            if isinstance(v, str) and nk in _CRIT_NAME_KEYS and (c := crit_of(v)):
                crit = c
        for k, v in node:
            key = str(k)
            nk = _norm_key(key)
            kt = self.team_of_key(key)
            if kt is not None:
                self.via.setdefault(kt, via_of(list(self.rx.finditer(key))))
            kc = self.crit_of_key(key)
            scalar = not isinstance(v, (list, Obj))
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

