"""Scores given by a structure other than one number per criterion's line (issue #37): one value for every
criterion but named exceptions, both teams' values in one line (an edge, a tie), a topic sentence whose
clauses give each team its value, and a label that counts a noun ("Stakeholders named — A: 4, B: 6").
Quantifiers and exception markers are closed classes; criteria are named as vocabulary.CRIT_RE names them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ebtui.core.judgment.accounting import SENTENCE, Number, numbers_in
from ebtui.core.judgment.provenance import Collector, Ctx, Found
from ebtui.core.judgment.vocabulary import (
    CRIT_RE,
    OPPONENT_RE,
    Val,
    crit_name,
    interpret,
    other,
    scoring_word,
    team_of_match,
)
from ebtui.core.judgment.wordclass import AUXILIARIES, FUNCTION_WORDS, past_participle, pos_of
from ebtui.core.records import CRITERIA

#: a universal quantifier over the rubric's criteria: "on every criterion", "in all seven", "across the board",
#: "throughout", "all round", "everywhere" (the noun after every/each/all may be any noun but a criterion's)
_UNIVERSAL = re.compile(
    r"(?i)(?<![a-z])(?:(?:on|in|for|across|at|over|under)[ \t]+)?(?P<det>every|each|all)(?![a-z'’])"
    r"(?:[ \t]+(?:single|one|of|the|its|their|them|seven|7|of[ \t]+the|of[ \t]+them)(?![a-z'’]))*"
    r"(?:[ \t]+(?P<noun>[a-z]+))?"
    r"|(?<![a-z])(?:across[ \t]+the[ \t]+(?:board|rubric|piece)|throughout|all[ \t]+(?:a)?round|everywhere"
    r"|(?:straight[ \t]+)?down[ \t]+the[ \t]+line|in[ \t]+every[ \t]+respect|uniformly)(?![a-z])")
#: a quantifier over the criteria the reply has not scored otherwise: "the rest", "everything else", "elsewhere"
_RESIDUAL = re.compile(
    r"(?i)(?<![a-z])(?:(?:for|on|in|across)[ \t]+)?(?:the[ \t]+(?:rest|others|remainder)|everything[ \t]+else"
    r"|all[ \t]+else|elsewhere|otherwise|(?:all|every|each)[ \t]+(?:the[ \t]+)?other(?:s|[ \t]+[a-z]+)?"
    r"|(?:all[ \t]+)?(?:the[ \t]+)?(?:other|remaining)[ \t]+(?:\d[ \t]+|[a-z]+[ \t]+)?(?:criteria|criterion|categories"
    r"|dimensions|ones|areas|scores|items|lines))(?![a-z])")
#: an exception marker (closed class): "except", "but", "save", "apart from", "other than", "bar", "excluding"
_EXCEPT = re.compile(
    r"(?i)(?<![a-z])(?:except(?:ing)?(?:[ \t]+(?:for|on|in|that))?|but(?:[ \t]+(?:for|on|in))?|save(?:[ \t]+(?:for|on|in))?"
    r"|(?:apart|aside)[ \t]+from|other[ \t]+than|bar(?:ring)?|excluding|exclusive[ \t]+of|outside(?:[ \t]+of)?"
    r"|with[ \t]+the[ \t]+(?:sole[ \t]+|one[ \t]+)?exceptions?[ \t]+of|not[ \t]+counting|(?:leaving|setting)[ \t]+aside)(?![a-z])")
#: an exception marker after its criterion: "consistency (6) aside", "honesty excepted"
_EXCEPT_AFTER = re.compile(r"(?i)[ \t]*(?:\([^()\n]{0,30}\)[ \t]*)?(?:aside|apart|excepted|excluded)(?![a-z])")
#: a plural value: "8s", "7's" ("all 7s", "8s throughout")
_PLURAL = re.compile(r"(?<![\w.])(?P<d>10|[1-9])['’]?s(?![\w'’])")
#: both teams as one subject: "both teams", "each team", "the two teams", "both sides", "either team"
_BOTH = re.compile(r"(?i)(?<![a-z])(?:(?:both|each|either)[ \t]+(?:of[ \t]+the[ \t]+)?(?:teams?|sides?)"
                   r"|the[ \t]+two[ \t]+(?:teams|sides))(?![a-z])")
#: "both" right before the value, a word of scoring or an article between at most: "both 7", "both get a 7"
_BOTH_BEFORE = re.compile(r"(?i)(?<![a-z])both[ \t]+(?:[a-z]+[ \t]+)?(?:an?[ \t]+)?$")
#: one value for each of the teams: "7 apiece", "7 each"; a tie's label: "Even: 7", "Level — 7 each"
_EACH_AFTER = re.compile(r"(?i)[ \t]*(?:/[ \t]*10)?[ \t]*(?:apiece|each|a[ \t]+piece)(?![a-z])")
_TIE_LABEL = re.compile(r"(?i)[ \t>\-•]*(?:even|level|tied?|all[ \t]+square|parity|a[ \t]+draw|drawn)[ \t]*(?:[:=]|[—–]|[ \t]-[ \t])")
#: what leaves a sentence's value open: a condition, a question, a modal of possibility or a counterfactual
_OPEN = re.compile(r"(?i)(?<![a-z'’])(?:if|unless|whether|provided|assuming|would|could|might|may|should|must"
                   r"|ought|perhaps|maybe|not|never|no|nor|cannot|almost|nearly)(?![a-z'’])|\?|n['’]t(?![a-z])"
                   r"|['’]d(?![a-z])")
#: a topic opening a sentence: "On principle articulation,", "As for consistency —", "Regarding honesty:"
_TOPIC = re.compile(rf"(?i)[ \t>*_\-•]*(?:on|for|in|regarding|concerning|as[ \t]+(?:for|to|regards)|when[ \t]+it"
                    rf"[ \t]+comes[ \t]+to|with|under|turning[ \t]+to|moving[ \t]+to)[ \t]+(?:the[ \t]+)?"
                    rf"(?P<crit>{CRIT_RE.pattern[4:]})[ \t*_]*[,:—–]")
#: the join of two values of one pair: "8 to 7", "8–7", "8 against 6", "8 over 7", "8 vs 6"
_PAIR_JOIN = re.compile(r"(?i)[ \t]*(?:/[ \t]*10)?[ \t]*,?[ \t]*(?P<j>[-–—]|to|against|over|vs\.?|versus|v\.?)[ \t]*$")
_BARE = re.compile(r"(?<![\w'’])([AB])(?![\w])")
#: a line longer than this (characters) holds no structure of this module: a judge's line, even a paragraph, is
#: shorter, and the tests below compare each number with each name (hostile input stays linear)
_LONGEST = 4000
_ANY_NUMBER = re.compile(r"\d|(?i:(?<![a-z])(?:one|two|three|four|five|six|seven|eight|nine|ten)(?![a-z]))")
_TIE_WORD = re.compile(r"(?i)(?<![a-z])(?:apiece|each|piece|both|even|level|tied?|square|parity|draw|drawn)(?![a-z])")
#: two values joined as a pair, the second maybe after its team's name: "8 to Team B's 7", "8–7", "2 to 1"
_PAIR = re.compile(r"(?i)(?<![\w.])(?P<x>\d{1,2})(?!\d|\.\d)(?:[ \t]*/[ \t]*10)?[ \t]*,?[ \t]*(?:[-–—]|to|against|over|vs\.?"
                   r"|versus)[ \t]*(?:[^\d\n]{1,40}?['’]s[ \t]+)?(?P<y>\d{1,2})(?!\d|\.\d|[ \t]*%)")
_PAREN_VALUE = re.compile(r"[ \t*_]*\([ \t]*(?:an?[ \t]+)?(?P<d>\d{1,2}(?:\.\d+)?)[ \t]*(?:/[ \t]*10[ \t]*)?\)")
_OWNER_AFTER = re.compile(r"['’]s(?![a-z])")
_CLAUSE_WORD = re.compile(r"[A-Za-z]+(?:['’][a-z]+)?")


@dataclass
class Value:
    """A value read for a cell: the number as written and where it stands in the line."""

    val: Val
    word: bool  # a number word ("seven"): read as prose, settled by the structure


@dataclass
class Reading:
    """What one line gives: values per cell, cells a collective value covers (applied once the whole reply is
    read), exceptions whose value the line does not give, and the spans of the numbers it accounts for."""

    cells: list[tuple[str, str, Value]] = field(default_factory=list)
    collective: list[Collective] = field(default_factory=list)
    unvalued: list[tuple[str, str]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    team: str | None = None  # the team the line leads with (its section from here on)


@dataclass
class Collective:
    """One value for a team's criteria but the named exceptions; `residual`: only those nothing else scores."""

    team: str
    value: Value
    exceptions: set[str]
    residual: bool
    pos: int = 0
    source: str = ""


