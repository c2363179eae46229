"""Every number in a reply accounted for: a cell's value, a known non-score (with its reason), or unexplained.

An unexplained number in a line, sentence or table row that names a criterion or a team makes that cell (or
that team's cells) a conflict, unless it is a value read for a cell the same text names (see docs/JUDGMENT.md)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from ebtui.core.judgment.vocabulary import (
    COUNT_RULE,
    CRIT_RE,
    OPPONENT_RE,
    TRAILING_SCORE,
    crit_name,
    other,
    scoring_word,
    skipped,
    team_of_match,
)
from ebtui.core.records import CRITERION_LABELS

_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10}
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
# verb, adjective, adverb) is classed by lemminflect's lexicon instead (see _pos), never by a list
_DETERMINERS = frozenset("a an the this that these those each every all both some any no another either neither"
                         .split())
_POSSESSIVES = frozenset("my your his her its our their".split())
_SUBJECT_PRONOUNS = frozenset("i you he she it we they".split())
_OBJECT_PRONOUNS = frozenset("me you him her it us them".split())
_REFLEXIVES = frozenset("myself yourself himself herself itself ourselves yourselves themselves".split())
_PREPOSITIONS = frozenset("for of in on at to by with from as than into onto upon about over under after before "
                          "between among per via vs versus toward towards".split())
_PARTICLES = frozenset("out up down off".split())  # of phrasal verbs ("points out", "sums up")
_CONJUNCTIONS = frozenset("and or but nor so yet because since though although unless until once while if when "
                          "where which who what".split())
_AUXILIARIES = frozenset("am is are was were be been being has have had do does did would should could might may "
                         "must can will shall".split())
#: English's one past form that agrees with a plural subject ("3 were named"; "was" agrees with one): a class of one
_PLURAL_PAST = frozenset({"were"})
#: words no counted noun is: a number before one of them is not a count
_FUNCTION = (_DETERMINERS | _POSSESSIVES | _SUBJECT_PRONOUNS | _OBJECT_PRONOUNS | _PREPOSITIONS | _PARTICLES
             | _CONJUNCTIONS | _AUXILIARIES)
#: the rubric's own nouns (the words of its criteria's names, e.g. "stakeholder"): nouns where the lexicon lacks them
_RUBRIC_NOUNS = frozenset(w.lower() for label in CRITERION_LABELS.values() for w in label.split()) | {"criterion"}
#: the scale's unit: "8 points" is a score, "3 points of tension" or "3 points raised" a count
_UNITS = frozenset({"point", "points", "pts", "pt", "mark", "marks"})


def _adverb(word: str) -> bool:
    """A word the lexicon has as an adverb and never as a noun or verb ("here", "really", "overall")."""
    p = _pos(word)
    return "ADV" in p and not {"NOUN", "VERB"} & set(p)


def _takes_object(after: str | None) -> bool:
    """Whether `after` makes the word before it a verb with its object or particle: a determiner, possessive,
    object pronoun or reflexive, a particle, a preposition of direction ("8 suits them", "points to", "sums
    up the case"), or "well" ("8 reads well")."""
    return after is not None and (after in _DETERMINERS or after in _POSSESSIVES or after in _OBJECT_PRONOUNS
                                  or after in _REFLEXIVES or after in _PARTICLES
                                  or after in ("to", "at", "toward", "towards", "well"))


@lru_cache(maxsize=8192)
def _plural_verb(word: str) -> bool:
    """A verb agreeing with a plural subject only ("3 were named", "2 remain", "4 exist"): by lemminflect, a
    present form for plural subjects (VBP) of a word that is nothing but a verb, or "were"."""
    from lemminflect import getAllInflections, getAllLemmas  # type: ignore[import-untyped]

    low = word.lower()
    if low in _PLURAL_PAST:
        return True
    lemmas = getAllLemmas(low)
    if not lemmas or {"NOUN", "ADJ", "ADV"} & set(lemmas) or low in _FUNCTION - _AUXILIARIES:
        return False
    return any(low in getAllInflections(lemma).get("VBP", ()) and low not in getAllInflections(lemma).get("VBZ", ())
               for lemma in lemmas.get("VERB", ()) + lemmas.get("AUX", ()))


@lru_cache(maxsize=8192)
def _finite_verb(word: str) -> bool:
    """A verb in a past or present form with a subject ("mattered", "shows"): the start of a clause."""
    from lemminflect import getAllInflections, getAllLemmas

    low = word.lower()
    lemmas = getAllLemmas(low)
    return any(low in getAllInflections(lemma).get(tag, ()) for lemma in lemmas.get("VERB", ())
               for tag in ("VBD", "VBZ"))


#: numbers in brackets joined as a list: "(1) and (3)", "(2), (4)"
_BRACKETED_LIST_AFTER = re.compile(r"\)[ \t]*(?:,|and|or|&)[ \t]*\([ \t]*\d{1,2}[ \t]*\)")
_BRACKETED_LIST_BEFORE = re.compile(r"\([ \t]*\d{1,2}[ \t]*\)[ \t]*(?:,|and|or|&)[ \t]*\($")
#: "(2) of the presentation": what the numbered item belongs to (not "of 10": a scale)
_ITEM_OF = re.compile(r"(?i)\)[ \t]+of[ \t]+(?!\d|ten\b)[A-Za-z\"“']")
_CLAUSE_STOP = re.compile(r"[.;:!?—–()]")


@lru_cache(maxsize=8192)
def _participle(word: str) -> bool:
    """A verb's past or participle form and no noun ("defended", "used", "named"), by lemminflect."""
    from lemminflect import getAllInflections, getAllLemmas

    low = word.lower()
    lemmas = getAllLemmas(low)
    return "NOUN" not in lemmas and any(low in getAllInflections(lemma).get(tag, ()) for lemma in lemmas.get("VERB", ())
                                        for tag in ("VBN", "VBD"))


_ITEM_MARK = re.compile(r"(?i)(?:#|no\.?[ \t]*|number[ \t]+)$")
_TOKEN = re.compile(r"[ \t]*([A-Za-z][A-Za-z'’\-]*)")


@lru_cache(maxsize=8192)
def _pos(word: str) -> dict[str, tuple[str, ...]]:
    """The parts of speech a word can be (lemminflect's English lexicon), by the lemma for each."""
    from lemminflect import getAllLemmas  # (loads its lexicon: half a second)

    low = word.lower().replace("’", "'")
    if low in _FUNCTION:
        return {}
    found: dict[str, tuple[str, ...]] = dict(getAllLemmas(low))
    if not found and re.fullmatch(r"[a-z]{3,}", low):
        # a word the lexicon lacks: one of the rubric's nouns ("stakeholders") or a plural; never a verb it knows
        if _rubric_noun(low) or (low.endswith("s") and not low.endswith("ss")):
            found = {"NOUN": (low.rstrip("s"),)}
    return found


def _rubric_noun(low: str) -> bool:
    """One of the rubric's nouns, or its plural ("stakeholders", "criteria")."""
    from lemminflect import getAllLemmasOOV

    return low in _RUBRIC_NOUNS or any(lemma in _RUBRIC_NOUNS for lemma in getAllLemmasOOV(low, "NOUN").get("NOUN", ()))


@lru_cache(maxsize=8192)
def _plural_noun(low: str) -> bool:
    """A noun's plural form by lemminflect ("groups", "criteria", "people", "sheep"), or a plural the lexicon
    lacks ("stakeholders"); "total", "now", "team" are not."""
    from lemminflect import getAllInflections, getAllLemmas

    nouns = getAllLemmas(low).get("NOUN", ())
    if not nouns:
        return bool(_pos(low).get("NOUN")) and low.endswith("s") and not low.endswith("ss")
    return any(low in getAllInflections(lemma, upos="NOUN").get("NNS", ()) for lemma in nouns)


@lru_cache(maxsize=8192)
def _LEXICON_NOUNS(low: str) -> tuple[str, ...]:  # noqa: N802 - reads like the set it stands for
    """The word itself where it is known as a noun: by the lexicon, or a noun of the rubric ("stakeholders")."""
    from lemminflect import getAllLemmas

    known = "NOUN" in getAllLemmas(low) or _rubric_noun(low)
    return (low,) if known else ()


def _is_noun_head(word: str, after: str | None, n: float | None, after2: str | None = None,
                  placed: bool = True) -> bool | None:
    """True: a noun that heads the counted phrase; False: not a noun; None: a modifier (the head may follow).
    `after2`: the word after `after`; `placed`: whether the number stands where a score stands (after a
    label, an article, a verb of scoring: see _in_score_place)."""
    low = word.lower().replace("’", "'")
    if low.endswith(("'s", "s'")):
        return True  # "4 team members' worth", "3 families' needs": a possessive noun
    p = _pos(low)
    if not p:
        return False
    if "NOUN" in p and n == 1 and low.endswith("s") and low not in p["NOUN"] and ("VERB" in p or not _LEXICON_NOUNS(low)):
        return False  # "1 blarns them", "1 stands": a plural after one is no count (unless only a noun)
    if "NOUN" in p and _takes_object(after) and low not in _LEXICON_NOUNS(low):
        return False  # a word the lexicon lacks, before an object: a verb ("7 blarns them")
    after_noun = after is not None and "NOUN" in _pos(after.rstrip("'’"))  # ("members'": a plural's possessive)
    if "ADV" in p and "ADJ" not in p and not _plural_noun(low) and not after_noun:
        return False  # an adverb, not a counted thing: "8 overall", "1 here", "6 apiece", "7 now"
    if n is not None and n != 1 and "NOUN" in p and not _plural_noun(low):
        # after a number other than one a counted noun is plural: a singular noun can only modify the head that
        # follows ("4 team members"), and where none follows nothing is counted ("7 total")
        return None if after_noun else False
    if after in ("them", "him", "us", "me") or (n == 1 and after in _REFLEXIVES):
        return False  # no noun phrase goes on with an object-only pronoun: the word is a verb ("2 glands them",
        # "1 spelts themselves")
    if "NOUN" in p and "VERB" not in p:
        if ("ADJ" in p or "ADV" in p) and after is not None and _pos(after).get("NOUN"):
            return None  # "3 key stakeholders": a modifier before the noun
        return True
    if "NOUN" in p:  # a noun or a verb: "points", "concerns", "case", "team"
        verb_forms = p["VERB"]
        if after is not None and "NOUN" in _pos(after) and "VERB" not in _pos(after) and not _takes_object(after):
            return None  # "4 team members": a noun modifying the next one
        if low.endswith("s") and low not in verb_forms:
            # plural noun or singular verb ("3 concerns were raised" / "8 remains apt"): a plural only after a
            # number other than one, and where what follows is no verb's complement: the end of the phrase,
            # "of", or a verb ("were", "raised")
            if n is None or n == 1:
                return False
            if after is None or after == "of" or (after in _FUNCTION and not _takes_object(after)) or (
                    _adverb(after)):
                return True  # "3 premises and a conclusion", "2 gaps in the analysis"
            if after in _SUBJECT_PRONOUNS and after2 is not None and _finite_verb(after2):
                return True  # "3 reasons it mattered": a noun, then a clause about it
            if not placed:
                return True  # "covered 4 groups to Team A's 2": a number no score's place holds counts
            q = _pos(after)
            return bool(q) and "VERB" in q and not ({"ADJ", "ADV"} & set(q)) and not _takes_object(after)
        if low in verb_forms:
            return after is None or not _takes_object(after)  # base form: "1 case", "2 key" (not "8 suits")
        return False
    if "VERB" in p and low.endswith(("ed", "en", "ing")):
        return None  # "2 named frameworks", "3 competing principles"
    if "ADJ" in p:
        return None
    return False


#: where a number stands as a score would: after a label's separator, at the start of a line or list item, after
#: an article ("a 7"), a copula or preposition of value ("is 7", "at 7"), or a word of scoring ("scored 7",
#: "earns 7", "score 7": the rubric's vocabulary, by lemma)
_SCORE_PLACE = re.compile(r"(?:^|[:=→⇒|(\[]|[-–—][ \t]|\b(?:a|an|is|was|be|at|of|to|as))[ \t*_\"']*$", re.IGNORECASE)
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z'’]*)[ \t*_\"']*$")


