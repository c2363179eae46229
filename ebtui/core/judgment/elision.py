"""Counts whose noun is left out, recognised by the sentence around them: a fronted partitive ("of the three
cases, it handled 2 cleanly"), a coordinated count ("1 outright and 1 in part"), a gapped parallel clause ("B
found 5 groups, A only 3"). Each needs its antecedent in the same sentence; see docs/JUDGMENT.md."""

from __future__ import annotations

import re

from ebtui.core.judgment.vocabulary import CRIT_RE, WORD_VALUES, scoring_word
from ebtui.core.judgment.wordclass import (
    AUXILIARIES,
    FUNCTION_WORDS,
    RUBRIC_NOUNS,
    TOKEN,
    count_reason,
    pos_of,
    verb_form,
)

#: what a counted number may be followed by where its noun is left out: the clause ends, or an adverb or a
#: preposition's phrase goes on ("2 cleanly", "1 in part", "3.")
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;:!?)—–]|[ \t]-[ \t]|$)")
#: the partitive that names what is counted: "of the (three) cases", "of its objections", "of Team B's objections"
_PARTITIVE = re.compile(
    r"(?i)(?<![a-z])(?:out[ \t]+)?of[ \t]+(?:(?:the|its|their|these|those|his|her|all|both|all[ \t]+the)[ \t]+"
    r"|(?:team[ \t]+[ab12]|(?-i:[A-Z])[a-z]+|the[ \t]+[a-z]+|(?-i:[AB]))['’]s?[ \t]+)")
_NUMBER = re.compile(r"(?i)(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)[ \t]+")
#: how far a rule looks from its number, in characters: a sentence's antecedent is near it (and the accounting
#: stays linear on a megabyte line)
_REACH = 160
_STOP = re.compile(r"[.;:!?()—–]")
#: English's first-person pronouns, the closed class whole: the judge speaking ("in my view", "I'd say")
_FIRST_PERSON = re.compile(r"(?i)(?<![a-z'’])(?:i|me|my|mine|myself|we|us|our|ours|ourselves)(?![a-z])")
#: what joins a second count to the first: its noun, adverbs or a short phrase, then a comma or a conjunction
_JOIN = re.compile(r"(?i)(?P<words>[ \t]*(?:[a-z'’\-]+[ \t]+){0,4}?(?:[a-z'’\-]+)?)[ \t]*(?P<conj>,?[ \t]*(?:and|or|but)?)[ \t]*")
#: who does what is counted: a pronoun, a team, "the team", a noun after "the" (never "I" or "we": the judge)
_SUBJECT = r"(?:it|they|he|she|(?i:team)[ \t]+[AB12]|[AB]|the[ \t]+[a-z]+|(?-i:[A-Z])[a-z]+)"
_FRONTED = re.compile(rf"[ \t]*,?[ \t]*(?P<subj>{_SUBJECT})[ \t]+(?:[a-z]+ly[ \t]+)?(?P<verb>[A-Za-z]+)[ \t]+$")
#: a gapped clause: a conjunction or comma, its subject, "only"-like adverbs, and the number that ends it
_GAP = re.compile(rf"(?:,|\band|\bbut|\bwhile|\bwhereas)[ \t]+(?:and[ \t]+|but[ \t]+|while[ \t]+)?"
                  rf"(?P<subj>{_SUBJECT})[ \t]+(?:(?P<verb>[a-z]+)[ \t]+)?(?:[a-z]+[ \t]+)?$")
#: the clause a gapped one parallels: its subject, its verb, "only"-like words, then the count
_FIRST_CLAUSE = re.compile(rf"(?<![A-Za-z]){_SUBJECT}[ \t]+(?:[a-z]+ly[ \t]+)?(?P<verb>[A-Za-z]+)[ \t]+(?:[a-z]+[ \t]+)?$")
#: nouns no count of things in a reason is: the rubric's and the scale's, and the teams
_NOT_COUNTED = frozenset({"team", "teams", "side", "sides", "criteria", "criterion", "rubric", "scale"})