@dataclass
class _Mention:
    start: int
    end: int
    teams: tuple[str, ...]
    owner: bool  # "Team B's 7": names the owner of what follows


def _mentions(text: str, rx: re.Pattern[str], section: str | None) -> list[_Mention]:
    out = [_Mention(m.start(), m.end(), (team_of_match(m),), bool(_OWNER_AFTER.match(text, m.end())))
           for m in rx.finditer(text)]
    if section in ("a", "b"):
        out += [_Mention(m.start(), m.end(), (other(section),), bool(_OWNER_AFTER.match(text, m.end())))
                for m in OPPONENT_RE.finditer(text)]
    out += [_Mention(m.start(), m.end(), ("a", "b"), False) for m in _BOTH.finditer(text)
            if not any(o.start <= m.start() < o.end for o in out)]
    named = [(o.start, o.end) for o in out]
    for m in _BARE.finditer(text):
        if any(a <= m.start() < b for a, b in named):
            continue
        # a team by its bare letter: "B takes it", "A's 8"; "A" before a word that is no verb is the article
        nxt = _CLAUSE_WORD.match(text, m.end() + 1) if text[m.end():m.end() + 1] == " " else None
        if m.group(1) == "B" or text[m.end():m.end() + 1] in ("'", "’", ",", ":") or (
                nxt is not None and _verb_after_letter(nxt.group(0))):
            out.append(_Mention(m.start(), m.end(), (m.group(1).lower(),), bool(_OWNER_AFTER.match(text, m.end()))))
    return sorted(out, key=lambda m: m.start)


