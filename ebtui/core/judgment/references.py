"""Scores given by reference to another cell ("same as principle articulation", "matches its consistency
score", "equal to Team A's", "the same"): read as a reference while reading, resolved after everything else,
only where the referenced cell's value was read unambiguously and nothing flags it (issue #37)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ebtui.core.judgment.vocabulary import CRIT_RE, TEAM_LABEL, crit_name, team_of_match
from ebtui.core.records import CRITERION_LABELS, Judgment, ReviewReason, Scores, ScoreSource

_CRIT = CRIT_RE.pattern[4:]
#: a criterion's label opening a line ("- Framework awareness:", "3. **Consistency** —")
_CRIT_LABEL = re.compile(rf"(?i)[ \t>*_\-•]*(?:\d{{1,2}}[.)][ \t]*)?[*_ \t]*(?P<crit>{_CRIT})[ \t*_]*(?:\([^()\n\d]{{0,40}}\))?"
                         r"[ \t*_]*(?:[:=]|[-–—][ \t])[ \t*_]*")
#: a criterion named as a sentence's subject, then a copula or a word of scoring ("Framework awareness is …")
_CRIT_SUBJECT = re.compile(rf"(?i)[ \t>*_\-•]*(?:(?:its|their|the)[ \t]+)?(?P<crit>{_CRIT})(?:[ \t]+(?:score|rating|mark))?"
                           r"[ \t]+(?:is|was|stands|sits|gets|got|earns|earned|takes|receives|deserves|merits)[ \t]+")
#: a reference marker (closed class): "same as", "the same", "identical to", "equal to", "matches", "ditto"
_MARKER = re.compile(
    r"(?i)(?:(?:just|exactly|simply|also|again)[ \t]+)?(?:(?:the[ \t]+)?same(?:[ \t]+(?:score|rating|mark|value|grade))?"
    r"(?:[ \t]+(?:as|again))?|identical[ \t]+to|equal(?:ling)?(?:[ \t]+to)?|equals|match(?:es|ing)?|mirror(?:s|ing)?"
    r"|as[ \t]+(?:for|with|above|before)|in[ \t]+line[ \t]+with|like|ditto|likewise)(?![a-z])[ \t*_]*")
_OWNER = re.compile(r"(?i)(?:(?:its|their|his|her|the)[ \t]+)?")
_NOUN = re.compile(r"(?i)(?:['’]s)?(?:[ \t]+(?:score|rating|mark|grade|value|one))?")
#: what may end a reference: the line's end, a stop, a dash, a reason ("because …")
_STOP = re.compile(r"(?i)[ \t*_]*(?:$|[.;,:!(—–]|-[ \t]|(?:because|since|as|for|given)(?![a-z]))")


@dataclass
class Reference:
    """Cell (team, crit) takes the value of (ref_team, ref_crit), by the words `source` at `pos`."""

    team: str
    crit: str
    ref_team: str
    ref_crit: str
    source: str
    pos: int


def reference_in(flat: str, rx: re.Pattern[str], team: str | None, heading_crit: str | None,
                 previous: Callable[[], tuple[str, str] | None]) -> tuple[str, str, str, str] | None:
    """(team, criterion, referenced team, referenced criterion) where `flat` (one line, markup blanked) gives a
    cell's score by reference and holds no digit; `previous`: the cell read last, for "the same", "ditto"."""
    if re.search(r"\d", flat):
        return None
    lab = _CRIT_LABEL.match(flat) or _CRIT_SUBJECT.match(flat)
    crit = crit_name(lab.group("crit")) if lab else None
    at = lab.end() if lab else 0
    if lab is None and heading_crit is not None:
        # "Team B: the same", "- B — equal to Team A's" under a criterion's heading
        tm = re.match(r"[ \t>*_\-•]*", flat)
        tl = rx.match(flat, tm.end() if tm else 0)
        stop = re.compile(r"[ \t*_]*(?:[:=]|[-–—][ \t])[ \t*_]*").match(flat, tl.end()) if tl else None
        if tl is None or stop is None:
            return None
        team, crit, at = team_of_match(tl), heading_crit, stop.end()
    if crit is None or team not in ("a", "b"):
        return None
    mk = _MARKER.match(flat, at)
    if mk is None:
        return None
    pos = mk.end()
    ref_team, ref_crit = team, None
    tm = rx.match(flat, _end(_OWNER, flat, pos))
    if tm is not None:
        ref_team = team_of_match(tm)
        pos = _end(_NOUN, flat, tm.end())
        cm = CRIT_RE.match(flat, _end(re.compile(r"[ \t]*"), flat, pos))
        if cm is not None:
            ref_crit, pos = crit_name(cm.group(0)), _end(_NOUN, flat, cm.end())
    else:
        cm = CRIT_RE.match(flat, _end(_OWNER, flat, pos))
        if cm is not None:
            ref_crit, pos = crit_name(cm.group(0)), _end(_NOUN, flat, cm.end())
    if not _STOP.match(flat, pos):
        return None  # "like the hospital's own plan …": no cell's name ends the reference
    if tm is None and cm is None:
        last = previous() if re.match(r"(?i)(?:just|exactly|simply|also|again|the|same|ditto|likewise)", mk.group(0)) \
            else None
        if last is None:
            return None
        ref_team, ref_crit = last  # "the same", "ditto": the cell read just before
    ref_crit = ref_crit or crit
    if (ref_team, ref_crit) == (team, crit):
        return None
    return team, crit, ref_team, ref_crit


