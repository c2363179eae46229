"""Lines whose values stand in an order the reply states: a team's seven scores in the criteria's order
("Team A: 8 / 7 / 6 / 7 / 8 / 9 / 7" under "Scores in rubric order"), both teams' scores as "8/6" under a
heading that names the teams in that order ("Scores as A/B:"), or each before its team ("8 for A, 7 for B")."""

from __future__ import annotations

import re

from ebtui.core.judgment.abbreviations import INITIALS, legend_of, short_name
from ebtui.core.judgment.provenance import Collector, Ctx
from ebtui.core.judgment.vocabulary import CRIT_RE, Val, crit_name, team_of_match
from ebtui.core.records import CRITERIA

#: a line that says the values follow the rubric's order: "in rubric order", "in the order of the criteria"
_RUBRIC_ORDER = re.compile(
    r"(?i)(?<![a-z])(?:(?:rubric|criteri(?:a|on)|prompt)(?:['’]s)?[ \t]+order|order[ \t]+of[ \t]+the[ \t]+"
    r"(?:rubric|criteria|prompt)|(?:same|usual|standard|listed|given)[ \t]+order[ \t]+as[ \t]+(?:in[ \t]+)?the[ \t]+"
    r"(?:rubric|criteria|prompt))(?![a-z])")
#: a name of a criterion as a token of an order's list: its initials, or a shortening
_TOKEN = re.compile(r"(?<![A-Za-z])[A-Za-z]+(?![A-Za-z])")
#: the label of a team's list: a bullet, the team ("Team A", "A", a model id), then a stop
_LEAD = re.compile(r"[ \t>*_\-•]*")
_STOP = re.compile(r"[*_ \t]*(?:\([^()\d\n]{0,40}\))?[*_ \t]*(?:[:=]|[-–—][ \t])[ \t*_]*")
#: values with one separator between them, and nothing after them but a reason without digits
_VALUES = re.compile(
    r"(?P<v>\d{1,2}(?:\.\d+)?)(?P<sep>[ \t]*[/,|·;][ \t]*|[ \t]+[-–][ \t]+|[ \t]+)"
    r"(?:\d{1,2}(?:\.\d+)?(?P=sep))*\d{1,2}(?:\.\d+)?(?P<tail>[ \t.;,]*(?:[—–(][^\d\n]*)?)$")
_BARE_PAIR = re.compile(r"(?<![A-Za-z0-9'’])([AB])[ \t]*/[ \t]*([AB])(?![A-Za-z0-9'’])")
_SLASH_PAIR = re.compile(r"[ \t*_]*(?P<x>\d{1,2})[ \t]*/[ \t]*(?P<y>\d{1,2})(?![\d.])(?P<tail>[^\d\n]*)$")


#: both teams' values after a criterion's label, each naming its team after it: "8 for A, 7 for B"
_FOR_TEAMS = re.compile(
    r"[ \t*_]*(?P<x>\d{1,2})(?:[ \t]*/[ \t]*10)?[ \t]+(?:for|to)[ \t]+(?P<t1>[^,;:\d\n]{1,60}?)[ \t]*(?:[,;&]|[ \t]and)"
    r"[ \t]*(?:and[ \t]+)?(?P<y>\d{1,2})(?:[ \t]*/[ \t]*10)?[ \t]+(?:for|to)[ \t]+(?P<t2>[^,;:\d\n]{1,60}?)"
    r"[ \t*_]*(?:[.;]|[ \t]+[—–(-][^\d\n]*)?[ \t*_]*")


def _for_teams(rest: str, rx: re.Pattern[str]) -> list[tuple[str, Val]]:
    """"8 for A, 7 for B" / "8 to Team B, 6 to Team A": each value for the team named after it (two teams, each
    once, and nothing else in the line but a reason without digits)."""
    m = _FOR_TEAMS.fullmatch(rest)
    if m is None:
        return []
    teams = [_one_team(m.group("t1"), rx), _one_team(m.group("t2"), rx)]
    if teams[0] is None or teams[1] is None or teams[0] == teams[1]:
        return []
    return [(teams[0], Val(m.group("x"), None, None, m.start("x"))), (teams[1], Val(m.group("y"), None, None, m.start("y")))]