def _verb_after_letter(word: str) -> bool:
    """Whether a word after a capital "A" makes it a team, not the article: a verb that is no noun ("A edges"),
    or a verb whose noun reading is plural, which no article takes ("A takes it")."""
    pos = pos_of(word)
    if "VERB" not in pos:
        return False
    nouns = pos.get("NOUN", ())
    return not nouns or (word.lower().endswith("s") and any(n != word.lower() for n in nouns))


def _word_place(text: str, a: int, b: int) -> bool:
    """A number word where a score stands: after "a"/"an" and up to two modifiers, a word of scoring, a
    copula, "at" or "to"; or as a clause of its own ("…; six.")."""
    lead = text[max(0, a - 40):a]
    if re.search(r"(?:^|[:;,.—–(])[ \t*_]*$", lead) and re.match(r"[ \t*_]*(?:[.;:,!)—–]|$)", text[b:]):
        return True
    if not re.search(r"[A-Za-z][ \t]+$", lead):
        return False
    words = [w.lower() for w in _CLAUSE_WORD.findall(lead)]
    if words[-1] in ("a", "an", "at", "to"):
        return True
    for k in (1, 2):  # "a confident eight", "a very strong nine"
        if len(words) > k and words[-k - 1] in ("a", "an") and all(_modifier(w) for w in words[-k:]):
            return True
    return scoring_word(words[-1]) or words[-1] in AUXILIARIES


def _modifier(word: str) -> bool:
    """A word that modifies a value after "a": an adjective, an adverb or a participle ("a middling six")."""
    pos = pos_of(word)
    return bool({"ADJ", "ADV"} & set(pos)) or ("VERB" in pos and (word.endswith("ing") or past_participle(word)))


@lru_cache(maxsize=8)
def _numbers(text: str) -> list[Number]:
    return numbers_in(text)  # (one line's numbers, asked for by each of its sentences and clauses)


def values(text: str, lo: int, hi: int, skip: list[tuple[int, int]]) -> list[Value]:
    """The candidate values in text[lo:hi]: digits nothing explains (accounting.numbers_in), and number words
    where a score stands; never a number inside a team's name (`skip`)."""
    out = []
    for n in _numbers(text):
        if not lo <= n.start < hi or any(a <= n.start < b for a, b in skip):
            continue
        word = n.shown[:1].isalpha()
        if n.reason is None or (word and _word_place(text, n.start, n.end)):
            shown = text[n.start:n.end] if not word else str(int(n.value or 0)) if n.value == int(n.value or 0) \
                else str(n.value)
            out.append(Value(Val(shown, None, None, n.start), word))
    for m in _PLURAL.finditer(text, lo, hi):
        out.append(Value(Val(m.group("d"), None, None, m.start("d")), False))
    return sorted(out, key=lambda v: v.val.start)


