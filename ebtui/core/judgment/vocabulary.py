"""Vocabulary: criteria and teams as judges name them, and numbers: what may be a score."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

# --------------------------------------------------------------------------------------------------------
# Vocabulary: criteria and teams as judges actually name them
# --------------------------------------------------------------------------------------------------------

def words(*alternatives: str) -> re.Pattern[str]:
    """A case-blind pattern for any of `alternatives` (regex fragments) standing as a whole word."""
    return re.compile(rf"(?i)(?<![a-z])(?:{'|'.join(alternatives)})(?![a-z])")


_S = r"[\s_-]*"  # between words of a name: "principle articulation", "principle_articulation", "PrincipleArt…"
_S1 = r"[\s_-]+"
#: words a judge shortens, and how many letters an abbreviation keeps at least
_ABBREVIATED = (("principle", 5), ("consistency", 5), ("stakeholders", 5), ("uncertainty", 5), ("framework", 5),
                ("intellectual", 5), ("honesty", 4), ("constructive", 5), ("engagement", 5))


def _prefixes(word: str, keep: int) -> str:
    """A pattern for every start of `word` at least `keep` letters long ("consi", "consis", ... "consistency")."""
    tail = ""
    for ch in reversed(word[keep:]):
        tail = f"(?:{ch}{tail})?"
    return word[:keep] + tail


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
        rf"engag(?:e|es|ed|ing){_S1}constructively(?:{_S1}with{_S1}the{_S1}(?:other|opposing){_S1}(?:side|team))?",
        rf"(?:recognition|identification|consideration|mapping){_S1}of{_S1}(?:the{_S1}|all{_S1})?(?:affected|impacted)"
        rf"{_S1}(?:parties|groups|people)",
        r"engagement",
        # an abbreviation: the start of a criterion's word, with its dot ("Consist.", "Stakeh. recog.", "Intell. hon.")
        *(_prefixes(w, k) + r"\." for w, k in _ABBREVIATED),
    ]
)
# (the lookahead on first letters is only for speed: it lets the engine skip most positions cheaply)
CRIT_RE = re.compile(rf"(?i)(?<![a-z0-9])(?=[pacsuifmehr])(?:{_CRIT_ALTS})(?![a-z0-9])")
CRIT_KEYWORDS = (
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
    ("affected", "stakeholder_recognition"),
    ("impacted", "stakeholder_recognition"),
)


def crit_name(matched: str) -> str:
    low = matched.lower()
    for word, crit in CRIT_KEYWORDS:
        if word in low:
            return crit
    for word, crit in _ABBREVIATION_OF:
        if low.startswith(word):
            return crit
    raise AssertionError(matched)  # unreachable: every alternative holds a keyword or an abbreviation


_ABBREVIATION_OF = (("princ", "principle_articulation"), ("consi", "consistency"), ("stake", "stakeholder_recognition"),
                    ("uncer", "uncertainty_integration"), ("frame", "framework_awareness"),
                    ("intel", "intellectual_honesty"), ("hone", "intellectual_honesty"),
                    ("const", "constructive_engagement"), ("engag", "constructive_engagement"))


def crit_of(text: str) -> str | None:
    """The criterion a key or cell names (the first one, if it names several)."""
    m = CRIT_RE.search(text)
    return crit_name(m.group(0)) if m else None


#: the rubric's own words for a score and for giving one, by lemma (so every form counts: "scores", "rated",
#: "marks", "earned"): a number after one is in a score's place ("score 8", "earns 7"), never an item's number
SCORE_LEMMAS = frozenset({"score", "rate", "rating", "grade", "mark", "point", "pts", "total", "overall", "average",
                          "mean", "tally", "verdict", "result", "value", "level", "get", "earn", "deserve", "merit",
                          "receive", "give", "award", "assign"})


@lru_cache(maxsize=4096)
def scoring_word(word: str) -> bool:
    """Whether `word` is a form of one of the rubric's score words (SCORE_LEMMAS), by lemminflect's lemmas."""
    from lemminflect import getAllLemmas  # type: ignore[import-untyped]

    low = word.lower()
    return low in SCORE_LEMMAS or any(lemma in SCORE_LEMMAS for lemmas in getAllLemmas(low).values()
                                      for lemma in lemmas)


TEAM_LABEL = {"a": "A", "b": "B"}
# a role names a team as a noun ("the presenting team", "Presenter") or as a bracketed note ("(presenting)")
_ROLE_A = rf"present(?:ing|er|ers|ation){_S1}(?:team|side)|presenters?"
_ROLE_B = rf"respon(?:ding|dent|der|se){_S1}(?:team|side)|respondents?|responders?"


@lru_cache(maxsize=64)
def team_regex(a_id: str, b_id: str) -> re.Pattern[str]:
    # the two teams of a round, however a judge numbers them: Team A / B, Team 1 / 2, Team One / Two
    alts = [rf"(?P<ta>team{_S}(?:a|1|one))", rf"(?P<tb>team{_S}(?:b|2|two))", rf"(?P<ra>{_ROLE_A})",
            rf"(?P<rb>{_ROLE_B})",
            # a bracketed role beside a name ("A (presenting)", "openai/lumen-4 (responding)") labels it
            r"(?<=\()(?P<pa>presenting)(?=[ \t]*\))", r"(?<=\()(?P<pb>responding)(?=[ \t]*\))"]
    # ids only tell the teams apart when they differ (a model debating itself has one id twice)
    if a_id and b_id and a_id.lower() != b_id.lower():
        ids = [("ia", a_id), ("ib", b_id)]
        ids.sort(key=lambda p: -len(p[1]))  # longest first, so one id containing the other matches whole
        # (a provider's prefix may stand before the id: "openai/lumen-4")
        alts = [rf"(?<![\w.-])(?P<{g}>{re.escape(i)})(?![\w-])" for g, i in ids] + alts
        loose = {g: _display_name(i) for g, i in ids}
        if len(set(loose.values())) == 2 and all(loose.values()):  # (one shared display name names neither)
            alts = [rf"(?<![\w.-])(?P<{g}n>{loose[g]})(?![a-z0-9]|[.\-_][a-z0-9])" for g, _ in ids] + alts
    first = "tpr" + "".join(i[0].lower() for i in (a_id, b_id) if i and a_id.lower() != b_id.lower())
    return re.compile(rf"(?i)(?<![a-z0-9])(?=[{re.escape(first)}])(?:{'|'.join(alts)})(?![a-z0-9])")


def _display_name(model_id: str) -> str:
    """A pattern for a model id as a judge writes its name: "claude-sonnet-4-5" as "Claude Sonnet 4.5",
    "gpt-5.2" as "GPT 5.2" or "gpt5.2": its letter and digit runs in order, any one of space, dash, dot or
    underscore between them (two digit runs need one: "4.5" is not "45"), a trailing date run optional."""
    toks = re.findall(r"[a-z]+|\d+", model_id.rsplit("/", 1)[-1].lower())
    if toks and len(toks) > 1 and re.fullmatch(r"\d{6,8}", toks[-1]):
        toks = toks[:-1]
    out = ""
    for prev, tok in zip([None, *toks], toks, strict=False):
        if prev is not None:
            out += r"[ \t_.\-]" if prev.isdigit() == tok.isdigit() else r"[ \t_.\-]?"
        out += re.escape(tok)
    return out


def team_of_match(m: re.Match[str]) -> str:
    return "a" if (m.lastgroup or "").rstrip("n").endswith("a") else "b"


def _teams_in(text: str, rx: re.Pattern[str]) -> set[str]:
    return {team_of_match(m) for m in rx.finditer(text)}


_BARE_RE = re.compile(r"[^A-Za-z0-9]*([ABab])(?![A-Za-z0-9])[^A-Za-z0-9(]*(?:\((?P<paren>[^()\n]{0,80})\))?[\W_]*")
_ROLE_A_RE = re.compile(rf"(?i)(?<![a-z]){_ROLE_A}|present(?:ing|er|s)(?![a-z])")
_ROLE_B_RE = re.compile(rf"(?i)(?<![a-z]){_ROLE_B}|respond(?:ing|s)(?![a-z])")


def bare_team(text: str) -> str | None:
    """"A", "**B**:", "(a)", "A (presenting)" — a team named by its bare letter, only where the whole cell, key
    or heading is that letter (with at most a parenthetical that does not contradict it)."""
    m = _BARE_RE.fullmatch(text.strip())
    if not m:
        return None
    team = m.group(1).lower()
    paren = m.group("paren") or ""
    says_a, says_b = bool(_ROLE_A_RE.search(paren)), bool(_ROLE_B_RE.search(paren))
    if (team == "a" and says_b and not says_a) or (team == "b" and says_a and not says_b):
        return None  # "A (responding)": contradicts itself
    return team


#: the opponent of a team already named: "the other team", "the opposing team", "their opponents"
OPPONENT_RE = re.compile(
    r"(?i)(?<![a-z])(?:the[ \t]+)?(?:other|opposing|rival)[ \t]+(?:team|side)s?(?![a-z])|(?<![a-z])(?:their|its|the)"
    r"[ \t]+(?:opponents?|opposition)(?![a-z])"
)


def other(team: str) -> str:
    return "b" if team == "a" else "a"


def team_of(text: str, rx: re.Pattern[str]) -> str | None:
    teams = _teams_in(text, rx)
    if len(teams) == 1:
        return teams.pop()
    if not teams:
        return bare_team(text) or _role_cell(text)
    return None  # names both teams


_ROLE_CELL = re.compile(r"[^A-Za-z]*(?:(?P<a>presenting|presenter|presenters)|(?P<b>responding|respondent|responder))[^A-Za-z]*",
                        re.IGNORECASE)


def _role_cell(text: str) -> str | None:
    """A cell, key or heading that is a role and nothing else: "Presenting", "**Responding**"."""
    m = _ROLE_CELL.fullmatch(text.strip())
    return None if m is None else ("a" if m.group("a") else "b")


# --------------------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
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


def interpret(v: Val) -> tuple[int | None, str | None]:
    """(score, None) or (None, why it is not one)."""
    if v.upper is not None:
        return None, f"{v.shown()} is a range, not one score"
    if v.den is not None and v.den not in ("10", "10.0"):
        return None, f"{v.shown()} is not on the 1-10 scale"
    if re.fullmatch(rf"\d+(?:\.\d+)?{HALF}", v.num):
        return None, f"{v.num} is not a whole number"  # a half point is never rounded
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
#: a half (or another fraction) after a whole number: "7½", "7 ½", "7 1/2", "7 and a half", "7-and-a-half"
HALF = r"(?:[ \t]*[½¼¾⅓⅔]|[ \t]+1/2(?![\d/])|[ \t]+[Aa]nd[ \t]+a[ \t]+half(?![A-Za-z])|-and-a-half(?![A-Za-z]))"
NUM = rf"(?<![\w.\-/])(?P<num>\d{{1,6}}(?:\.\d{{1,6}})?{HALF}?)(?!\d)(?!\.\d)(?![ \t]*%)"
#: "8 of 10" is the scale only where the clause ends after 10 ("8 of 10.", "8 of 10 — clear"); "8 of 10 questions"
#: is a count
_OF_TEN = r"[ \t]+of[ \t]+(?=10(?:\.0)?[ \t*_]*(?:\n|$|[.,;:!?()\]—–]|[-–][ \t]))"
DEN = (rf"(?:(?:[ \t]*(?:/|out[ \t]+of)[ \t]*|{_OF_TEN})"
       r"(?P<den>\d{1,6}(?:\.\d{1,6})?)(?!\w|\.\d|[ \t]*%))")
_RANGE = r"(?:[ \t]*(?:-|–|to)[ \t]*(?P<upper>\d{1,2})(?!\w|\.\d))"
# After a bare number, what follows decides whether it is a count ("3 stakeholders", "2 named frameworks",
# "3 were named"): it is, unless the next word belongs to a closed grammatical class that no counted noun
# does (the scale's unit, a preposition, conjunction, determiner, pronoun, "would"/"should", "not", a
# discourse adverb, or an auxiliary or copula agreeing with one thing: "8 is fair", "8 seems fair", while "3
# were named" counts), or the number is the subject of a verb: a singular verb (-s) that takes an object-only
# pronoun ("8 suits them"). Any other word keeps the number a count: missing and flagged, never a wrong score.
#: English's prepositions, the closed class whole (words that are mostly nouns or adjectives, "past", "round",
#: "save", "opposite", left out: "2 past rounds" counts)
PREPOSITIONS = frozenset(
    "aboard about above across after against along alongside amid amidst among amongst around as at atop before behind "
    "below beneath beside besides between beyond by concerning despite during except for from in inside into like "
    "near of on onto outside over per regarding since than through throughout till to toward towards under "
    "underneath unlike until upon versus via vs with within without".split())
_FUNCTION_WORDS = (
    rf"points?|pts|{'|'.join(sorted(PREPOSITIONS - {'of'}))}"  # ("1 of 12": a part of a whole)
    r"|and|but|so|while|whereas|because|since|though|although|if|unless|when|once|as|than"
    r"|for|in|on|at|with|without|to|from|by|versus|vs|after|before|upon|following|given|compared"
    r"|the|this|it|its|their|here|team"
    r"|is|was|has|does|would|should"
    r"|(?:seem|appear|remain|look|feel|sound|stay|prove|become)s"
    r"|not|overall|now|instead|rather|however|therefore|thus"
)
_OBJECT_PRONOUN = r"(?:them|him|us|me|themselves|himself|herself|itself|ourselves|myself)(?![A-Za-z])"
#: "8 suits them": a word ending in a singular verb's -s (not "-ss", "-us", "-is") before an object-only pronoun
_SINGULAR_VERB_AND_OBJECT = rf"[A-Za-z]{{0,30}}[^\WsuiI\d_][sS][ \t]{{1,4}}{_OBJECT_PRONOUN}"
NOT_COUNT = (rf"(?![ \t]*(?:%|(?!(?i:{_FUNCTION_WORDS})(?![A-Za-z]))(?!(?i:{_SINGULAR_VERB_AND_OBJECT}))"
             rf"[A-Za-z]))")
# "7 out of 10 test cases" is a count, whatever its denominator; "1-1" is a range or nothing, never 1
DEN = DEN + NOT_COUNT
NOT_COUNT = NOT_COUNT + r"(?![ \t]*[-–][ \t]*\d)"
NUM_RE = re.compile(rf"{NUM}(?:{DEN}|{_RANGE}{NOT_COUNT}|{NOT_COUNT})")
_NUM_DEN_RE = re.compile(rf"{NUM}{DEN}")
# a number out of ten ("8/10", "8 out of 10"): preferred in a stretch of text; another denominator is not
_NUM_TEN_RE = re.compile(rf"{NUM}(?:(?:[ \t]*(?:/|out[ \t]+of)[ \t]*|{_OF_TEN})(?P<den>10(?:\.0)?)(?!\w|\.\d|[ \t]*%)){NOT_COUNT}")
# what may stand between a name and its score: "Consistency: 8", "Consistency - **8**", "scored 8",
# "Team A (gpt-4o): 8" has the id removed before this is used
_SEP = (
    r"(?:[\s:=()\[\]\-–—,.*\"'|>]|[.…_·]{2,80}|(?<![A-Za-z])(?:scored|scores?|score|gets?|got|receives?|received|earns?"
    r"|earned|is|was|rated|rating|with|of|a|an|grade|mark|points?)(?![A-Za-z])){0,12}?"
)
AFTER_NAME_RE = re.compile(rf"{_SEP}{NUM}(?:{DEN}|{_RANGE}{NOT_COUNT}|{NOT_COUNT})", re.IGNORECASE)
_AFTER_COLON_RE = re.compile(rf"(?:[:=→⇒]|[-–—][ \t]|[-=]>)[ \t\"'*(]*{NUM}(?:{DEN}|{_RANGE}{NOT_COUNT}|{NOT_COUNT})")
# "Consistency: Strong (8)", "Honesty - very good (9/10)", "Consistency: ★★★★★★★☆☆☆ (7)": a label, a word or
# two of rating (or a row of symbols), and the number alone in brackets
_WORD_THEN_NUM = re.compile(
    rf"[ \t*_]*(?:[:=]|[-–—][ \t])[ \t*_]*(?:[A-Za-z][A-Za-z'’-]*(?:[ \t]+[A-Za-z][A-Za-z'’-]*){{0,2}}|[^\w\s()]{{1,12}})"
    rf"[ \t*_]*\([ \t]*{NUM}"
    rf"(?:[ \t]*/[ \t]*(?P<den>10))?[ \t]*\)"
)
#: a score that ends its line, set off by a separator or a score word: "…, 7", "… — 8/10", "…: 5", "… overall 6"
TRAILING_SCORE = re.compile(rf"(?:[:—–→=,;]|(?<![A-Za-z])(?:overall|score|rating)(?![A-Za-z]))[ \t*_]*{NUM}"
                            r"(?:[ \t]*/[ \t]*(?P<den>10))?[ \t*_.!]*$", re.IGNORECASE)
_ANY_NUM = re.compile(NUM)
#: a clause after the criterion's name that gives it a score with an article or a word of scoring, whatever its
#: verb: "… merits a 7", "… I award them an 8", "… they named six groups, which earns a 9" (no number, stop,
#: condition or negation between: "would earn a 9 if …", "does not deserve a 9" give no score)
_CLAUSE_THEN_SCORE = re.compile(
    r"(?i)(?:[ \t*_]*at|(?:(?!\b(?:would|could|might|if|unless|not|never|no|nor|than|rather|instead)\b|n't)[^\d\n.;:!?])"
    rf"{{0,70}}?(?<![A-Za-z])an?)[ \t]+{NUM}(?:{DEN}|{NOT_COUNT})(?![-–][A-Za-z])")
#: a score's own label inside the stretch: "two clear principles; score 8", "… — rating: 7/10"
_SCORE_LABEL_RE = re.compile(rf"(?i)(?<![a-z])(?:score|rating|grade|mark)[ \t*_]*[:=]?[ \t*_]*{NUM}(?:{DEN}|{NOT_COUNT})")
_CORRECTION_RE = re.compile(
    r"(?<![A-Za-z])(?:actually|correction|corrected|revised?|rather(?![ \t]+than)|make[ \t]+(?:it|that)"
    r"|on[ \t]+reflection|i[ \t]+mean|chang(?:e|ed|ing)[ \t]+(?:it|this|that|my[ \t]+score)?[ \t]*to)"
    r"(?![A-Za-z])[^\d\n]{0,24}?"
    rf"{NUM}(?:{DEN}|{NOT_COUNT})",
    re.IGNORECASE,
)
_CORRECTION_HINT = re.compile(r"(?i)actual|correct|revis|rather|make|reflect|mean|chang")


def corrective(line: str, start: int) -> bool:
    """Whether the number at `start` is given by words of correction ("on reflection 6", "actually 6")."""
    lead = max(0, start - 60)
    return bool(_CORRECTION_HINT.search(line, lead, start)) and any(
        m.start("num") == start for m in _CORRECTION_RE.finditer(line, lead, min(len(line), start + 20)))
STRIKE_RE = re.compile(r"~~[^~\n]{0,200}~~")


def val_of(m: re.Match[str], corrective: bool = False) -> Val:
    d = m.groupdict()
    return Val(d["num"], d.get("den"), d.get("upper"), m.start("num"), corrective)


# a candidate that is not the judge's score: negated ("not 9", "rather than 8"), asked ("a 9?"), a rubric
# anchor ("1 = no principle stated"), or a comparison ("higher than 6")
_NEGATED_BEFORE = re.compile(
    r"(?i)(?:\bnot|n't|\bnever|\bnor|rather[ \t]+than|instead[ \t]+of|\bthan|\bno|\bwithout|\bfrom)"
    r"[ \t]*(?:(?:a|an|even|quite|really)[ \t]+)?[*_\"'(]*$"
)
_AFTER_SKIP = re.compile(r"[ \t]*[*_\"')]*[ \t]*(?:/[ \t]*10)?[ \t]*[*_\"')]*[ \t]*(?:\?|=(?!=)|(?:or|to)[ \t]+\d)")


#: a difference, not a score: "3 points higher", "2 more than", "by 2 points"
_DIFFERENCE_AFTER = re.compile(
    r"[ \t]*(?:points?|pts|marks?)?[ \t]*(?:higher|lower|more|less|fewer|better|worse|ahead|behind|above|below"
    r")(?![a-z])", re.IGNORECASE)
_DIFFERENCE_BEFORE = re.compile(r"(?i)(?<![a-z])(?:by|(?:gap|margin|difference|spread|lead)[ \t]+(?:of|was|is|were|stood[ \t]+at"
                                r"|came[ \t]+to)(?:[ \t]+(?:only|just|about|roughly|at[ \t]+most|at[ \t]+least))?)[ \t]+$")
#: the rest of a question the number stands in: "a 9 for them? Not quite" (no dash, bracket or stop between)
_IN_QUESTION = re.compile(r"[^.!;:?\n()\[\]—–]{0,40}\?")


#: what makes a number a count ("3 points of tension"): accounting.count_reason, registered by that module
COUNT_RULE: list[Callable[[str, int, float | None], str | None]] = []
#: whether a word modifies a number as adjectives do ("clear", "well-earned"): wordclass.modifier, registered there
MODIFIER_RULE: list[Callable[[str], bool]] = []
#: "Consistency: a clear 8", "…: a well-earned 9": a label's separator, an article, one or two modifiers, the number
#: that ends the clause
_ARTICLE_MODIFIERS_NUM = re.compile(rf"[ \t*_]*(?:[:=]|[-–—][ \t])[ \t*_]*an?[ \t]+"
                                    rf"(?P<mods>(?:[A-Za-z][A-Za-z'’-]*[ \t]+){{1,2}}){NUM}(?:{DEN})?"
                                    r"[ \t*_]*(?=$|[.;,!(:—–]|[ \t]-[ \t])")  # (the clause ends: "a good 9 does" is no score)
#: a list's enumerator: "(1) a worked example", "1) the first"
_ENUMERATOR = re.compile(r"\)[ \t]+[A-Za-z\"“]")


def skipped(line: str, start: int, end: int) -> bool:
    """A candidate that is not the judge's score: negated ("not 9", "rather than 8"), asked ("a 9 for them?"),
    a rubric anchor ("1 = no principle stated"), a step in a comparison ("from 6 to 8"), a list's enumerator
    ("(1) a worked example"), or a count ("3 points of tension", "4 team members": see accounting.py)."""
    if _NEGATED_BEFORE.search(line[max(0, start - 24):start]) or _AFTER_SKIP.match(line, end) \
            or _IN_QUESTION.match(line, end) or _DIFFERENCE_AFTER.match(line, end) \
            or _DIFFERENCE_BEFORE.search(line[max(0, start - 24):start]):
        return True
    if _ENUMERATOR.match(line, end) and line[start:end].isdigit():
        # "(1) a worked example", "address: 1) the nurses, 2) the family": a list's enumerators, counting up
        k = int(line[start:end])
        opened = line[start - 1:start] == "("
        before = re.search(rf"(?<![\w.]){k - 1}\)", line[:start]) is not None
        after = re.search(rf"(?<![\w.]){k + 1}\)[ \t]+[A-Za-z\"“]", line[end:]) is not None
        if (k == 1 and (opened or after)) or before:
            return True
    num = re.match(r"\d+(?:\.\d+)?", line[start:end])
    return bool(num and any(rule(line, start + num.end(), float(num.group(0))) for rule in COUNT_RULE))


def score_in(line: str, start: int, end: int) -> Val | None:
    """The score that line[start:end] (the stretch after a criterion's name) gives, by preference: a
    self-correction ("actually 6"), a number out of ten ("8/10"), a number right after the name, a number
    after a colon or dash. A number must start inside the stretch; what follows it is judged on the whole
    line ("3 stakeholders" stays a count even when the next criterion's name comes right after)."""
    stop = min(len(line), end + 40)  # enough to see "out of 10" or "stakeholders" after a number
    if _CORRECTION_HINT.search(line, start, stop):
        corrections = [m for m in _CORRECTION_RE.finditer(line, start, stop)
                       if m.start("num") < end and not skipped(line, m.start("num"), m.end())]
        if corrections:
            return val_of(corrections[-1], corrective=True)
    trail = TRAILING_SCORE.search(line, max(start, len(line) - 80))
    if trail and trail.start("num") < end and not skipped(line, trail.start("num"), trail.end("num")) and all(
            skipped(line, m.start("num"), m.end("num")) or re.match(r"[ \t]*(?:/[ \t]*10)?[ \t]+[A-Za-z]", line[m.end("num"):])
            for m in _ANY_NUM.finditer(line, start, trail.start("num"))):
        # "2 frameworks in total, 7", "1 here, really, the rest hand-waved: 5": the line ends on its score, set off
        # after a phrase; every number before it opens a phrase of its own (a quantity, not the score)
        return val_of(trail)
    label = _SCORE_LABEL_RE.search(line, start, stop)
    if label and label.start("num") < end and not re.search(r"\d", line[start:label.start()]) \
            and not skipped(line, label.start("num"), label.end()):
        return val_of(label)  # "two clear principles; score 8": the score's own label, before any other number
    for rx, anchored in ((_NUM_TEN_RE, False), (AFTER_NAME_RE, True), (_AFTER_COLON_RE, False), (_WORD_THEN_NUM, True),
                         (_CLAUSE_THEN_SCORE, True)):
        pos = start
        while pos < stop:
            m = rx.match(line, pos, stop) if anchored else rx.search(line, pos, stop)
            if not m or m.start("num") >= end:
                break
            if not skipped(line, m.start("num"), m.end()):
                return val_of(m)
            if anchored:
                break
            pos = m.end("num")
    m = _ARTICLE_MODIFIERS_NUM.match(line, start, stop)
    if m and m.start("num") < end and MODIFIER_RULE and all(MODIFIER_RULE[0](w) for w in m.group("mods").split()) \
            and not skipped(line, m.start("num"), m.end()):
        return val_of(m)  # "a clear 8": the article and its modifiers make the one number the label's value
    return None


def score_in_cell(cell: str) -> Val | None:
    """A table cell's or JSON string's score: "8", "**8**", "8/10", "8 (strong)", "Score: 8" — a number that
    opens the cell, or one out of ten. Anything else ("between 3 and 1", "not a 9", "7 out of 10 test cases")
    is not a score."""
    cell = cell.strip()
    if not cell:
        return None
    m = _NUM_TEN_RE.search(cell)
    if m and not skipped(cell, m.start("num"), m.end()):
        return val_of(m)
    lead = re.match(r"[\s*_~`>\"'(\[]*(?:(?:score|rating|grade|mark)[ \t]*[:=\-–—]?[ \t]*)?", cell, re.IGNORECASE)
    m = NUM_RE.match(cell, lead.end() if lead else 0)
    if m and not skipped(cell, m.start("num"), m.end()):
        return val_of(m)
    return None

def via_of(matches: list[re.Match[str]]) -> str:
    """How a team was named: "label" (Team A, team_a), "id" (the model's id) or "role" (presenting team)."""
    groups = {m.lastgroup for m in matches}
    if not groups or groups & {"ta", "tb", "pa", "pb"}:
        return "label"
    if groups & {"ia", "ib", "ian", "ibn"}:  # (the id, or the model's name it stands for)
        return "id"
    return "role"


# --------------------------------------------------------------------------------------------------------
# Headings and line shapes the text reader recognises
# --------------------------------------------------------------------------------------------------------

OVERALL_LABEL_RE = re.compile(
    r"[\W_]*(?:overall(?:[ \t]+(?:analysis|assessment|evaluation|comments?|verdict|summary|thoughts|judg[e]?ment))?"
    r"|summary|final[ \t]+(?:verdict|assessment|thoughts|analysis)|verdict|comparative[ \t]+(?:analysis|assessment)"
    r"|analysis[ \t]+of[ \t]+the[ \t]+exchange)(?![A-Za-z])[ \t]*(?P<colon>[:—–-])?[ \t]*(?P<rest>.*)",
    re.IGNORECASE,
)
JUST_LABEL_RE = re.compile(
    r"[\W_]*(?:justification|rationale|reasoning|comments?|explanation|assessment|notes?)(?![A-Za-z])"
    r"[ \t]*[:—–-][ \t]*(?P<rest>.*)",
    re.IGNORECASE,
)
BOLD_LINE_RE = re.compile(r"\s*(?:\*\*|__)[^*_\n]{1,100}(?:\*\*|__)\s*:?\s*")

_DECORATION = re.compile(r"[=#~_\-\[\]<>|•]{2,}")


#: the parts of a team's evaluation a heading may name without leaving the team's section ("### Scores",
#: "**Justification**", "Strengths:"): the rubric's own vocabulary
SECTION_PART = words(r"scor(?:e|es|ed|ing)", r"ratings?", "rated", r"grades?", r"marks?", r"points?", "criteria",
                      "criterion", "rubric", "breakdown", "justifications?", "rationale", "reasoning",
                      "explanations?", "assessment", "evaluation", "feedback", r"strengths?", r"weakness(?:es)?",
                      "performance", "results?")
#: a markdown heading's level is its number of "#"; a bold line is below any of them, a "Label:" line below that
_BOLD_LEVEL, LABEL_LEVEL = 7, 8


def heading_level(raw: str) -> int:
    m = re.match(r"\s{0,3}(#{1,6})\s", raw)
    if m:
        return len(m.group(1))
    return _BOLD_LEVEL if BOLD_LINE_RE.fullmatch(raw) else LABEL_LEVEL


WORD_VALUES = {w: k for k, w in enumerate("one two three four five six seven eight nine ten".split(), 1)}
#: a criterion's label and a number word as its value, nothing else but a reason set off after it:
#: "- Consistency: eight", "**Honesty** — nine (candid)"
WORD_SCORE_LINE = re.compile(
    rf"[\s>•\-]*(?:\d{{1,2}}[.)][ \t]*)?(?P<crit>{CRIT_RE.pattern[4:]})[ \t]*(?:\([^()\n]{{0,40}}\))?[ \t]*[:=—–-][ \t]*"
    r"(?P<word>one|two|three|four|five|six|seven|eight|nine|ten)(?:[ \t]*(?:/[ \t]*10|out[ \t]+of[ \t]+(?:10|ten)))?"
    r"(?:[ \t.!]*|[ \t]*[—–;(,][^\n]*)", re.IGNORECASE)


def is_banner(clean: str, rx: re.Pattern[str]) -> bool:
    """A short line that names one team and stands apart as a heading would: decorated ("=== … ===") or in
    capitals ("TEAM B SCORES"), with no number of its own and no sentence ending."""
    rest = rx.sub(" ", clean)
    if len(clean) > 60 or re.search(r"\d", rest) or clean.rstrip().endswith((".", "!", "?", ",", ";")):
        return False
    letters = re.findall(r"[A-Za-z]", rest)
    upper = sum(1 for c in letters if c.isupper())
    return bool(_DECORATION.search(clean)) or (len(letters) >= 3 and upper >= 0.8 * len(letters))


#: a pipe-separated cell that is a "Label: value" pair (anchored, linear: no nested quantifiers)
_LABELLED_CELL_RE = re.compile(r"[ \t*_]*[A-Za-z][^:]*:[ \t]*\**\d")


def labelled_pipes(raw: str) -> bool:
    """A line like "Principle Articulation: 7 | Consistency: 8 | ...": it does not open like a table row and
    at least two of its pipe-separated cells are labelled values — pairs with pipes between them, not a table."""
    if "|" not in raw or ":" not in raw or raw.lstrip().startswith("|") or len(raw) > 2000:
        return False
    return sum(1 for cell in raw.split("|") if _LABELLED_CELL_RE.match(cell)) >= 2