def _one_team(name: str, rx: re.Pattern[str]) -> str | None:
    """The team a short phrase is and nothing else: "A", "Team B", "the presenting team", a model's id."""
    name = name.strip(" \t*_")
    if re.fullmatch(r"[AB]", name):
        return name.lower()
    found = list(rx.finditer(name))
    if len(found) == 1 and not re.search(r"[A-Za-z0-9]", name[:found[0].start()].replace("the", "", 1)) \
            and not re.search(r"[A-Za-z0-9]", name[found[0].end():]):
        return team_of_match(found[0])
    return None


def stated_order(line: str, legend: dict[str, str]) -> tuple[str, ...] | None:
    """The criteria's order a line with no digits states: the rubric's where it says so ("in rubric order"),
    or the seven criteria each named once in the order it lists them ("PA / C / SR / UI / FA / IH / CE")."""
    if re.search(r"\d", line):
        return None
    if sum(line.count(ch) for ch in "/,|·;") < 6:  # seven names need six separators between them
        return CRITERIA if "order" in line.lower() and _RUBRIC_ORDER.search(line) else None
    found = list(CRIT_RE.finditer(line))
    names: list[tuple[int, str]] = [(m.start(), crit_name(m.group(0))) for m in found]
    k = 0
    for m in _TOKEN.finditer(line):
        while k < len(found) and found[k].end() <= m.start():
            k += 1
        if k < len(found) and found[k].start() <= m.start():
            continue  # a word inside a criterion's name
        tok = m.group(0).rstrip(".")
        c = INITIALS.get(tok) if tok.isupper() else None
        c = c or legend.get(tok) or short_name(tok)
        if c is not None:
            names.append((m.start(), c))
    names.sort()
    # (a name shortened in two words, "Stakeh recog", names its criterion twice in a row: once)
    seq = [c for k, (_, c) in enumerate(names) if k == 0 or names[k - 1][1] != c]
    if len(seq) == 7 and set(seq) == set(CRITERIA):
        return tuple(seq)
    return CRITERIA if _RUBRIC_ORDER.search(line) else None


def _team_list(line: str, rx: re.Pattern[str]) -> tuple[str, int, list[str]] | None:
    """A team's list of values: (team, where the values start, the values), or None."""
    lead = _LEAD.match(line)
    at = lead.end() if lead else 0
    tm = rx.match(line, at)
    if tm is not None:
        team, end = team_of_match(tm), tm.end()
    elif (bm := re.compile(r"([AB])(?![A-Za-z0-9'’])").match(line, at)) is not None:
        team, end = bm.group(1).lower(), bm.end()
    else:
        return None
    stop = _STOP.match(line, end)
    if stop is None:
        return None
    m = _VALUES.match(line, stop.end())
    if m is None:
        return None
    values = re.findall(r"\d{1,2}(?:\.\d+)?", line[stop.end():m.start("tail")])
    return (team, stop.end(), values) if len(values) >= 2 else None


def _whole(values: list[str]) -> bool:
    return all(v.isdigit() and 1 <= int(v) <= 10 for v in values)