def _end(text: str, v: Value) -> int:
    m = re.match(r"[A-Za-z]+|\d+(?:\.\d+)?(?:[½¼¾]|['’]?s(?![\w]))?", text[v.val.start:])
    return v.val.start + (m.end() if m else len(v.val.num))


def count_label(clean: str) -> bool:
    """A line whose label counts a noun: a plural noun then a past participle ("Stakeholders named — A: 4, B: 6",
    "Frameworks cited: 3", "Objections answered: 2"); its numbers are counts, never scores (none over ten)."""
    m = re.match(r"[ \t>*_\-•]*(?P<noun>[A-Za-z]+)[ \t]+(?P<part>[A-Za-z]+)(?:[ \t]+[a-z]+){0,3}[ \t*_]*(?:[:=]|[—–]|[ \t]-[ \t])",
                 clean)
    if m is None or re.search(r"(?i)/[ \t]*10|out[ \t]+of[ \t]+10", clean):
        return False
    noun, part = m.group("noun").lower(), m.group("part").lower()
    lemmas = pos_of(noun).get("NOUN", ())
    plural = noun.endswith("s") and any(lemma != noun for lemma in lemmas)
    return plural and past_participle(part) and not scoring_word(part) and not scoring_word(noun)


# --------------------------------------------------------------------------------------------------------
# The structures
# --------------------------------------------------------------------------------------------------------


def read_line(text: str, rx: re.Pattern[str], section: str | None, heading_crit: str | None,
              all_crits: tuple[str, ...]) -> Reading | None:
    """What `text` (one line, markup blanked, same length as the reply's line) gives by a structure of this
    module, or None where it holds none (the other rules read it). A sentence any number of which stays
    unaccounted for gives nothing."""
    if len(text) > _LONGEST or not _ANY_NUMBER.search(text):
        return None  # (most lines: cheap tests first, so a reply's reading stays linear and quick)
    topic = _TOPIC.match(text)
    quantified = _UNIVERSAL.search(text) or _RESIDUAL.search(text)
    paired = (heading_crit or CRIT_RE.search(text)) and (
        rx.search(text) or OPPONENT_RE.search(text) or _BARE.search(text) or _TIE_WORD.search(text))
    if topic is None and not quantified and not paired:
        return None
    names = [(m.start(), m.end()) for m in rx.finditer(text)]
    if topic is not None:
        got = _topic_clauses(text, rx, section, crit_name(topic.group("crit")), topic.end(), names)
        if got is not None:
            return got
    out = Reading()
    read = False
    for sm in SENTENCE.finditer(text):
        s0, s1 = sm.start(), sm.end()
        if not text[s0:s1].strip():
            continue
        one = _collective(text, s0, s1, rx, section, names, all_crits) or \
            _pair(text, s0, s1, rx, section, heading_crit, names)
        if one is None:
            continue
        read = True
        out.cells += one.cells
        out.collective += one.collective
        out.unvalued += one.unvalued
        out.spans += one.spans
        out.team = out.team or one.team
    return out if read else None


def _subject_teams(text: str, lo: int, hi: int, ms: list[_Mention], section: str | None) -> tuple[str, ...] | None:
    subj = {t for m in ms if lo <= m.start < hi and not m.owner for t in m.teams}
    if len(subj) > 2:
        return None
    if subj:
        return tuple(sorted(subj))
    return (section,) if section in ("a", "b") else None


