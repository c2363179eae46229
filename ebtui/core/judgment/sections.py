"""A reply's sections by structure: which unknown headings stay inside a team's section.

A heading the reader does not know, at the team heading's level or above, is a sub-heading of the team when
the structure says so (the other team's section repeats it; the team has no score before it; between two team
headings its block adds only criteria not yet scored, flagged) and ends the section otherwise (its block
repeats a criterion; after the last team). See docs/JUDGMENT.md, "Sections by structure"."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ebtui.core.judgment.corrections import THIRD_RE
from ebtui.core.judgment.tables import CORR_HEADING
from ebtui.core.judgment.vocabulary import (
    BOLD_LINE_RE,
    CRIT_RE,
    LABEL_LEVEL,
    OVERALL_LABEL_RE,
    SECTION_PART,
    WORD_VALUES,
    crit_name,
    heading_level,
    team_of_match,
)

_ATX = re.compile(r"\s{0,3}#{1,6}\s")
#: a setext underline ("Team A" over "======" or "------"): level 1 or 2, as in markdown
_SETEXT = re.compile(r"[ \t]{0,3}(?:=+|-+)[ \t]*")
#: a list enumerator or a bullet opening a heading's text ("1. Team A", "2) Team B", "- Team A")
_ENUM = re.compile(r"[ \t]*(?:\d{1,2}[.)]|[-*•>])[ \t]+")
_NUMBERISH = re.compile(r"\d|\b(?:" + "|".join(WORD_VALUES) + r")\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+")


@dataclass
class _Heading:
    pos: int  # where the line's text starts (the offset the text reader gives its line)
    level: int
    key: str  # its words, lower case: what "the same heading" means across the teams' sections
    team: str | None = None  # the one team it names: a team's heading
    closes: bool = False  # a heading the reader knows as leaving any team's section (overall, a third party)
    candidate: bool = False  # unknown, no team, no criterion, at the level of a team heading or above


@dataclass
class Outline:
    """The decisions: unknown headings kept inside their team's section, and stretches read as a team's only
    on a guess (flag what was read there)."""

    kept: frozenset[int] = frozenset()
    #: (start, end, team, heading text): a block kept in the team's section with nothing in the structure to say so
    doubtful: list[tuple[int, int, str, str]] = field(default_factory=list)
    #: (start, end, team, heading text): the rest of a team's span after the heading that ended its section
    ended: list[tuple[int, int, str, str]] = field(default_factory=list)


def _clean(line: str) -> str:
    return line.replace("*", "").replace("_", " ").replace("`", "").strip()


def _setext(line: str, nxt: str) -> bool:
    """Whether `nxt` underlines `line` as a heading (not a list item's or a table row's rule)."""
    return bool(nxt.strip()) and _SETEXT.fullmatch(nxt) is not None and not _ENUM.match(line) \
        and not line.lstrip().startswith(("|", "#"))


_LETTER = re.compile(r"[A-Za-z]")
#: a numbered line, as numbered team headings are written ("1. Team A", "2) Team B")
_NUMBERED_TEAM = re.compile(r"[ \t]{0,3}\d{1,2}[.)][ \t]+[A-Za-z]")
_DIGIT = re.compile(r"\d")
_PARENS = re.compile(r"\([^()]*\)")
_SENTENCE_END = re.compile(r"[.!?,;]$")


def _heading(line: str, nxt: str, pos: int, rx: re.Pattern[str], numbered: bool = False) -> _Heading | None:
    """The line as a heading (ATX, setext, bold, a short label ending in ':', a short line naming one team; where
    the teams' headings are numbered, "3. Closing notes" too), or None."""
    clean = _clean(line)
    if not clean or clean.startswith("|") or not _LETTER.search(clean):
        return None
    setext = _setext(line, nxt) and len(clean) <= 80
    marked = bool(_ATX.match(line) or BOLD_LINE_RE.fullmatch(line)) or setext or (
        len(clean) <= 80 and clean.endswith(":")) or (
        numbered and len(clean) <= 60 and _NUMBERED_TEAM.match(line) is not None and not CRIT_RE.search(clean)
        and not _SENTENCE_END.search(clean) and not _DIGIT.search(_ENUM.sub("", clean, count=1)))
    if not marked and len(clean) > 60:
        return None  # (a long line is no heading: checked first, so a long reply stays fast)
    teams = {team_of_match(m) for m in rx.finditer(clean)}
    if not marked and len(teams) != 1:
        return None
    rest = rx.sub(" ", clean) if teams else clean
    level = (1 if nxt.strip().startswith("=") else 2) if setext and not _ATX.match(line) else heading_level(line)
    unnumbered = _ENUM.sub("", rest, count=1)
    key = " ".join(w.lower() for w in _WORD.findall(unnumbered))
    if len(teams) == 1 and len(clean) <= 60 and not CRIT_RE.search(rest) and not _SENTENCE_END.search(clean) \
            and not _DIGIT.search(_PARENS.sub(" ", unnumbered)):
        if marked or rx.match(_ENUM.sub("", clean, count=1)):  # "## Team A", "**Team B (gpt-4o)**", "1. Team A"
            return _Heading(pos, level, key, team=teams.pop())
    if not marked:
        return None
    h = _Heading(pos, level, key)
    if teams:
        return h
    if THIRD_RE.search(clean) or OVERALL_LABEL_RE.fullmatch(clean):
        h.closes = True
        return h
    h.candidate = not (CRIT_RE.search(clean) or CORR_HEADING.search(clean) or SECTION_PART.search(clean)
                       or _DIGIT.search(unnumbered)) and (level < LABEL_LEVEL or len(_WORD.findall(clean)) <= 4)
    return h


def _scored(line: str) -> set[str]:
    """The criteria a line gives a number for (not a count of them: "3 stakeholders")."""
    if not _NUMBERISH.search(line):
        return set()
    return {crit_name(m.group(0)) for m in CRIT_RE.finditer(line)
            if not re.search(r"\d[ \t]*$", line[max(0, m.start() - 8):m.start()])}


@dataclass
class _Span:
    team: str
    level: int
    start: int  # where the team heading's line starts
    end: int = -1  # where the span ends (the next team heading or a closing heading; -1: the text's end)
    body: list[tuple[_Heading | None, set[str], int]] = field(default_factory=list)


def outline(text: str, rx: re.Pattern[str]) -> Outline:
    """Which unknown headings stay inside the team section they stand in, and which stretches are a guess."""
    spans = _team_spans(text, rx)
    keys: dict[str, set[str]] = {}
    for sp in spans:
        for h, _, _ in sp.body:
            if h is not None and h.candidate:
                keys.setdefault(h.key, set()).add(sp.team)
    kept: set[int] = set()
    doubtful: list[tuple[int, int, str, str]] = []
    ended: list[tuple[int, int, str, str]] = []
    for n, sp in enumerate(spans):
        between = n + 1 < len(spans) and spans[n + 1].team != sp.team
        scored: set[str] = set()
        for k, (h, crits, at) in enumerate(sp.body):
            scored |= crits
            if h is None:
                continue
            if not h.candidate:
                continue  # a heading the reader knows keeps its own rule
            same = h.level <= sp.level  # (by the outline's levels: setext "===" is level 1, a bold line 7)
            end = k + 1
            while end < len(sp.body) and not _ends_block(sp.body[end][0], sp.level if same else h.level, same):
                end += 1
            block: set[str] = set().union(*(c for _, c, _ in sp.body[k + 1:end]))
            if len(keys.get(h.key, ())) == 2 or not scored:
                pass  # the other team's section repeats it, or the team has no score before it: a sub-heading
            elif same and (block & scored or not between):
                ended.append((at, sp.end if sp.end >= 0 else len(text), sp.team, h.key))
                break  # a second block of criteria already scored, or a section after the last team's: it ends
            elif block - scored:
                stop = sp.body[end][2] if end < len(sp.body) else spans[n + 1].start if n + 1 < len(spans) else len(text)
                doubtful.append((at, stop, sp.team, h.key))  # criteria not yet scored: the team's, or a note's?
            kept.add(h.pos)
    return Outline(frozenset(kept), doubtful, ended)


def _ends_block(h: _Heading | None, level: int, same: bool) -> bool:
    """Whether `h` ends the block of a heading at `level` (at the team heading's level: only another unknown
    heading at that level or above; deeper: any heading at its level or above)."""
    return h is not None and h.level <= level and (h.candidate or not same)


def _team_spans(text: str, rx: re.Pattern[str]) -> list[_Span]:
    """Each team heading with what follows it up to the next team heading or a heading that closes sections."""
    spans: list[_Span] = []
    current: _Span | None = None
    lines = text.split("\n")
    numbered = any(_NUMBERED_TEAM.match(line) and rx.search(line) for line in lines if len(line) <= 80)
    pos = 0
    skip = False
    for k, line in enumerate(lines):
        start, pos = pos, pos + len(line) + 1
        if skip:  # a setext underline
            skip = False
            continue
        nxt = lines[k + 1] if k + 1 < len(lines) else ""
        h = _heading(line, nxt, start + len(line) - len(line.lstrip()), rx, numbered)
        if h is not None:
            skip = _setext(line, nxt)
            if h.team is not None or h.closes:
                if current is not None:
                    current.end = start
                current = None
            if h.team is not None:
                current = _Span(h.team, h.level, start)
                spans.append(current)
                continue
        if current is not None and line.strip():
            current.body.append((h, _scored(line) if h is None else set(), start))
    return spans