def read_ordered(text: str, original: str, col: Collector, rx: re.Pattern[str]) -> None:
    """Read the lists in `text` (the reply with its JSON blanked out; sources quoted from `original` at the same
    offsets) into `col`. A team's seven values are read after a line that states their order (not flagged) —
    exactly seven, all whole scores 1-10, else none; with no stated order, only where nothing else gave that
    team a score, and flagged (a person checks the order). "8/6" is read per team under "Scores as A/B:"
    ("7/10" there may be seven out of ten: left missing); "8 for A, 7 for B" after a criterion's label."""
    legend = legend_of(text)
    order: tuple[str, ...] | None = None
    pair: tuple[str, str] | None = None
    unordered: list[tuple[str, int, list[str], int, str]] = []
    stated = False
    offset = 0
    for raw in text.splitlines(keepends=True):
        at, offset = offset, offset + len(raw)
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        src = original[at:at + len(line)].strip() if len(original) == len(text) else line.strip()
        listed = _team_list(line, rx)
        if listed is not None:
            # (a list of another length is no team's scores, and leaves the stated order standing)
            team, start, values = listed
            if len(values) != 7:
                continue
            if order is not None and _whole(values):
                col.ctx = Ctx(pos=at + len(line) - len(line.lstrip()), source=src, clean=line, kind="line")
                for crit, v in zip(order, values, strict=True):
                    col.add_val(team, crit, Val(v, None, None, start), "lines", kind="line")
            elif order is None and _whole(values):
                unordered.append((team, start, values, at + len(line) - len(line.lstrip()), src))
            continue
        cm = CRIT_RE.search(line) if pair is not None or " for " in line or " to " in line else None
        st = _STOP.match(line, cm.end()) if cm is not None and _LEAD.fullmatch(line, 0, cm.start()) else None
        if cm is not None and st is not None and (named := _for_teams(line[st.end():], rx)):
            col.ctx = Ctx(pos=at + len(line) - len(line.lstrip()), source=src, clean=line, kind="line")
            for named_team, nv in named:
                crit = crit_name(cm.group(0))
                # the same number the sentence rules read from this line, as prose: it is this line's value
                same = [f for f in col.scores[named_team].get(crit, []) if f.pos == col.ctx.pos and f.kind == "prose"
                        and f.value is not None and str(f.value) == nv.num and f.shown == nv.num]
                for f in same:
                    f.kind = "line"
                if not same:
                    col.add_val(named_team, crit, Val(nv.num, None, None, nv.start + st.end()), "lines", kind="line")
            continue
        if pair is not None and cm is not None and st is not None:
            pm = _SLASH_PAIR.match(line, st.end())
            if pm is not None and pm.group("y") != "10" and pm.group("x").isdigit():
                col.ctx = Ctx(pos=at + len(line) - len(line.lstrip()), source=src, clean=line, kind="line")
                crit = crit_name(cm.group(0))
                col.add_val(pair[0], crit, Val(pm.group("x"), None, None, pm.start("x")), "lines", kind="line")
                col.add_val(pair[1], crit, Val(pm.group("y"), None, None, pm.start("y")), "lines", kind="line")
            continue
        order = stated_order(line, legend)
        pair = _pair_heading(line, rx)
        stated = stated or order is not None
    if stated:
        return  # the reply states an order somewhere: a list not under it is not read in another
    for team, start, values, pos, src in unordered:
        if col.scores[team]:
            continue  # another reading gave this team scores: a bare list of seven is not read beside it
        col.ctx = Ctx(pos=pos, source=src, clean=src, kind="prose")
        for crit, v in zip(CRITERIA, values, strict=True):
            col.add_val(team, crit, Val(v, None, None, start), "lines", kind="prose")


def _pair_heading(line: str, rx: re.Pattern[str]) -> tuple[str, str] | None:
    """The two teams a line with no digits names around a slash, in order: "Scores as A/B:", "(Team B / Team A)"."""
    if "/" not in line or re.search(r"\d", rx.sub(" ", line)):
        return None
    named = list(rx.finditer(line))
    if len(named) == 2 and "/" in line[named[0].end():named[1].start()]:
        a, b = team_of_match(named[0]), team_of_match(named[1])
        return (a, b) if a != b else None
    bp = _BARE_PAIR.search(line) if not named else None
    if bp is not None and bp.group(1) != bp.group(2):
        return bp.group(1).lower(), bp.group(2).lower()
    return None