def _collective(text: str, s0: int, s1: int, rx: re.Pattern[str], section: str | None,
                names: list[tuple[int, int]], all_crits: tuple[str, ...]) -> Reading | None:
    """"8 on every criterion except consistency (6) and stakeholder recognition (7)", "7 across the board, apart
    from framework awareness, where it earns a 9", "Consistency 6, the rest 8", "all 7s bar honesty (9)"."""
    sent = text[s0:s1]
    q = next((m for m in _UNIVERSAL.finditer(sent) if not (m.group("noun") and (
        CRIT_RE.fullmatch(m.group("noun")) or "NOUN" not in pos_of(m.group("noun")) and m.group("noun") not in
        ("criteria", "criterion")))), None)
    residual = _RESIDUAL.search(sent)
    if residual is not None and (q is None or residual.start() <= q.start()):
        q = residual
    else:
        residual = None
    if q is None:
        return None
    if _OPEN.search(sent):
        return None  # "I'd give 8 across the board if …": a condition, a modal, a negation, a question
    qa, qb = s0 + q.start(), s0 + q.end()
    cands = values(text, s0, s1, names)
    # the collective value stands beside the quantifier: "8 on every …", "7 across the board", "all 7s",
    # "across the board: 7", "the rest get 8"
    near = [v for v in cands if (_end(text, v) <= qa and _gap(text, _end(text, v), qa))
            or (v.val.start >= qb and _gap(text, qb, v.val.start))]
    if len(near) != 1:
        return None
    value = near[0]
    ms = _mentions(text[:s1], rx, section)
    teams = _subject_teams(text, s0, s1, ms, section)
    if teams is None:
        return None
    crits = [(m.start() + s0, m.end() + s0, crit_name(m.group(0))) for m in CRIT_RE.finditer(sent)
             if not re.search(r"\d[ \t]*$", sent[max(0, m.start() - 8):m.start()])]
    ex = _EXCEPT.search(sent)
    excepted = [c for c in crits if (ex is not None and c[0] >= s0 + ex.end()) or residual is not None
                or _EXCEPT_AFTER.match(text, c[1])]
    if len(excepted) != len(crits):
        return None  # a criterion named in it that is no exception: what the value covers is open
    out = Reading(team=teams[0] if len(teams) == 1 and any(not m.owner and m.start < value.val.start for m in ms
                                                             if s0 <= m.start) else None)
    used = [value]
    bounds = sorted({c[0] for c in excepted} | {value.val.start, qa, s1})
    for a, b, crit in excepted:
        stop = min(x for x in bounds if x > a)
        own = [v for v in cands if b <= v.val.start < stop and v is not value]
        paren = _PAREN_VALUE.match(text, b)
        if paren is not None and not own:
            # "consistency (1) and …": the value in brackets after its name (no list's enumerator here)
            own = [Value(Val(paren.group("d"), None, None, paren.start("d")), False)]
        if len(own) == 1:
            used.append(own[0])
            out.cells += [(t, crit, own[0]) for t in teams]
        else:
            out.unvalued += [(t, crit) for t in teams]  # an exception with no value (or two): missing, flagged
            used += own
    if any(v not in used for v in cands):
        return None  # a number the structure does not account for
    exceptions = {c for _, _, c in excepted}
    if exceptions >= set(all_crits):
        return None
    out.collective = [Collective(t, value, exceptions, residual is not None) for t in teams]
    out.spans = [(v.val.start, _end(text, v)) for v in used]
    return out


def _gap(text: str, a: int, b: int) -> bool:
    """Nothing but a stop, "a"/"an", a copula or a word of scoring between the value and its quantifier."""
    between = text[a:b]
    if re.search(r"[.;!?()\d]", between):
        return False
    ws = _CLAUSE_WORD.findall(between)
    return len(ws) <= 3 and all(w.lower() in ("a", "an", "all", "straight", "solid") or w.lower() in AUXILIARIES
                                or scoring_word(w) for w in ws)


