"""Criterion names shortened without a dot ("Consist", "Stakeh", "Honest") and abbreviations a legend defines
("CON = consistency"): each matched against the seven criteria's names, a unique match only."""

from __future__ import annotations

import re
from functools import lru_cache

from ebtui.core.judgment.vocabulary import CRIT_RE, crit_name
from ebtui.core.records import CRITERIA, CRITERION_LABELS

#: each criterion's initials, from its label: "PA" principle articulation, "C" consistency, "CE" constructive
#: engagement
INITIALS = {"".join(w[0] for w in CRITERION_LABELS[c].split()).upper(): c for c in CRITERIA}
_LABEL_WORDS = {c: CRITERION_LABELS[c].lower().split() for c in CRITERIA}
#: the shortest start of a criterion's word read as that word ("Princ", "Stake", "Honest", "Uncert")
_MIN_PREFIX = 4


@lru_cache(maxsize=4096)
def short_name(cell: str) -> str | None:
    """The criterion a cell names by the starts of its label's words, without dots: "Consist", "Stakeh",
    "Princ", "Stakeh recog", "Honest", "Engage". Every word (4 letters at least) must start a word of one
    criterion's label, the same criterion for every word, and of no other criterion's label."""
    ws = re.findall(r"[A-Za-z]+", cell)
    if not ws or len(ws) > 3 or re.search(r"[^A-Za-z \t.*_:()]", cell):
        return None
    found: set[str] = set()
    for w in ws:
        low = w.lower()
        hits = {c for c, label in _LABEL_WORDS.items() if len(low) >= _MIN_PREFIX
                and any(lw.startswith(low) for lw in label)}
        if len(hits) != 1:
            return None
        found |= hits
    return found.pop() if len(found) == 1 else None


# "CON = consistency", "PA: principle articulation", "SR – stakeholder recognition", "(CON) consistency"
_LEGEND_ITEM = re.compile(
    r"(?<![A-Za-z0-9])(?P<abbr>[A-Z][A-Za-z]{0,5})\.?[ \t]*(?:=|:|[-–—][ \t]|→)[ \t]*[*_\"']*"
    rf"(?P<name>{CRIT_RE.pattern[4:]})[*_\"']*(?=[ \t]*(?:[,;.)|]|$|\n|[ \t]+(?:and[ \t]+)?[A-Z][A-Za-z]{{0,5}}\.?[ \t]*[=:]))",
    re.IGNORECASE | re.MULTILINE,
)


def _abbreviates(abbr: str, name: str) -> bool:
    """Whether `abbr` is a shortening of `name`: shorter, the same first letter, and its letters in order in it."""
    low, rest = abbr.lower(), name.lower()
    if len(abbr) >= len(name) or low[0] != rest[0]:
        return False
    at = 0
    for ch in low:
        at = rest.find(ch, at) + 1
        if at == 0:
            return False
    return True


def legend_of(text: str) -> dict[str, str]:
    """The abbreviations a legend in `text` defines ("CON = consistency, PA = principle articulation"): each
    abbreviation (as written, letters only) to its criterion, where at least two are defined and each
    abbreviation means one criterion only (one defined twice differently is left out)."""
    if "=" not in text and ":" not in text and "–" not in text and "-" not in text:
        return {}
    seen: dict[str, set[str]] = {}
    for m in _LEGEND_ITEM.finditer(text):
        abbr = m.group("abbr")
        if abbr.lower() in ("team", "a", "b", "score", "scores", "note"):
            continue
        name = m.group("name")
        if not CRIT_RE.fullmatch(name) or not _abbreviates(abbr, name):
            continue
        seen.setdefault(abbr, set()).add(crit_name(name))
    legend = {a: cs.pop() for a, cs in seen.items() if len(cs) == 1}
    return legend if len(set(legend.values())) >= 2 else {}


def with_legend(text: str) -> str:
    """`text` with each abbreviation its legend defines written as the criterion's own initials ("CON" as "C  ",
    padded: same length, so every offset holds), wherever it stands as a whole word in the same case. An
    abbreviation shorter than the initials, or the initials of another criterion, is left as it is."""
    legend = legend_of(text)
    swaps = {a: INITIALS_OF[c] for a, c in legend.items()
             if a != INITIALS_OF[c] and len(a) >= len(INITIALS_OF[c]) and a.upper() not in INITIALS}
    if not swaps:
        return text
    rx = re.compile(rf"(?<![A-Za-z0-9])(?:{'|'.join(map(re.escape, sorted(swaps, key=len, reverse=True)))})(?![A-Za-z0-9])")
    return rx.sub(lambda m: swaps[m.group(0)].ljust(len(m.group(0))), text)


INITIALS_OF = {c: i for i, c in INITIALS.items()}
