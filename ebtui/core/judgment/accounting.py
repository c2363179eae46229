"""Every number in a reply accounted for: a cell's value, a known non-score (with its reason), or unexplained.

An unexplained number in a line, sentence or table row that names a criterion or a team makes that cell (or
that team's cells) a conflict, unless it is a value read for a cell the same text names (see docs/JUDGMENT.md)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from ebtui.core.judgment.elision import elided_count
from ebtui.core.judgment.vocabulary import (
    COUNT_RULE,
    CRIT_RE,
    OPPONENT_RE,
    TRAILING_SCORE,
    WORD_VALUES,
    corrective,
    crit_name,
    other,
    scoring_word,
    skipped,
    team_of_match,
)
from ebtui.core.judgment.wordclass import (
    AUXILIARIES,
    FUNCTION_WORDS,
    RUBRIC_NOUNS,
    TOKEN,
    count_reason,
    participle,
    past_participle,
    pos_of,
)

_FRACTIONS = {"½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3}
#: every number: digits (with a decimal part, a half "7½", "7 1/2"), a fraction sign alone, a number word;
#: never digits inside a word or id ("gpt-4o", "claude-4.5", "v2") or after another number's separator
_AND_A_HALF = r"(?:[ \t]+and[ \t]+a[ \t]+half|-and-a-half)(?![\w\-])"
NUMBER_RE = re.compile(
    r"(?<![\w.\-/½¼¾⅓⅔])(?<!\d,)(?P<d>\d+(?:\.\d+)?)"
    rf"(?P<half>[ \t]*[½¼¾⅓⅔]|[ \t]+1/2(?![\d/])|(?i:{_AND_A_HALF}))?(?![\w½¼¾⅓⅔])(?!,\d{{3}})"
    r"|(?<![\w])(?P<f>[½¼¾⅓⅔])"
    rf"|(?i:(?<![\w\-])(?P<w>one|two|three|four|five|six|seven|eight|nine|ten)(?P<whalf>{_AND_A_HALF})?(?![\w\-]))"
)

# English's closed word classes, each complete (these classes take no new words); every open-class word (noun,
#: numbers in brackets joined as a list: "(1) and (3)", "(2), (4)"
_BRACKETED_LIST_AFTER = re.compile(r"\)[ \t]*(?:,|and|or|&)[ \t]*\([ \t]*\d{1,2}[ \t]*\)")
_BRACKETED_LIST_BEFORE = re.compile(r"\([ \t]*\d{1,2}[ \t]*\)[ \t]*(?:,|and|or|&)[ \t]*\($")
#: "(2) of the presentation": what the numbered item belongs to (not "of 10": a scale)
_ITEM_OF = re.compile(r"(?i)\)[ \t]+of[ \t]+(?!\d|ten\b)[A-Za-z\"“']")
_CLAUSE_STOP = re.compile(r"[.;:!?—–()]")
_ITEM_MARK = re.compile(r"(?i)(?:#|no\.?[ \t]*|number[ \t]+)$")


@dataclass
class Number:
    start: int
    end: int
    shown: str
    value: float | None
    reason: str | None = None  # why it is not a score; None: unexplained


_PERCENT = re.compile(r"[ \t]*(?:%|per[ \t]?cent)", re.IGNORECASE)
_OUT_OF = re.compile(r"[ \t]*(?:/|(?:out[ \t]+)?of[ \t]+(?:the[ \t]+)?|in[ \t]+)(?P<m>\d+|ten|five)(?![\d.])", re.IGNORECASE)
_SCALE_BEFORE = re.compile(r"(?i)(?:/|out[ \t]+of|\bmax(?:imum)?(?:[ \t]+of)?|\bscale[ \t]+of|(?<![\w.])[01][ \t]*(?:to|[-–]))[ \t]*$")
_SCALE_AFTER = re.compile(r"(?i)[ \t]*(?:[-–][ \t]*point|[-–]?[ \t]*(?:pt|point)[ \t]+scale|scale)(?![a-z])")
_RANGE_AFTER = re.compile(r"[ \t]*(?:[-–]|to)[ \t]*(?P<hi>\d+|ten)(?![\d.])", re.IGNORECASE)
_LIST_START = re.compile(r"[ \t]*(?:[>*•\-+#][ \t]*)*(?:\*\*|__)?[(\[]?$")
_ENUM_AFTER = re.compile(r"(?:[.)\]]|:(?![ \t]*\d))[ \t]*(?:\*\*|__)?[ \t]*[A-Za-z\"“'*_(#]")
_STRUCK = re.compile(r"~~[^~\n]{0,200}~~")
_QUOTED = re.compile(r"\"[^\"\n]{2,400}\"|“[^”\n]{2,400}”")
_AGGREGATE_BEFORE = re.compile(r"(?i)\b(?:overall|total|average|mean|sum|aggregate|composite|combined|cumulative"
                               r"|weighted)\b[^\d\n.;]{0,24}$")
_TIME_OR_MONEY = re.compile(r"[$€£][ \t]*$")
_POSSESSIVE_BEFORE = re.compile(r"(?i)(?:['’]s|\btheir|\bits|\bvs\.?|\bversus|\bagainst)[ \t]*$")
#: where a number word can stand as a score: after a label's colon or dash, "a", "an", a verb of scoring
_WORD_SCORE_PLACE = re.compile(
    r"(?i)(?:[:=\-–—]|\b(?:a|an|of|at|is|gets?|got|give[sn]?|gave|earns?|earned|scored?|deserves?|rated?|merits?"
    r"|receives?|received|awarded?))[ \t*_]*$")
#: a number word as a clause of its own ("…; six.", ": eight"), after an article and adjectives ("a strong
#: nine"), or given for a team ("six for Team B", "Nine for Team A")
_CLAUSE_BEFORE = re.compile(r"(?:^|[;:,.—–(])[ \t*_]*$")
_CLAUSE_AFTER = re.compile(r"[ \t*_]*(?:[.;!)]|$)")
_ARTICLE_ADJS = re.compile(r"(?i)(?<![a-z])an?[ \t]+((?:[a-z]+[ \t]+){1,2})$")
_FOR_TEAM = re.compile(r"(?i)[ \t]+for[ \t]+(?:team[ \t]*(?:[ab12]|one|two)|(?-i:[AB]))(?![a-z0-9])")


def _word_in_score_place(line: str, a: int, b: int) -> bool:
    """Whether a number word stands where a score stands: after a label, "a", a verb of scoring, or "out of
    10" after it; a clause of its own; "a" and adjectives before it; or given for a team."""
    lead = line[max(0, a - 30):a]
    if _WORD_SCORE_PLACE.search(lead) or re.match(r"(?i)[ \t]*(?:/|out[ \t]+of)", line[b:]) or _FOR_TEAM.match(line, b):
        return True
    if _CLAUSE_BEFORE.search(line, max(0, a - 4), a) and _CLAUSE_AFTER.match(line, b):
        return True
    adjs = _ARTICLE_ADJS.search(lead)
    # (after an adjective "one" is the prop-word pronoun: "a new one")
    return bool(adjs and _CLAUSE_AFTER.match(line, b) and line[a:b].lower() != "one"
                and all("ADJ" in pos_of(w) or "ADV" in pos_of(w) for w in adjs.group(1).split()))