def _pair(text: str, s0: int, s1: int, rx: re.Pattern[str], section: str | None, heading_crit: str | None,
          names: list[tuple[int, int]]) -> Reading | None:
    """Both teams' values in one sentence of a criterion's: "Edge: Team A, 8 to Team B's 7", "Team A edges it
    8–7", "B takes it, 8 against 6"; a tie: "Even: 7 apiece", "both teams earn a 7"."""
    sent = text[s0:s1]
    crits = {crit_name(m.group(0)) for m in CRIT_RE.finditer(sent)
             if not re.search(r"\d[ \t]*$", sent[max(0, m.start() - 8):m.start()])}
    crit = crits.pop() if len(crits) == 1 else heading_crit if not crits else None
    if crit is None or _OPEN.search(sent):
        return None
    cands = values(text, s0, s1, names)
    ms = [m for m in _mentions(text[:s1], rx, section) if m.start >= s0]
    # "both teams earn a 7": both teams the subject, before the value ("9, where both teams did well" is not)
    both = bool(ms) and all(m.teams == ("a", "b") for m in ms) and len(cands) == 1 and ms[0].end <= cands[0].val.start \
        and verb_gives(text[ms[-1].end:cands[0].val.start])
    if len(cands) == 1 and not ms and section not in ("a", "b") and (
            _EACH_AFTER.match(text, _end(text, cands[0])) or _TIE_LABEL.match(text, s0)
            or _BOTH_BEFORE.search(text, s0, cands[0].val.start)):
        both = True  # "Even: 7 apiece", "7 each" outside a team's section
    if len(cands) == 1 and both:
        v = cands[0]  # "Even: 7 apiece", "both teams earn a decent seven", "7 each"
        return Reading(cells=[("a", crit, v), ("b", crit, v)], spans=[(v.val.start, _end(text, v))])
    pm = _PAIR.search(text, s0, s1)
    if pm is not None and len(cands) < 2 and re.search(r"[,:—–][ \t]*$", text[s0:pm.start()]):
        # ("2 to 1" reads as odds or a range to the accounting; two teams' values where the structure says so)
        have = {v.val.start for v in cands}
        cands = sorted(cands + [Value(Val(pm.group(g), None, None, pm.start(g)), False) for g in ("x", "y")
                                if pm.start(g) not in have], key=lambda v: v.val.start)
    if len(cands) != 2:
        return None
    v1, v2 = cands
    if re.search(r"(?i)(?<![a-z])(?:from|between)[ \t]+$", text[s0:v1.val.start]):
        return None  # "changed its answer from 2 to 1": a change of something else, or a range
    join = _PAIR_JOIN.match(text, _end(text, v1), v2.val.start)
    between = text[_end(text, v1):v2.val.start]
    owner2 = next((m for m in ms if m.owner and _end(text, v1) <= m.start and re.fullmatch(
        r"['’]s[ \t]*", text[m.end:v2.val.start])), None)
    if owner2 is not None:
        join = _PAIR_JOIN.match(text, _end(text, v1), owner2.start) if join is None else join
        between = text[_end(text, v1):owner2.start]
    if join is None or not re.fullmatch(r"[ \t,/0-9]*(?:[-–—]|to|against|over|vs\.?|versus|v\.?)[ \t]*", between.strip()
                                        .replace("10", "", 1) or "x", re.IGNORECASE):
        return None
    owner1 = next((m for m in ms if m.owner and re.fullmatch(r"['’]s[ \t]*", text[m.end:v1.val.start])), None)
    before = [m for m in ms if m.end <= v1.val.start and not m.owner and len(m.teams) == 1]
    if owner2 is not None and len(owner2.teams) == 1:
        t2 = owner2.teams[0]
        t1 = other(t2)
    elif owner1 is not None and len(owner1.teams) == 1:
        t1 = owner1.teams[0]
        t2 = other(t1)
    elif before:
        t1 = before[-1].teams[0]
        t2 = other(t1)
    else:
        return None
    if any(len(m.teams) != 1 or (m.teams[0] not in (t1, t2)) for m in ms):
        return None
    if any(m.teams[0] == t2 and m.end <= v1.val.start and not m.owner for m in ms):
        return None  # the second team named as a subject before the first value: which value is whose is open
    if join.group("j") in "-–—" and (v1.val.num.isdigit() and v2.val.num.isdigit() and int(v1.val.num) < int(v2.val.num)):
        return None  # "6–7" may be a range
    return Reading(cells=[(t1, crit, v1), (t2, crit, v2)],
                   spans=[(v1.val.start, _end(text, v1)), (v2.val.start, _end(text, v2))])


def _topic_clauses(text: str, rx: re.Pattern[str], section: str | None, crit: str, start: int,
                   names: list[tuple[int, int]]) -> Reading | None:
    """"On consistency, Team A gets a steady seven, …; Team B gets a shakier six, …": after a topic naming one
    criterion, each clause whose subject is a team (or both teams) gives it the clause's one value."""
    ms = [m for m in _mentions(text, rx, section) if m.start >= start and not m.owner]
    if not ms:
        return None
    out = Reading()
    for i, m in enumerate(ms):
        hi = ms[i + 1].start if i + 1 < len(ms) else len(text)
        seg = text[m.end:hi]
        cands = values(text, m.end, hi, names)
        others = {crit_name(c.group(0)) for c in CRIT_RE.finditer(seg)} - {crit}
        if not cands:
            continue
        if len(cands) != 1 or others or _OPEN.search(text, m.end, cands[0].val.start) \
                or re.search(r"(?i)(?<![a-z])(?:if|unless|whether)(?![a-z])|\?", seg):
            return None  # a clause that leaves its value open: the other rules read (and flag) the line
        v = cands[0]
        if not verb_gives(text[m.end:v.val.start]):
            return None
        out.cells += [(t, crit, v) for t in m.teams]
        out.spans.append((v.val.start, _end(text, v)))
    return out if out.cells else None


