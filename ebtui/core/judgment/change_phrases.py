"""Change phrases by structure, for the late-revision net (revisions.py).

English's closed classes are listed whole; every other word is classed by lemminflect. A change with no value
of its own is a quantity and whatever noun follows it, with a direction (a particle, a comparative, "by"),
attached to a score (the judge or a score its subject, a score its object); see docs/JUDGMENT.md, "Late
revisions"."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ebtui.core.judgment.vocabulary import CRIT_RE, SCORE_LEMMAS, WORD_VALUES

# English's closed classes this module reads structure by (no open-class word is listed: verbs, nouns and
# adjectives are told by lemminflect's lexicon)
ARTICLES = frozenset({"a", "an"})
DETERMINERS = frozenset("a an the this that these those each every all both some any no another either neither "
                         "my your his her its our their".split())
OBJECT_PRONOUNS = frozenset("it that this them him her".split())
SUBJECTS = frozenset("i we you he she they it i'm i'll i'd we'll we'd let's".split())
MODALS = frozenset("to will would should shall could can may might must 'll 'd".split())
COPULAS = frozenset("be is was are were been being am".split())
AUXILIARIES = COPULAS | frozenset("has have had do does did having".split()) | MODALS
#: directional particles and comparatives of quantity (a change's direction: "a point off", "up a notch")
PARTICLES = frozenset("up down off back".split())
QUANTITY_COMPARATIVES = frozenset("more less fewer".split())
#: prepositions that take a change's target ("down to six", "toward six", "put it at seven")
TARGET_PREPOSITIONS = frozenset("to toward towards at into".split())
PUNCT_VALUE = frozenset(":=—–-(")
CLOSED = DETERMINERS | OBJECT_PRONOUNS | SUBJECTS | AUXILIARIES | PARTICLES | TARGET_PREPOSITIONS | frozenset(
    "of in on for with by from than and or but nor so as not".split())
#: words before an article that make what follows no value of the cell: "short of a perfect score", "rather than
#: a six", "above a seven" (a preposition of comparison or exclusion)
NOT_THE_VALUE = frozenset("of than from without beyond above below over under instead rather".split())
NEGATION = frozenset("not never no nor".split())


@dataclass(frozen=True)
class Tok:
    text: str
    low: str
    start: int
    end: int


@dataclass
class Value:
    at: int  # where it starts in the unit
    shown: str
    value: int | None  # None: a change with no value of its own, or a grade
    moves: bool = False  # a change ("a point off"): moves whatever was read
    ref: str | None = None  # the criterion whose value it is ("to match its principle articulation score")


@lru_cache(maxsize=8192)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas  # type: ignore[import-untyped]

    return dict(getAllLemmas(word))


@lru_cache(maxsize=8192)
def verb_form(word: str) -> str | None:
    """The verb form a word can be by lemminflect ("ing", "ed", "s", "base"), or None: no verb."""
    from lemminflect import getAllInflections

    low = word.lower().replace("’", "'")
    if low in AUXILIARIES or low in DETERMINERS or low in OBJECT_PRONOUNS or low in PARTICLES:
        return None
    for lemma in lemmas(low).get("VERB", ()):
        forms = getAllInflections(lemma)
        for tag, name in (("VBG", "ing"), ("VBD", "ed"), ("VBN", "ed"), ("VBZ", "s"), ("VB", "base")):
            if low in forms.get(tag, ()) or (tag == "VB" and low == lemma):
                return name
    if lemmas(low).get("VERB"):  # a form the inflection table lacks ("daring"): by its ending
        return "ing" if low.endswith("ing") else "ed" if low.endswith(("ed", "en")) else "s" if low.endswith("s") \
            else "base"
    return None


def is_verb(toks: list[Tok], i: int) -> bool:
    """Whether toks[i] stands as a verb: a verb form not inside a noun phrase (after a determiner or a
    preposition), a base form only after a modal, "to", a subject or at a clause's start ("make it seven")."""
    form = verb_form(toks[i].low)
    if form is None:
        return False
    prev = toks[i - 1].low if i > 0 else ""
    if prev in DETERMINERS and prev not in OBJECT_PRONOUNS:
        return False
    if form in ("ing", "ed"):
        return True
    if form == "s":
        return not prev or prev.isalpha()  # "it pulls", "Team A's consistency pulls"
    if prev in MODALS or prev in SUBJECTS or prev.endswith(("'m", "'ll", "'d")):
        return True  # "I'll lower", "to raise", "we bump"
    # an imperative opens its clause and takes an object: "make it seven", "lower Team A's consistency"
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    return (not prev or prev in (";", ":", ",", "—", "–", "(", "and", "then", "so", "just")) and (
        nxt in OBJECT_PRONOUNS or nxt in DETERMINERS or nxt == "team" or bool(CRIT_RE.fullmatch(nxt)))