#: a month's name or its abbreviation before a day ("June 3", "Sept. 9"; not "deceased 1")
_MONTHS = re.compile(r"(?i)\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
                     r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?[ \t]*$")


def numbers_in(line: str) -> list[Number]:
    """Every number in `line`, each with the reason it is not a score, or None where nothing explains it."""
    if not NUMBER_RE.search(line):
        return []  # (most lines: nothing to account for)
    quoted = [(q.start(), q.end()) for q in _QUOTED.finditer(line) if len(re.findall(r"[A-Za-z]+", q.group(0))) >= 2]
    quoted += [(q.start(), q.end()) for q in _STRUCK.finditer(line)]  # struck out
    quoted.sort()
    found: list[Number] = []
    counted_before = False
    for m in NUMBER_RE.finditer(line):
        if m.group("w"):
            shown, value = m.group(0), float(WORD_VALUES[m.group("w").lower()]) + (0.5 if m.group("whalf") else 0.0)
        elif m.group("f"):
            shown, value = m.group("f"), _FRACTIONS[m.group("f")]
        else:
            shown = m.group(0)
            value = float(m.group("d"))
            half = (m.group("half") or "").strip()
            value += _FRACTIONS.get(half, 0.5 if half else 0.0)  # "1/2", "and a half"
        num = Number(m.start(), m.end(), shown.strip(), value)
        num.reason = "in a quoted passage" if _inside(quoted, m.start(), m.end()) else \
            _reason(line, m, num, counted_before, found)
        if num.reason and num.reason.startswith("a count"):
            counted_before = True
        found.append(num)
    return found


@lru_cache(maxsize=64)
def _names_criterion(line: str) -> bool:
    return bool(CRIT_RE.search(line))


def _inside(spans: list[tuple[int, int]], a: int, b: int) -> bool:
    """Whether [a, b) lies inside one of `spans` (sorted by start, not overlapping)."""
    k = bisect_right(spans, (a, len(spans) and 1 << 62)) - 1
    return k >= 0 and spans[k][0] <= a and b <= spans[k][1]


def _reason(line: str, m: re.Match[str], num: Number, counted_before: bool, before_nums: list[Number]) -> str | None:
    a, b = m.start(), m.end()
    n = num.value
    lead = line[max(0, a - 30):a]
    if m.group("w") and not m.group("whalf") and not _word_in_score_place(line, a, b):
        return "a number word in running text, not in a score's place"
    if _PERCENT.match(line, b):
        return "a percentage"
    if re.search(r"[+−±][ \t]?$", lead):
        return "a signed number (a difference or a change, never a score)"  # "+2", "−1" in a delta column
    if re.match(r":\d{2}", line[b:b + 3]) or re.search(r"\d:$", lead) or _TIME_OR_MONEY.search(lead):
        return "a time or an amount"
    if m.group("d") and len(m.group("d")) == 4 and 1800 <= int(float(m.group("d"))) <= 2100:
        return "a year"
    if _MONTHS.search(lead) and n is not None and n == int(n):
        return "a date"
    if n is not None and (n > 10 or n < 1) and not m.group("f"):
        return "not on the 1-10 scale"
    if (n == 10 or (m.group("w") or "").lower() == "ten") and (_SCALE_BEFORE.search(lead) or _SCALE_AFTER.match(line, b)):
        return "the scale's maximum"
    rng = _RANGE_AFTER.match(line, b)
    if rng and n in (0, 1) and rng.group("hi").lower() in ("10", "ten"):
        return "the scale (1-10)"
    if _SCALE_AFTER.match(line, b):
        return "the scale"
    if re.search(r"(?i)(?:\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten))[ \t]*(?:/|(?:out[ \t]+)?of(?:[ \t]+the)?)[ \t]*$",
                 lead):
        return "a ratio's denominator"
    out = _OUT_OF.match(line, b)
    if out:
        den = out.group("m").lower()
        if den not in ("10", "ten"):
            return f"a ratio ({num.shown} of {den})"
        if count_reason(line, out.end(), float(10)):
            return "a count out of ten (a noun phrase follows)"
    if a <= 40 and _LIST_START.fullmatch(line, 0, a) and _ENUM_AFTER.match(line, b) and not m.group("w"):
        return "a list number"
    if (line[a - 1:a] == "(" and line[b:b + 1] == ")" or line[b:b + 1] == ")") and re.match(r"\)[ \t]+[A-Za-z\"“]", line[b:]):
        if n == 1 or re.search(rf"\(?{int(n or 0) - 1}\)", line[max(0, a - 400):a]):
            return "a list enumerator"
    if line[a - 1:a] == "(" and line[b:b + 1] == ")" and not m.group("w"):
        if _BRACKETED_LIST_AFTER.match(line, b) or _BRACKETED_LIST_BEFORE.search(line, max(0, a - 24), a):
            return "items referred to by their numbers"  # "(1) and (3)": a list of items, never one score
        noun = re.search(r"([A-Za-z]+)[ \t]*\($", lead)
        if noun and _ITEM_OF.match(line, b) and not CRIT_RE.fullmatch(noun.group(1)) and "NOUN" in pos_of(noun.group(1)):
            return f"an item's number ({noun.group(1)} ({num.shown}) of …)"  # "in point (2) of the presentation"
    prev = re.search(r"([A-Za-z][A-Za-z'’\-]*)[ \t]*(?:#|no\.?[ \t]*)?$", lead)
    if prev and corrective(line, a):
        prev = None  # "on reflection 6": a correction's value, never an item's number
    if prev and not m.group("w") and not re.match(r"[ \t]*(?:/|out[ \t]+of)", line[b:]):
        w = prev.group(1).lower()
        if (_ITEM_MARK.search(lead) or w in RUBRIC_NOUNS or (not scoring_word(w) and not CRIT_RE.fullmatch(prev.group(1))
                                        and (pos_of(w).get("NOUN") == (w,) or (not pos_of(w) and w not in FUNCTION_WORDS
                                                                                and len(w) > 2))
                                        and "ADJ" not in pos_of(w) and not w.endswith("s"))):
            return f"an item's number ({prev.group(1)} {num.shown})"
    if before_nums and (before_nums[-1].reason or "").startswith("an item's number") and re.fullmatch(
            r"[ \t]*(?:,|and|or|&|to|then|,[ \t]*then|,[ \t]*and)[ \t]*", line[before_nums[-1].end:a]):
        return "an item's number (continuing a list of items)"  # "option 1, then 2", "cases 2 and 3"
    changed = re.search(r"([A-Za-z][A-Za-z'’]*)[ \t]+from[ \t]+(?:\d+[ \t]+(?:to|down[ \t]+to|up[ \t]+to)[ \t]+)?$", lead)
    if changed and not scoring_word(changed.group(1)) and not CRIT_RE.search(line, max(0, a - 60), a) \
            and "NOUN" in pos_of(changed.group(1)) and not changed.group(1)[0].isupper():
        return f"a change of their {changed.group(1)}, not of a score"  # "changed its answer from 2 to 1"
    if re.search(r"(?i)\bbetween[ \t]+(?:\d+(?:\.\d+)?[ \t]+and[ \t]+)?$", lead):
        return "a range (between two numbers), not one score"
    rng_end = re.match(r"[ \t]*[-–][ \t]*\d+(?![\d.])", line[b:])
    if rng_end and count_reason(line, b + rng_end.end(), 2.0):
        return "a range before a noun (a 2-3 week delay)"
    if re.match(r"-[A-Za-z]", line[b:b + 2]):
        return "part of a compound word"  # "a 2-part test", "a 3-step plan"
    why = count_reason(line, b, n)
    if why:
        return why
    last = before_nums[-1] if before_nums else None
    if last is not None and (last.reason or "").startswith("a count") and not _CLAUSE_STOP.search(line, last.end, a) \
            and all(not line[last.end:c.start()].strip() for c in CRIT_RE.finditer(line, last.end, a)) \
            and (t := TOKEN.match(line, b)) and t.group(1).lower() not in AUXILIARIES \
            and (participle(t.group(1)) or past_participle(t.group(1))):  # (not "6 would be fair": a modal)
        return "a count of the same thing, its noun left out"  # "2 principles named, 1 defended"
    if re.search(r"(?i)\b(?:the|these|those|its|their|his|her|our|all|both|other|first|last)[ \t]+$", lead) and \
            (t := TOKEN.match(line, b)) and "NOUN" in pos_of(t.group(1)):
        return f"a count of {t.group(1)} (after a determiner)"  # "the 3 groups that bear the cost"
    if skipped(line, a, b):
        return "negated, asked, an anchor or a difference"
    if counted_before and _POSSESSIVE_BEFORE.search(lead) and re.match(r"[ \t]*(?:[.,;:)!?]|$)", line[b:]):
        return "a count of the same thing again"
    if _AGGREGATE_BEFORE.search(lead) and not _names_criterion(line):
        return "an overall or total"
    return elided_count(line, a, b, n, None if last is None else (last.start, last.end, last.reason))


# --------------------------------------------------------------------------------------------------------
# Which cells a line names, and the loose numbers in it
# --------------------------------------------------------------------------------------------------------

_BARE_TEAM = re.compile(r"(?<![\w'’])([AB])(?:['’]s(?![a-z])|(?=[ \t]*[:=]|[ \t]*\((?:present|respond)))")
_BARE_BEFORE_NUMBER = re.compile(r"(?<![\w'’])([AB])[ \t]+(?=\d)")
_THIRD = re.compile(
    r"(?i)(?<![a-z0-9])team(?:[ \t_-]+(?:[c-z]|three|four)|[ \t_-]*[03-9])(?![a-z0-9])"
    r"|(?<![a-z])(?:previous|another|third|earlier|prior|hypothetical|last|former|past|fictional)"
    r"[ \t]+(?:team|side|group|round)s?(?![a-z])")
SENTENCE = re.compile(r"[^.!?;]+(?:[.!?;](?=\d)[^.!?;]*)*[.!?;]?")


#: what ties a number to the criterion right after it: "6 for consistency", "8/10 on the principle"
_ATTACHED = re.compile(r"(?i)[ \t]*(?:/[ \t]*10)?[ \t]*(?:points?[ \t]+)?(?:for|on|in)[ \t]+(?:the[ \t]+|their[ \t]+|its[ \t]+)?")
#: a reference to another cell's value: the number is tied to that cell's name by "the same N as X", "N, like
#: X", "N to match X", "matching X (N)", "equal to X's N" — nothing else makes a number another cell's value
_REF_AFTER = re.compile(r"(?i)[ \t]*(?:/[ \t]*10)?[ \t]*,?[ \t]*(?:(?:just|exactly)[ \t]+)?(?P<same>(?:the[ \t]+)?same[ \t]+)?"
                        r"(?P<link>as|like|to[ \t]+match|matching|equal(?:ling)?(?:[ \t]+to)?)[ \t]+"
                        r"(?:(?:their|its|his|her|the|team[ \t]+[ab12]['’]s|[ab]['’]s)[ \t]+)?$")
_REF_BEFORE_HEAD = re.compile(r"(?i)(?<![a-z])(?:same[ \t]+as|matching|match|equal(?:ling)?(?:[ \t]+to)?|as|like)[ \t]+"
                              r"(?:(?:their|its|his|her|the|team[ \t]+[ab12]['’]s|[ab]['’]s)[ \t]+)?$")
_REF_BEFORE_TAIL = re.compile(r"(?i)(?:['’]s)?[ \t]*(?:(?:score|rating|mark|grade)[ \t]*)?(?:[(:][ \t]*|of[ \t]+)?(?:an?[ \t]+)?")


_FOR_TEAM_AFTER = re.compile(r"(?i)[ \t]*(?:/[ \t]*10)?[ \t]*(?:points?[ \t]+)?for[ \t]+")
_OWNER = re.compile(r"(?:['’]s)?(?<=['’]s)(?![a-z])[ \t]*(?:own[ \t]+)?")


@dataclass
class Loose:
    """An unexplained number: its value, the text it stands in, the cells it makes a conflict (`targets`), the
    cells the text names (`named`), the cells it is attached to (`own`: a value read for one of them explains
    it, the score restated) and the cells it refers to (`refers`: "the same 8 as their consistency")."""

    shown: str
    value: float | None
    text: str
    pos: int
    targets: list[tuple[str, str]]
    named: list[tuple[str, str]]
    own: list[list[tuple[str, str]]] = field(default_factory=list)  # any one group, each of its cells
    refers: list[tuple[str, str]] = field(default_factory=list)


def team_marks(line: str, rx: re.Pattern[str], section: str | None) -> list[tuple[int, str]]:
    """Where `line` names a team, and which: by name, bare letter, or as the section team's opponent."""
    marks = [(m.start(), team_of_match(m)) for m in rx.finditer(line)]
    marks += [(m.start(), m.group(1).lower()) for m in _BARE_TEAM.finditer(line)]
    bare = [(m.start(), m.group(1).lower()) for m in _BARE_BEFORE_NUMBER.finditer(line)]
    if {t for _, t in bare} == {"a", "b"}:
        marks += bare  # "Consistency: A 8, B 6"
    if section in ("a", "b"):
        names = [(c.start(), c.end()) for c in CRIT_RE.finditer(line)]  # "Engaging constructively with the other side"
        marks += [(m.start(), other(section)) for m in OPPONENT_RE.finditer(line) if not _inside(names, m.start(), m.end())]
    return sorted(marks)


def crit_marks(line: str) -> list[tuple[int, str]]:
    """Where `line` names a criterion as a label (not what a number counts: "3 stakeholders"), and which."""
    out = []
    for m in CRIT_RE.finditer(line):
        if re.search(r"\d[ \t]*$", line[max(0, m.start() - 8):m.start()]):
            continue  # "3 stakeholders": what is counted, not the criterion's label
        out.append((m.start(), crit_name(m.group(0))))
    return out


_LONG_LINE = 2000  # characters (see loose_numbers)


def loose_numbers(line: str, pos: int, rx: re.Pattern[str], team: str | None, crit: str | None,
                  crits_all: tuple[str, ...]) -> list[Loose]:
    """The unexplained numbers of one line (or table row) at offset `pos`, read under the section's `team`
    and the heading's `crit`, each with the cells it concerns."""
    tmarks: list[tuple[int, str]] | None = None
    cmarks: list[tuple[int, str]] | None = None
    if len(line) > _LONG_LINE:
        # the cells first, on a long line: where it names none, under no heading's or section's, none of its
        # numbers is a cell's, and accounting for each (~90 us a number) is skipped; on a short line the numbers
        # first (most lines have none left unexplained); the result is the same either way
        tmarks, cmarks = team_marks(line, rx, team), crit_marks(line)
        if not tmarks and not cmarks and crit is None and team not in ("a", "b"):
            return []
    names = [(m.start(), m.end()) for m in rx.finditer(line)]  # "Team 1", a model id: names, not numbers
    nums = [n for n in numbers_in(line) if n.reason is None and not _inside(names, n.start, n.end)]
    if not nums:
        return []
    if tmarks is None or cmarks is None:
        tmarks, cmarks = team_marks(line, rx, team), crit_marks(line)
    if not tmarks and re.match(r"[ \t]*#{1,6}[ \t]", line) and len(numbers_in(line)) >= 2:
        return []  # "### Consistency (1 = contradictory, 5 fair, 10 = coherent)": a heading states the rubric
    trail = TRAILING_SCORE.search(line, max(0, len(line) - 80))
    if trail is not None and cmarks and cmarks[0][0] < trail.start():
        # "- Consistency: 2 points of tension left open; overall 6": a line that ends on its score, set off after
        # a phrase; a number that opens a phrase of its own before it (no criterion between) is a quantity
        last_crit = max(p for p, _ in cmarks if p < trail.start())
        nums = [n for n in nums if not (last_crit < n.start < trail.start("num")
                                        and re.match(r"[ \t]*(?:/[ \t]*10)?[ \t]+[A-Za-z]", line[n.end:]))]
        if not nums:
            return []
    tpos = [p for p, _ in tmarks]
    # a team named as the owner of a thing that is no criterion ("Team A's harm principle", not "A's consistency")
    owners = {m.start() for m in [*rx.finditer(line), *_BARE_TEAM.finditer(line)]
              if (o := _OWNER.match(line, m.end())) and not CRIT_RE.match(line, o.end())}
    cpos = [p for p, _ in cmarks]
    sentences = [(sm.start(), sm.end()) for sm in SENTENCE.finditer(line)]
    starts = [a for a, _ in sentences]
    first_crit = cmarks[0][1] if cmarks else None
    third: dict[int, bool] = {}
    out = []
    for n in nums:
        k = bisect_right(starts, n.start) - 1
        if k < 0:
            continue
        s0, s1 = sentences[k]
        if k not in third:
            third[k] = bool(_THIRD.search(line, s0, s1))
        if third[k]:
            continue  # a third party's numbers are its own
        ti, ci = bisect_left(tpos, n.start), bisect_left(cpos, n.start)
        ts0, ts1 = bisect_left(tpos, s0), bisect_left(tpos, s1)
        cs0, cs1 = bisect_left(cpos, s0), bisect_left(cpos, s1)
        # the team the sentence names before the number: not one named only as an owner ("Team A built on Team
        # B's point — an eight"), unless no other is named: then the owner, and the section's team ("of Team B's
        # objections, it deserves 4" under Team A's heading may be either's)
        t_before = next(([t] for p, t in reversed(tmarks[ts0:ti]) if p not in owners),
                        list(dict.fromkeys([tmarks[ti - 1][1], *([team] if team in ("a", "b") else [])]))
                        if ti > ts0 else [])
        # the team the line was about before this sentence: in a team's section, not one named only as an owner
        # ("… contrasts it with Team A's harm principle. Score: 7" under Team B's heading is Team B's 7)
        t_line = next(([t] for p, t in reversed(tmarks[:min(ti, ts0)]) if p not in owners),
                      [])
        t_after = [tmarks[ti][1]] if ti < ts1 and tpos[ti] > n.start else []
        c_before = [cmarks[ci - 1][1]] if ci > cs0 else []
        loose_link = ci - cs0 >= 2 and not _tight(line, cpos[ci - 1], n.start)
        if loose_link:
            # "X, as with Y, sits at 6": the criterion nearest before is no label of the number; every
            # criterion named before it in the sentence may be its cell (and restates it only if all have it)
            c_before = list(dict.fromkeys(c for _, c in cmarks[cs0:ci]))
        c_after = [cmarks[ci][1]] if ci < cs1 and cpos[ci] > n.start else []
        head_crit = crit
        line_crit = [first_crit] if first_crit is not None and cs0 > 0 else []
        attached = _ATTACHED.match(line, n.end)
        if attached and c_after and cpos[ci] == attached.end():
            c_before, head_crit, line_crit = [], None, []  # "the 6 for consistency": the criterion after owns it
        # a criterion named after the number may own it ("8 for consistency") or be a word of its reason
        # ("7/10 - a clear principle"): both are its cells
        c_own = c_before or ([head_crit] if head_crit else []) or line_crit
        crit_here = list(dict.fromkeys(c_own + c_after))
        section = [team] if team in ("a", "b") else []
        # a team named after the number may own it ("a 6 for Team B") or be what the sentence is about
        # ("built on A's view"): both are its cells
        t_own = t_before or t_line or section
        if t_after and _FOR_TEAM_AFTER.fullmatch(line, n.end, tpos[ti]):
            t_own = t_after  # "Nine for Team A", "a 6 for Team B": the team it is given for

        teams_here = list(dict.fromkeys(t_own + t_after))
        if not crit_here and not teams_here:
            continue
        if not crit_here and ts1 == ts0:
            continue  # a section's sentence that names neither: not a cell's
        t_list = teams_here or ["a", "b"]
        c_list = crit_here or list(crits_all)
        named_t = {t for _, t in tmarks[ts0:ts1]} | set(t_list)
        named_c = {c for _, c in cmarks[cs0:cs1]} | set(c_list)
        # the cells the number is attached to: the criterion and team before it (or the heading's, the section's),
        # else the ones after it; a value read for one of them is this number restated
        own_t = t_own or t_after or ["a", "b"]
        own_c = c_own or c_after or list(crits_all)
        refers = [(t, c) for t in own_t for c in _referred(line, n, s0, s1, cmarks)]
        out.append(Loose(n.shown, n.value, line[s0:s1].strip(), pos + s0,
                         [(t, c) for t in t_list for c in c_list],
                         [(t, c) for t in sorted(named_t) for c in sorted(named_c)],
                         [[(t, c) for c in own_c] for t in own_t] if loose_link and c_own else
                         [[(t, c)] for t in own_t for c in own_c], refers))
    return out


_LOOSE_LINK = re.compile(r"[,;(\[]|(?:[A-Za-z'’]+[^A-Za-z'’]+){6}")


def _tight(line: str, crit_at: int, num_at: int) -> bool:
    """Whether the number follows the criterion named at `crit_at` as its label's value or a short clause's
    ("Consistency: 8", "consistency deserves a 7"), not after an aside or a long stretch."""
    m = CRIT_RE.match(line, crit_at)
    return not _LOOSE_LINK.search(line, m.end() if m else crit_at, num_at)


def _referred(line: str, n: Number, s0: int, s1: int, cmarks: list[tuple[int, str]]) -> list[str]:
    """The criteria whose value the number refers to: tied to that criterion's name by a reference structure
    ("the same 8 as their consistency", "matching their consistency score (8)"), in the same sentence."""
    out = []
    for at, crit in cmarks:
        if not s0 <= at < s1:
            continue
        ref = _REF_AFTER.fullmatch(line, n.end, at) if at >= n.end else None
        if ref is not None and (ref.group("link").lower() != "as" or ref.group("same")
                                or re.search(r"(?i)\bsame[ \t]+$", line[max(s0, n.start - 12):n.start])):
            out.append(crit)  # "the same 8 as consistency", "8, like consistency", "8 to match consistency"
        elif at < n.start:
            m = CRIT_RE.match(line, at)
            if m and _REF_BEFORE_TAIL.fullmatch(line, m.end(), n.start) and _REF_BEFORE_HEAD.search(line, max(s0, at - 40), at):
                out.append(crit)  # "matching their consistency score (8)", "equal to consistency's 8"
    return out


COUNT_RULE.append(count_reason)  # the readers skip a count as this module tells one (see vocabulary.skipped)