def verb_gives(between: str) -> bool:
    """The verb nearest the value, if any, is a word of scoring ("earns", "gets", "deserves") or a copula (the
    modifiers after "a"/"an" are no verb: "deserves a middling six")."""
    if re.search(r"(?i)(?<![a-z])at[ \t]+$", between):
        return True  # a value the verb sets the team at: "I'd put Team A at eight", "sits at 7"
    between = re.sub(r"(?i)(?<![a-z])an?(?:[ \t]+[A-Za-z'’-]+){0,2}[ \t]*$", " ", between)
    for w in reversed(_CLAUSE_WORD.findall(between)):
        low = w.lower()
        if low in FUNCTION_WORDS:
            if low in AUXILIARIES:
                return True
            continue
        lemmas = pos_of(low)
        if "VERB" in lemmas or "AUX" in lemmas:
            return scoring_word(low)
    return True


# --------------------------------------------------------------------------------------------------------
# Into the collector
# --------------------------------------------------------------------------------------------------------


class Structures:
    """The text reader's use of this module: each line's structures read into the collector, and the collective
    values applied once the whole reply is read (a cell another line names with a number is not covered)."""

    def __init__(self, col: Collector, rx: re.Pattern[str]) -> None:
        self.col, self.rx = col, rx
        self.pending: list[Collective] = []
        #: the lines that name a criterion beside a number: (line, position, the section's team)
        self.lines: list[tuple[str, int, str | None]] = []

    def read(self, raw: str, section: str | None, heading_crit: str | None) -> Reading | None:
        flat = re.sub(r"[*`]", " ", raw)
        got = read_line(flat, self.rx, section, heading_crit, CRITERIA)
        if got is None:
            return None
        ctx = self.col.ctx
        for team, crit, v in got.cells:
            self.col.add(team, crit, _found(v, ctx.source), "lines")
        for team, crit in got.unvalued:
            self.col.unread.setdefault((team, crit), ctx.source)
        for c in got.collective:
            c.pos, c.source = ctx.pos, ctx.source
        self.pending += got.collective
        return got

    def note_numbers(self, raw: str, pos: int, section: str | None) -> None:
        """A line that names a criterion beside any number (a count too): kept for apply (cheap tests only)."""
        if _ANY_NUMBER.search(raw) and CRIT_RE.search(raw):
            self.lines.append((raw, pos, section))

    def _numbered(self) -> dict[tuple[str, str], tuple[int, str]]:
        """(team, criterion) -> the first line that names the criterion beside a number, for its team (named in
        it) or the section's."""
        out: dict[tuple[str, str], tuple[int, str]] = {}
        for raw, pos, section in self.lines:
            teams = {team_of_match(m) for m in self.rx.finditer(raw)} or ({section} if section in ("a", "b") else set())
            for m in CRIT_RE.finditer(raw):
                for t in teams:
                    out.setdefault((t, crit_name(m.group(0))), (pos, raw.strip()))
        return out

    def apply(self) -> None:
        numbered = self._numbered() if self.pending else {}
        for c in self.pending:
            for crit in CRITERIA:
                if crit in c.exceptions:
                    continue
                read = self.col.scores[c.team].get(crit)
                if c.residual and read:
                    continue  # "the rest": a criterion scored elsewhere is not one of the rest
                near = numbered.get((c.team, crit))
                if near is not None and not any(f.pos == near[0] for f in read or ()):
                    # named beside a number the reader did not take as its value: what it says is open
                    self.col.unread.setdefault((c.team, crit), near[1])
                    continue
                self.col.ctx = Ctx(pos=c.pos, source=c.source, kind="line")
                self.col.add(c.team, crit, _found(c.value, c.source), "lines")


def _found(v: Value, source: str) -> Found:
    value, problem = interpret(v.val)
    # a number word is read as prose, settled by its structure (the reply holds the word, not its digits)
    return Found(v.val.shown(), value, problem, kind="prose" if v.word else "line", source=source, settled=v.word)