def _in_score_place(line: str, start: int) -> bool:
    lead = line[max(0, start - 40):start]
    if _SCORE_PLACE.search(lead):
        return True
    w = _LAST_WORD.search(lead)
    return w is not None and scoring_word(w.group(1))


_NUMBER_BEFORE = re.compile(r"(?:\d+(?:\.\d+)?|[A-Za-z]+)[ \t]*[½¼¾⅓⅔]?$")


def count_reason(line: str, end: int, n: float | None) -> str | None:
    """Why the number ending at `end` is a count: a noun phrase follows it ("3 stakeholders", "2 named
    frameworks", "4 team members"), a plural verb ("3 were named"), or "of" and a group ("3 of the cases")."""
    words = []
    pos = end
    for _ in range(5):
        m = _TOKEN.match(line, pos)
        if not m:
            break
        words.append(m.group(1))
        pos = m.end()
        if pos < len(line) and line[pos] not in " \t'’-":
            break
    if not words:
        return None
    first = words[0].lower()
    if first in _UNITS:
        nxt = words[1].lower() if len(words) > 1 else None
        if nxt == "of" or (nxt is not None and nxt not in _FUNCTION and nxt not in _UNITS
                           and "VERB" in _pos(nxt) and nxt.endswith(("ed", "en"))):
            return f"a count of {words[0]}"  # "3 points of tension", "4 points raised"
        if n == 1 and first in ("point", "mark") and nxt not in ("out", "for", "on"):
            return f"a count of one {first}"  # "conceded 1 point"
        return None
    if n is not None and n != 1 and _plural_verb(first):
        return "a count (a plural verb follows it)"
    if first == "of" and len(words) > 1 and (words[1].lower() in _DETERMINERS | _POSSESSIVES or words[1] == "them"):
        return "a count (part of a group: \"3 of the cases\")"
    before = _NUMBER_BEFORE.search(line, max(0, end - 40), end)
    placed = _in_score_place(line, before.start()) if before else True
    for i, w in enumerate(words[:4]):
        after = words[i + 1] if i + 1 < len(words) else None
        after2 = words[i + 2].lower() if i + 2 < len(words) else None
        # a team's bare letter after the phrase is a name, not the article ("the 3 groups A missed")
        head = _is_noun_head(w, None if after in ("A", "B") else (after.lower() if after else None), n, after2,
                             placed)
        if head is True:
            return f"a count of {' '.join(words[:i + 1])}"
        if head is False:
            return None
    return None


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
_SCALE_AFTER = re.compile(r"(?i)[ \t]*(?:[-–][ \t]*point|[-–]?[ \t]*(?:pt|point)[ \t]+scale|scale)")
_RANGE_AFTER = re.compile(r"[ \t]*(?:[-–]|to)[ \t]*(?P<hi>\d+|ten)(?![\d.])", re.IGNORECASE)
_LIST_START = re.compile(r"[ \t]*(?:[>*•\-+#][ \t]*)*(?:\*\*|__)?[(\[]?$")
_ENUM_AFTER = re.compile(r"(?:[.)\]]|:(?![ \t]*\d))[ \t]*(?:\*\*|__)?[ \t]*[A-Za-z\"“'*_(#]")
_QUOTED = re.compile(r"\"[^\"\n]{2,400}\"|“[^”\n]{2,400}”")
_AGGREGATE_BEFORE = re.compile(r"(?i)\b(?:overall|total|average|mean|sum|aggregate|composite|combined|cumulative"
                               r"|weighted)\b[^\d\n.;]{0,24}$")