def _end(rx: re.Pattern[str], text: str, pos: int) -> int:
    m = rx.match(text, pos)
    return m.end() if m else pos


def _where(team: str, crit: str) -> str:
    return f"Team {TEAM_LABEL[team]} {CRITERION_LABELS[crit]}"


def _quote(text: str) -> str:
    one = " ".join(text.split())
    return f"“{one[:120]}{'…' if len(one) > 120 else ''}”"


def resolve(j: Judgment, refs: list[Reference]) -> Judgment:
    """Each reference takes its cell's value from the referenced cell where that cell holds a value and
    nothing flags it (no item on it, its team or the reply), and it is no reference itself (a chain or a
    cycle); else the cell stays missing, flagged with the reason. A value read besides that differs is a
    conflict."""
    if not refs:
        return j
    scores = {"a": j.team_a_scores.as_dict(), "b": j.team_b_scores.as_dict()}
    items = list(j.review_items)
    provenance = list(j.provenance)
    referring = {(r.team, r.crit) for r in refs}
    for r in refs:
        why = None
        if (r.ref_team, r.ref_crit) in referring:
            why = "is itself given by reference"
        elif scores[r.ref_team][r.ref_crit] is None:
            why = "holds no value"
        elif any(i.team in (r.ref_team, None) and i.criterion in (r.ref_crit, None) for i in items):
            why = "is flagged for review"
        have = scores[r.team][r.crit]
        ref_value = scores[r.ref_team][r.ref_crit]
        others = [i for i in items if i.team == r.team and i.criterion == r.crit and i.kind != "missing"]
        if why is None and have is not None and have == ref_value:
            continue  # the same value, read twice
        items = [i for i in items if not (i.team == r.team and i.criterion == r.crit and i.kind == "missing")]
        if why is not None or have is not None or others:
            reason = f"which {why}" if why else f"{ref_value}, while {have} was read for it" if have is not None \
                else "which needs review"
            scores[r.team][r.crit] = None
            items.append(ReviewReason(team=r.team, criterion=r.crit, kind="missing" if have is None else "conflict",
                                      message=f"{_where(r.team, r.crit)}: given as the score of "
                                              f"{_where(r.ref_team, r.ref_crit)} ({_quote(r.source)}), {reason}; "
                                              "left missing"))
            continue
        scores[r.team][r.crit] = ref_value
        provenance.append(ScoreSource(team=r.team, criterion=r.crit, kind="line", value=ref_value, text=r.source,
                                      position=r.pos, note=f"same as {_where(r.ref_team, r.ref_crit)} ({ref_value})"))
    return j.model_copy(update={"team_a_scores": Scores(**scores["a"]), "team_b_scores": Scores(**scores["b"]),
                                "review_items": items, "provenance": provenance, "needs_review": bool(items),
                                "review_reasons": list(dict.fromkeys(i.message for i in items))})