def verb_before(toks: list[Tok], i: int, window: int = 12) -> int | None:
    for j in range(i - 1, max(-1, i - 1 - window), -1):
        if toks[j].text in ".;!?":
            return None
        if is_verb(toks, j):
            return j
    return None


@lru_cache(maxsize=8192)
def comparative(word: str) -> bool:
    from lemminflect import getAllInflections

    if word in QUANTITY_COMPARATIVES:
        return True
    return any(word in getAllInflections(lemma).get(tag, ()) for cls in ("ADJ", "ADV")
               for lemma in lemmas(word).get(cls, ()) for tag in ("JJR", "RBR"))


def object_between(toks: list[Tok], v: int, q: int) -> bool:
    """Whether the words between a verb (v) and q are its object: a pronoun, or a phrase naming a criterion."""
    span = toks[v + 1:q]
    if not span or len(span) > 7:
        return False
    if len(span) == 1 and span[0].low in OBJECT_PRONOUNS:
        return True
    return any(CRIT_RE.fullmatch(t.text) for t in span) or (span[0].low in DETERMINERS and any(
        score_noun(t.low) for t in span))


def score_subject(toks: list[Tok], v: int) -> bool:
    """Whether the verb at v has a score for its subject: a criterion's name or a score noun right before it
    (not "it": "it conceded two points" is the team)."""
    return v > 0 and (score_noun(toks[v - 1].low) or bool(CRIT_RE.fullmatch(
        toks[v - 1].text)) or (v > 1 and bool(CRIT_RE.fullmatch(f"{toks[v - 2].text} {toks[v - 1].text}"))))


def by_change(toks: list[Tok], by: int) -> bool:
    """Whether "by N" measures a change of a score: after a particle ("goes up by one"), or after a verb whose
    object or subject is a score ("lower it by 2", "consistency rises by one"; not "won by one")."""
    v = verb_before(toks, by)
    if v is None or any(t.low in COPULAS for t in toks[v + 1:by]):
        return False
    return toks[by - 1].low in PARTICLES or object_between(toks, v, by) or (v == by - 1 and score_subject(toks, v))


@lru_cache(maxsize=4096)
def score_noun(word: str) -> bool:
    """Whether `word` is a noun of the rubric's score words (SCORE_LEMMAS: "score", "mark", "rating", "grade",
    "point", …), by lemminflect's noun lemmas."""
    return any(lemma in SCORE_LEMMAS for lemma in lemmas(word.lower()).get("NOUN", ()))


@lru_cache(maxsize=8192)
def _noun(word: str) -> bool:
    """A noun by lemminflect, not a closed-class word, a number word or a comparative ("more", "better")."""
    return word.isalpha() and word not in CLOSED and word not in WORD_VALUES and "NOUN" in lemmas(word) \
        and not comparative(word)


#: the judge as a verb's subject (first person), and what opens a clause (an imperative's or a gerund's place)
#: verbs whose second noun phrase is an object or the object's complement, not a measure ("give it an edge",
#: "call it a draw", "make it a strength"): a closed grammatical class (double-object and complex-transitive verbs)
TWO_OBJECT_VERBS = frozenset(
    "give grant award hand offer lend owe send show tell teach bring buy get find make call name consider deem "
    "judge think label term declare count rate keep leave deny allow win earn cost pay serve save".split())
_JUDGE = frozenset("i we i'm i'll i'd i've we're we'll we'd we've let's me us".split())
_SINGLE = frozenset("a an one another".split())
_CLAUSE_OPEN = frozenset(";:,—–(".split() + ["", "and", "then", "so", "just", "."])


def verb_lemma(word: str) -> str:
    """The verb lemma of a word form ("gives" → "give"), or the word itself."""
    verbs = lemmas(word).get("VERB", ())
    return verbs[0] if verbs else word


def _quantity(toks: list[Tok], q: int) -> int | None:
    """Where the quantity of the noun at q starts: "a notch", "one tick", "another peg", "a full point", "a couple
    of pegs" (an article and a noun and "of"), or None."""
    d = q - 1
    if d >= 0 and toks[d].low.isalpha() and toks[d].low not in CLOSED and "ADJ" in lemmas(toks[d].low) \
            and d >= 1 and toks[d - 1].low in ARTICLES:
        d -= 1  # "a full point", "a whole notch"
    if d >= 2 and toks[d].low == "of" and toks[d - 2].low in ARTICLES and _noun(toks[d - 1].low):
        return d - 2  # "a couple of pegs", "a handful of points"
    if d >= 0 and toks[d].text == "A" and d > 0 and toks[d - 1].text not in ".!?:":
        return None  # "(A more proactively": a team's letter, not an article
    if d >= 0 and (toks[d].low in ARTICLES or toks[d].low in WORD_VALUES or toks[d].text.isdigit()
                   or toks[d].low == "another"):
        if (toks[d].low in WORD_VALUES or toks[d].text.isdigit()) and d > 0 and toks[d - 1].low in ARTICLES | {"the"}:
            return None
        return d
    return None