def _value(text: str) -> float | None:
    low = text.lower()
    return float(WORD_VALUES[low]) if low in WORD_VALUES else float(text) if text.isdigit() else None


def _ends_clause(line: str, b: int) -> bool:
    """Whether the number ending at `b` ends its clause or is followed by an adverb or a preposition's phrase
    (never by a score's word, a scale, a criterion's name, a verb, or the judge's own stance: "in my view")."""
    stop = _STOP.search(line, b, b + _REACH)
    if _FIRST_PERSON.search(line, b, stop.start() if stop else b + _REACH):
        return False  # "2 in my view", "and 6, I think": the judge speaking is the judge's value
    if _CLAUSE_END.match(line, b):
        return True
    t = TOKEN.match(line, b)
    if t is None or line[b:t.start(1)].strip():
        return False
    w = t.group(1)
    low = w.lower()
    if scoring_word(low) or CRIT_RE.match(line, t.start(1)) or low in ("out", "for", "on", "as"):
        return False  # "2 overall", "2 for consistency", "2 out of 10": a score's words
    if low in ("in", "with", "without", "at", "by", "under", "after", "before", "and", "or", "but"):
        return not CRIT_RE.search(line, t.end(), stop.start() if stop else b + _REACH)
    p = pos_of(low)
    return "ADV" in p and not {"NOUN", "VERB"} & set(p) and low not in ("more", "less", "higher", "lower")


def _counted_noun(line: str, start: int) -> tuple[str, float | None, int] | None:
    """The plural noun phrase that starts at `start` (after a partitive's determiner): its head, its number if
    it has one, and where it ends ("three cases" -> ("cases", 3.0, end)); None where no counted noun starts."""
    num = _NUMBER.match(line, start)
    total = _value(num.group(1)) if num else None
    at = num.end(1) if num else start
    why = count_reason(line, at, total if total is not None else 2.0)
    if why is None or not why.startswith("a count of "):
        return None
    phrase = why.removeprefix("a count of ")
    end = line.find(phrase, at)
    head = phrase.split()[-1].lower()
    if end < 0 or head in _NOT_COUNTED or head.rstrip("s") in RUBRIC_NOUNS or scoring_word(head):
        return None  # "of the seven criteria", "of the 10 points": the rubric's and the scale's
    return head, total, end + len(phrase)


def _ordinary_verb(word: str) -> bool:
    """A verb in a finite or participle form that is no score's verb, auxiliary or copula ("handled")."""
    low = word.lower()
    return low not in AUXILIARIES and not scoring_word(low) and verb_form(low)


def _partitives(line: str, s0: int, a: int) -> list[tuple[str, float | None]]:
    """The fronted partitives of line[s0:a] whose clause's ordinary verb ends right before `a`: "of the three
    cases, it handled " -> [("cases", 3.0)]."""
    out = []
    for p in _PARTITIVE.finditer(line, s0, a):
        counted = _counted_noun(line, p.end())
        if counted is None or counted[2] > a:
            continue
        head, total, end = counted
        verb = _FRONTED.fullmatch(line, end, a)
        if verb is not None and _ordinary_verb(verb.group("verb")) and _party(verb.group("subj")):
            out.append((head, total))
    return out


def partitive_count(line: str, a: int, b: int, n: float | None) -> str | None:
    """"of the three cases, it handled 2 cleanly": a number right after an ordinary verb whose subject follows
    a fronted partitive, no more than the whole it is part of, ending its clause."""
    if not _ends_clause(line, b):
        return None
    for head, total in _partitives(line, _sentence_start(line, a), a):
        if total is None or (n is not None and n <= total):  # (a part is no more than the whole)
            return f"a count of {head}, its noun left out (of the {head} named before it)"
    return None