_TIME_OR_MONEY = re.compile(r"[$€£][ \t]*$")
_POSSESSIVE_BEFORE = re.compile(r"(?i)(?:['’]s|\btheir|\bits|\bvs\.?|\bversus|\bagainst)[ \t]*$")
#: where a number word can stand as a score: after a label's colon or dash, "a", "an", a verb of scoring
_WORD_SCORE_PLACE = re.compile(
    r"(?i)(?:[:=\-–—]|\b(?:a|an|of|at|is|gets?|got|give[sn]?|gave|earns?|earned|scored?|deserves?|rated?|merits?"
    r"|receives?|received|awarded?))[ \t*_]*$")
_MONTHS = re.compile(r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?[ \t]*$")


def numbers_in(line: str) -> list[Number]:
    """Every number in `line`, each with the reason it is not a score, or None where nothing explains it."""
    quoted = [(q.start(), q.end()) for q in _QUOTED.finditer(line) if len(re.findall(r"[A-Za-z]+", q.group(0))) >= 2]
    quoted += [(q.start(), q.end()) for q in re.finditer(r"~~[^~\n]{0,200}~~", line)]  # struck out
    quoted.sort()
    found: list[Number] = []
    counted_before = False
    for m in NUMBER_RE.finditer(line):
        if m.group("w"):
            shown, value = m.group(0), float(_WORD_NUMBERS[m.group("w").lower()]) + (0.5 if m.group("whalf") else 0.0)
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
    if m.group("w") and not m.group("whalf") and not _WORD_SCORE_PLACE.search(lead) \
            and not re.match(r"(?i)[ \t]*(?:/|out[ \t]+of)", line[b:]):
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
        if noun and _ITEM_OF.match(line, b) and not CRIT_RE.fullmatch(noun.group(1)) and "NOUN" in _pos(noun.group(1)):
            return f"an item's number ({noun.group(1)} ({num.shown}) of …)"  # "in point (2) of the presentation"
    prev = re.search(r"([A-Za-z][A-Za-z'’\-]*)[ \t]*(?:#|no\.?[ \t]*)?$", lead)
    if prev and not m.group("w") and not re.match(r"[ \t]*(?:/|out[ \t]+of)", line[b:]):
        w = prev.group(1).lower()
        if (_ITEM_MARK.search(lead) or w in _RUBRIC_NOUNS or (not scoring_word(w) and not CRIT_RE.fullmatch(prev.group(1))
                                        and (_pos(w).get("NOUN") == (w,) or (not _pos(w) and w not in _FUNCTION
                                                                                and len(w) > 2))
                                        and "ADJ" not in _pos(w) and not w.endswith("s"))):
            return f"an item's number ({prev.group(1)} {num.shown})"
    if before_nums and (before_nums[-1].reason or "").startswith("an item's number") and re.fullmatch(
            r"[ \t]*(?:,|and|or|&|to|then|,[ \t]*then|,[ \t]*and)[ \t]*", line[before_nums[-1].end:a]):
        return "an item's number (continuing a list of items)"  # "option 1, then 2", "cases 2 and 3"
    changed = re.search(r"([A-Za-z][A-Za-z'’]*)[ \t]+from[ \t]+(?:\d+[ \t]+(?:to|down[ \t]+to|up[ \t]+to)[ \t]+)?$", lead)
    if changed and not scoring_word(changed.group(1)) and not CRIT_RE.search(line, max(0, a - 60), a) \
            and "NOUN" in _pos(changed.group(1)) and not changed.group(1)[0].isupper():
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
            and (t := _TOKEN.match(line, b)) and _participle(t.group(1)):
        return "a count of the same thing, its noun left out"  # "2 principles named, 1 defended"
    if re.search(r"(?i)\b(?:the|these|those|its|their|his|her|our|all|both|other|first|last)[ \t]+$", lead) and \
            (t := _TOKEN.match(line, b)) and "NOUN" in _pos(t.group(1)):
        return f"a count of {t.group(1)} (after a determiner)"  # "the 3 groups that bear the cost"
    if skipped(line, a, b):
        return "negated, asked, an anchor or a difference"
    if counted_before and _POSSESSIVE_BEFORE.search(lead) and re.match(r"[ \t]*(?:[.,;:)!?]|$)", line[b:]):
        return "a count of the same thing again"
    if _AGGREGATE_BEFORE.search(lead) and not _names_criterion(line):
        return "an overall or total"
    return None


# --------------------------------------------------------------------------------------------------------
# Which cells a line names, and the loose numbers in it
# --------------------------------------------------------------------------------------------------------

_BARE_TEAM = re.compile(r"(?<![\w'’])([AB])(?:['’]s(?![a-z])|(?=[ \t]*[:=]|[ \t]*\((?:present|respond)))")
_BARE_BEFORE_NUMBER = re.compile(r"(?<![\w'’])([AB])[ \t]+(?=\d)")
_THIRD = re.compile(
    r"(?i)(?<![a-z0-9])team[ \t_-]*(?:[c-z]|[03-9]|three|four)(?![a-z0-9])"
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
        t_before = [tmarks[ti - 1][1]] if ti > ts0 else []
        # the team the line was about before this sentence: in a team's section, not one named only as an owner
        # ("… contrasts it with Team A's harm principle. Score: 7" under Team B's heading is Team B's 7)
        t_line = next(([t] for p, t in reversed(tmarks[:min(ti, ts0)]) if team not in ("a", "b") or p not in owners),
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