def _attached(toks: list[Tok], v: int, q: int) -> bool:
    """Whether the change a verb (v) makes is a score's: the judge its subject or an imperative or gerund opening
    its clause ("I'm knocking a notch off", "take a peg off"), a score its subject ("consistency slips a notch"),
    "it" or a score its object ("bump it up a tick"), or the score right after the particle ("… off their
    consistency")."""
    k = v - 1
    while k >= 0 and (toks[k].low in AUXILIARIES or toks[k].low in NEGATION or (
            "ADV" in lemmas(toks[k].low) and toks[k].low not in CLOSED and "NOUN" not in lemmas(toks[k].low))):
        k -= 1
    if k < 0 or toks[k].low in _JUDGE or (toks[k].text in _CLAUSE_OPEN and k == v - 1
                                          and verb_form(toks[v].low) in ("base", "ing")):
        return True
    if score_subject(toks, v):
        return True
    span = [t for t in toks[v + 1:q] if t.low not in PARTICLES]
    if span and len(span) <= 7 and (span[0].low in ("it", "that", "this") or any(
            CRIT_RE.fullmatch(t.text) for t in span) or any(score_noun(t.low) for t in span)):
        return True
    after = toks[q + 1:q + 6]
    return bool(after) and after[0].low in PARTICLES and any(
        t.low == "it" or CRIT_RE.fullmatch(t.text) or score_noun(t.low) for t in after[1:])


def changes(toks: list[Tok]) -> list[Value]:
    """Changes with no value of their own, by structure: a quantity and the noun after it ("a point", "one notch",
    "a couple of pegs", whatever the noun) with a particle or comparative after it ("knocking a notch off", "a
    tick lower"), or after a verb's object and a particle or "by" ("bump it up a notch", "lower it by a point"),
    or right after the object; a noun other than the rubric's own unit ("point", "mark") only where the change
    is attached to a score (_attached)."""
    out = []
    for q in range(1, len(toks)):
        if not _noun(toks[q].low) or CRIT_RE.fullmatch(toks[q].text):
            if toks[q - 1].low == "by" and (toks[q].low in WORD_VALUES or toks[q].text.isdigit()) and \
                    not (q + 1 < len(toks) and _noun(toks[q + 1].low)) and by_change(toks, q - 1):
                out.append(Value(toks[q].start, f"by {toks[q].text}", None, moves=True))  # "goes up by one"
            continue
        d = _quantity(toks, q)
        if d is None:
            continue
        after = toks[q + 1].low if q + 1 < len(toks) else ""
        after2 = toks[q + 2].low if q + 2 < len(toks) else ""
        before = toks[d - 1].low if d > 0 else ""
        if after in ("of", "about", "that", "which", "where", "when", "who"):
            continue  # "made a point of answering", "a point about the nurses": an argument, no quantity
        v = verb_before(toks, d)
        if v is None or any(t.low in COPULAS for t in toks[v + 1:d]):
            continue  # ("… which is why its score is 3 points higher": a difference, stated)
        moved = False
        if after in PARTICLES or (comparative(after) and after2 not in ("than", "to")):
            moved = True  # "knocking a point off", "put it a point lower" (not "a point higher than B's")
        elif before in PARTICLES or before == "by":
            moved = object_between(toks, v, d - 1)  # "bump it up a notch" (not "picked up a point")
        elif v < d - 1:
            # "raise it a notch" (not "call it a draw", "gives it an edge": a verb of two objects or of an object
            # and its complement names a thing, no measure; nor "argued that a school …": "that" opens a clause)
            moved = object_between(toks, v, d) and not (d - v == 2 and toks[v + 1].low in ("that", "this")) and (
                score_noun(toks[q].low) or verb_lemma(toks[v].low) not in TWO_OBJECT_VERBS)
        else:  # "Team A's consistency drops a notch" (not "Team B raised a point"; "recognition covered 4 groups"
            # is a count: a noun other than the rubric's unit, with no direction, only after "a", "one", "another")
            moved = score_subject(toks, v) and (score_noun(toks[q].low) or toks[d].low in _SINGLE)
        if moved and (score_noun(toks[q].low) or _attached(toks, v, q)):
            out.append(Value(toks[d].start, " ".join(t.text for t in toks[d:q + 1]), None, moves=True))
    return out