def coordinated_count(line: str, a: int, b: int, n: float | None, prev: tuple[int, int, str | None]) -> str | None:
    """"it conceded 1 outright and 1 in part": a number joined by "and", "or", "but" or a comma to a count of
    the same sentence (its noun, adverbs or a preposition's phrase between), ending its clause as that one
    did, and no more than a partitive's whole."""
    prev_start, prev_end, prev_reason = prev
    if prev_reason is None or not prev_reason.startswith("a count of") or not _ends_clause(line, b):
        return None
    between = line[prev_end:a]
    if _STOP.search(between) or re.search(r"\d", between) or CRIT_RE.search(between) or len(between) > 40:
        return None
    join = _JOIN.fullmatch(between)
    if join is None or not join.group("conj").strip():
        return None
    if any(scoring_word(w) or w.lower() in AUXILIARIES or _ordinary_verb(w) and not _adverb_only(w)
           for w in re.findall(r"[A-Za-z]+", join.group("words"))):
        return None  # "1 outright, and is worth 6", "1 outright and gave 6": another clause
    wholes = [t for _, t in _partitives(line, _sentence_start(line, a), prev_start)]
    if n is None or any(t is not None and n > t for t in wholes):
        return None
    return "a count of the same thing again, its noun left out (joined to the count before it)"


def _adverb_only(w: str) -> bool:
    p = pos_of(w.lower())
    return "ADV" in p and not {"NOUN", "VERB"} & set(p)


def _sentence_start(line: str, a: int) -> int:
    """Where the sentence holding line[a] starts, looking back at most _REACH characters (linear on any line)."""
    w0 = max(0, a - _REACH)
    return max(w0, max(line.rfind(c, w0, a) for c in ".;!?") + 1)


def gapped_count(line: str, a: int, b: int, prev: tuple[int, int, str | None]) -> str | None:
    """"B found 5 affected groups, A only 3": a clause of a subject, "only"-like words and a number, after a
    clause whose verb counts a noun phrase; the second clause leaves out its verb and noun."""
    prev_start, prev_end, prev_reason = prev
    if prev_reason is None or not prev_reason.startswith("a count of") or "left out" in prev_reason:
        return None
    if not _CLAUSE_END.match(line, b):
        return None
    gap = _GAP.search(line, max(prev_start, a - 40), a)
    if gap is None:
        return None
    if not _party(gap.group("subj")) or any(not _gap_word(w) for w in re.findall(r"[A-Za-z]+", line[gap.end("subj"):a])):
        return None
    before = line[max(0, prev_start - 40):prev_start]
    verb = _FIRST_CLAUSE.search(before)
    if verb is None or not _ordinary_verb(verb.group("verb")):
        return None  # the first clause counts with a verb of its own ("found 5 groups"): not "a 7", "score 7"
    if not re.fullmatch(r"[A-Za-z'’\- \t]*", line[prev_end:gap.start()]):
        return None  # only the counted noun phrase between the two numbers
    return "a count of the same thing in a parallel clause, its verb and noun left out"


def _party(subject: str) -> bool:
    """A subject that can do what is counted: not a criterion, a score's word or the judge ("the score 6")."""
    last = subject.split()[-1]
    return not CRIT_RE.search(subject) and not scoring_word(last) and (
        last in ("A", "B", "1", "2") or last.lower() in ("it", "they", "he", "she") or last.lower() not in FUNCTION_WORDS)


def _gap_word(w: str) -> bool:
    """A word a gapped clause may hold before its number: "only", "just", "merely", or the first clause's verb."""
    low = w.lower()
    p = pos_of(low)
    return ("ADV" in p and not {"NOUN"} & set(p) and low not in ("more", "less", "overall", "now")) or _ordinary_verb(low)


def elided_count(line: str, a: int, b: int, n: float | None, last: tuple[int, int, str | None] | None) -> str | None:
    """Why the number at line[a:b] is a count whose noun is left out, or None (see the module's docstring).
    `last`: the number before it in the line, (start, end, reason), if any."""
    why = partitive_count(line, a, b, n)
    if why or last is None or last[0] < _sentence_start(line, a):
        return why
    return coordinated_count(line, a, b, n, last) or gapped_count(line, a, b, last)
