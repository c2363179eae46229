"""English word classes for reading numbers: the closed classes listed whole, every open-class word classed by
lemminflect's lexicon; whether the words after a number make it a count ("3 stakeholders", "3 were named")."""

from __future__ import annotations

import re
from functools import lru_cache

from ebtui.core.judgment.change_phrases import lemmas
from ebtui.core.judgment.vocabulary import CRIT_RE, MODIFIER_RULE, PREPOSITIONS, scoring_word
from ebtui.core.records import CRITERION_LABELS

# verb, adjective, adverb) is classed by lemminflect's lexicon instead (see pos_of), never by a list
_DETERMINERS = frozenset("a an the this that these those each every all both some any no another either neither"
                         .split())
_POSSESSIVES = frozenset("my your his her its our their".split())
_SUBJECT_PRONOUNS = frozenset("i you he she it we they".split())
_OBJECT_PRONOUNS = frozenset("me you him her it us them".split())
_REFLEXIVES = frozenset("myself yourself himself herself itself ourselves yourselves themselves".split())
_PARTICLES = frozenset("out up down off".split())  # of phrasal verbs ("points out", "sums up")
_CONJUNCTIONS = frozenset("and or but nor so yet because since though although unless until once while if when "
                          "where which who what".split())
AUXILIARIES = frozenset("am is are was were be been being has have had do does did would should could might may "
                         "must can will shall".split())
#: English's one past form that agrees with a plural subject ("3 were named"; "was" agrees with one): a class of one
_PLURAL_PAST = frozenset({"were"})
#: words no counted noun is: a number before one of them is not a count
FUNCTION_WORDS = (_DETERMINERS | _POSSESSIVES | _SUBJECT_PRONOUNS | _OBJECT_PRONOUNS | PREPOSITIONS | _PARTICLES
             | _CONJUNCTIONS | AUXILIARIES)
#: the rubric's own nouns (the words of its criteria's names, e.g. "stakeholder"): nouns where the lexicon lacks them
RUBRIC_NOUNS = frozenset(w.lower() for label in CRITERION_LABELS.values() for w in label.split()) | {"criterion"}
#: the scale's unit: "8 points" is a score, "3 points of tension" or "3 points raised" a count
_UNITS = frozenset({"point", "points", "pts", "pt", "mark", "marks"})


def _adverb(word: str) -> bool:
    """A word the lexicon has as an adverb and never as a noun or verb ("here", "really", "overall")."""
    p = pos_of(word)
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
    if not lemmas or {"NOUN", "ADJ", "ADV"} & set(lemmas) or low in FUNCTION_WORDS - AUXILIARIES:
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


@lru_cache(maxsize=8192)
def participle(word: str) -> bool:
    """A verb's past or participle form and no noun ("defended", "used", "named"), by lemminflect."""
    from lemminflect import getAllInflections, getAllLemmas

    low = word.lower()
    lemmas = getAllLemmas(low)
    return "NOUN" not in lemmas and any(low in getAllInflections(lemma).get(tag, ()) for lemma in lemmas.get("VERB", ())
                                        for tag in ("VBN", "VBD"))


@lru_cache(maxsize=8192)
def past_participle(word: str) -> bool:
    """A verb's past participle by lemminflect (VBN: "managed", "married"), whatever else the word may be."""
    from lemminflect import getAllLemmas, getInflection

    low = word.lower()
    return any(low in getInflection(lemma, "VBN") for lemma in getAllLemmas(low).get("VERB", ()))


@lru_cache(maxsize=8192)
def verb_form(word: str) -> bool:
    """A verb's finite or participle form by lemminflect ("handled", "conceded", "answers", "found"), or a form
    its lexicon lemmatises to a verb but does not list ("proven")."""
    from lemminflect import getAllInflections, getAllLemmas

    low = word.lower()
    lemmas = getAllLemmas(low)
    return any(low in getAllInflections(lemma).get(tag, ()) for lemma in lemmas.get("VERB", ())
               for tag in ("VBD", "VBZ", "VBN", "VBP")) or (
        "NOUN" not in lemmas and any(low != lemma for lemma in lemmas.get("VERB", ())))


TOKEN = re.compile(r"[ \t]*([A-Za-z][A-Za-z'’\-]*)")


@lru_cache(maxsize=8192)
def pos_of(word: str) -> dict[str, tuple[str, ...]]:
    """The parts of speech a word can be (lemminflect's English lexicon), by the lemma for each."""
    from lemminflect import getAllLemmas  # (loads its lexicon: half a second)

    low = word.lower().replace("’", "'")
    if low in FUNCTION_WORDS:
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

    return low in RUBRIC_NOUNS or any(lemma in RUBRIC_NOUNS for lemma in getAllLemmasOOV(low, "NOUN").get("NOUN", ()))


@lru_cache(maxsize=8192)
def _plural_noun(low: str) -> bool:
    """A noun's plural form by lemminflect ("groups", "criteria", "people", "sheep"), or a plural the lexicon
    lacks ("stakeholders"); "total", "now", "team" are not."""
    from lemminflect import getAllInflections, getAllLemmas, getInflection

    nouns = getAllLemmas(low).get("NOUN", ())
    if not nouns:
        return bool(pos_of(low).get("NOUN")) and low.endswith("s") and not low.endswith("ss")
    # (where the lexicon lists no noun forms, "cans", its rules make the plural)
    return any(low in (getAllInflections(lemma, upos="NOUN").get("NNS") or getInflection(lemma, "NNS"))
               for lemma in nouns)


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
    p = pos_of(low)
    if not p:
        return False
    if "NOUN" in p and n == 1 and low.endswith("s") and low not in p["NOUN"] and ("VERB" in p or not _LEXICON_NOUNS(low)):
        return False  # "1 blarns them", "1 stands": a plural after one is no count (unless only a noun)
    if "NOUN" in p and _takes_object(after) and low not in _LEXICON_NOUNS(low):
        return False  # a word the lexicon lacks, before an object: a verb ("7 blarns them")
    after_noun = after is not None and "NOUN" in pos_of(after.rstrip("'’"))  # ("members'": a plural's possessive)
    if "ADV" in p and "ADJ" not in p and not _plural_noun(low) and not after_noun:
        return False  # an adverb, not a counted thing: "8 overall", "1 here", "6 apiece", "7 now"
    if n is not None and n != 1 and "NOUN" in p and not _plural_noun(low):
        # after a number other than one a counted noun is plural: a singular noun can only modify the head that
        # follows ("4 team members"), and where none follows nothing is counted ("7 total")
        # (an adjective that is also a noun, before another adjective, modifies too: "2 abnormal able abilities")
        return None if after_noun or ("ADJ" in p and "ADV" not in p and after is not None
                                      and "ADJ" in pos_of(after.rstrip("'’"))) else False
    if after in ("them", "him", "us", "me") or (n == 1 and after in _REFLEXIVES):
        return False  # no noun phrase goes on with an object-only pronoun: the word is a verb ("2 glands them",
        # "1 spelts themselves")
    if "NOUN" in p and "VERB" not in p:
        if ("ADJ" in p or "ADV" in p) and after is not None and pos_of(after).get("NOUN"):
            return None  # "3 key stakeholders": a modifier before the noun
        return True
    if "NOUN" in p:  # a noun or a verb: "points", "concerns", "case", "team"
        verb_forms = p["VERB"]
        if after is not None and "NOUN" in pos_of(after) and "VERB" not in pos_of(after) and not _takes_object(after):
            return None  # "4 team members": a noun modifying the next one
        if low.endswith("s") and low not in verb_forms:
            # plural noun or singular verb ("3 concerns were raised" / "8 remains apt"): a plural only after a
            # number other than one, and where what follows is no verb's complement: the end of the phrase,
            # "of", or a verb ("were", "raised")
            if n is None or n == 1:
                return False
            if after is None or after == "of" or (after in FUNCTION_WORDS and not _takes_object(after)) or (
                    _adverb(after)):
                return True  # "3 premises and a conclusion", "2 gaps in the analysis"
            if after in _SUBJECT_PRONOUNS and after2 is not None and _finite_verb(after2):
                return True  # "3 reasons it mattered": a noun, then a clause about it
            if not placed:
                return True  # "covered 4 groups to Team A's 2": a number no score's place holds counts
            q = pos_of(after)
            if past_participle(after):
                return True  # "5 remedies managed", "3 fans married": a noun and the clause reduced after it
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
        m = TOKEN.match(line, pos)
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
        if nxt == "of" or (nxt is not None and nxt not in FUNCTION_WORDS and nxt not in _UNITS
                           and "VERB" in pos_of(nxt) and nxt.endswith(("ed", "en"))):
            return f"a count of {words[0]}"  # "3 points of tension", "4 points raised"
        if n == 1 and first in ("point", "mark") and nxt not in ("out", "for", "on"):
            return f"a count of one {first}"  # "conceded 1 point"
        return None
    if n is not None and n != 1 and _plural_verb(first):
        return "a count (a plural verb follows it)"
    if first == "of" and len(words) > 1 and (words[1].lower() in _DETERMINERS | _POSSESSIVES or words[1] == "them"):
        return "a count (part of a group: \"3 of the cases\")"
    before = _NUMBER_BEFORE.search(line, max(0, end - 40), end)
    rate = _RATE.match(line, end)
    if rate and _rate_noun(rate.group("noun"), rate.group("det").lower() == "per") and (
            rate.group("det").lower() == "per" or not (before and _LABEL_BEFORE.search(line, max(0, before.start() - 12),
                                                                                         before.start()))):
        return f"a rate ({rate.group('det')} {rate.group('noun')})"  # (not "Consistency: 8 a strength")
    placed = _in_score_place(line, before.start()) if before else True
    for i, w in enumerate(words[:4]):
        after = words[i + 1] if i + 1 < len(words) else None
        after2 = words[i + 2].lower() if i + 2 < len(words) else None
        name = _name(w, any(re.search(r"[a-z]", x) for x in words[i + 1:]), n)
        if name == "head":
            return f"a count of {' '.join(words[:i + 1])}"  # "5 NGOs"
        if name == "modifier":
            continue  # "3 ICU nurses", "2 WHO reports", "4 Oxfam volunteers": a name modifying the noun after it
        # a team's bare letter after the phrase is a name, not the article ("the 3 groups A missed"); a name that
        # modifies what follows it stands as a noun would ("2 abnormal ICU abilities")
        if after is not None and after not in ("A", "B") and _name(after, any(re.search(r"[a-z]", x) for x in words[i + 2:]),
                                                                   n) == "modifier":
            after = _A_NOUN
        head = _is_noun_head(w, None if after in ("A", "B") else (after.lower() if after else None), n, after2,
                             placed)
        if head is True:
            return f"a count of {' '.join(words[:i + 1])}"
        if head is False:
            return None
    return None


#: a rate: the number, then "per" and a noun ("2 per family"), or "a", "an", "each", "every" and a noun that ends
#: its phrase ("3 a day", "2 each week"); never "7 each" (a score for two criteria) nor "per the rubric"
_RATE = re.compile(r"[ \t]+(?P<det>per|a|an|each|every)[ \t]+(?P<noun>[a-z]+)(?![A-Za-z'’\-])"
                   r"(?=[ \t]*(?:[.,;:!?)—–]|$)|[ \t]+(?:in|on|at|for|through|during|over|across|of|with|and|or|but|to"
                   r"|until|from|since|throughout)(?![A-Za-z]))")
#: a word that is nothing but a noun: what a name modifying the next word is classed as, for the word before it
_A_NOUN = "thing"
_LABEL_BEFORE = re.compile(r"(?:^|[:=→⇒|(\[]|[-–—][ \t])[ \t*_\"']*$")
#: what a "per" phrase of attribution names ("8 per rubric"): the rubric's documents, never a rate's unit
_ATTRIBUTION = frozenset({"rubric", "scale", "anchor", "guideline", "standard", "instruction", "definition",
                          "description", "prompt", "criterion", "criteria", "team", "side", "judge", "note"})


def _rate_noun(word: str, per: bool) -> bool:
    """A noun a rate is per: after "per" any noun (not the rubric's documents); after "a", "each", "every" a
    word that is nothing but a singular noun ("day", "family"; not "piece", "bit": verbs too)."""
    low = word.lower()
    p = pos_of(low)
    if "NOUN" not in p or scoring_word(low) or low in _ATTRIBUTION or low.rstrip("s") in _ATTRIBUTION | RUBRIC_NOUNS:
        return False
    return per or (set(p) == {"NOUN"} and not low.endswith("s"))


#: an acronym ("ICU", "WHO", "EU"): two to six capitals; its plural ("NGOs")
_ACRONYM = re.compile(r"(?P<stem>[A-Z]{2,6})(?P<pl>s)?")


def _name(word: str, lower_after: bool, n: float | None) -> str:
    """A name in a noun phrase: "head" for an acronym's plural after a number other than one ("5 NGOs");
    "modifier" for an acronym or a capitalised word the lexicon lacks ("3 ICU nurses", "4 Oxfam volunteers");
    "" for any other word, a criterion's or a team's name (classed as words are)."""
    if CRIT_RE.fullmatch(word) or word.lower() in ("team", "teams"):
        return ""
    m = _ACRONYM.fullmatch(word)
    if m and (m.group("pl") or lower_after):  # (not a phrase in capitals: "7 GREAT POINTS")
        return "head" if m.group("pl") and n is not None and n != 1 else "modifier"
    low = word.lower()
    if re.fullmatch(r"[A-Z][a-z]{2,}", word) and low not in FUNCTION_WORDS and not lemmas(low):
        return "modifier"
    return ""




def modifier(word: str) -> bool:
    """A word that modifies as adjectives and adverbs do, by lemminflect ("clear", "very"); a hyphenated word
    whose parts all are, or are a past participle ("well-earned", "hard-won")."""
    parts = word.lower().replace("’", "'").split("-")
    if len(parts) == 1:
        return bool({"ADJ", "ADV"} & set(pos_of(parts[0])))
    return all(p and ({"ADJ", "ADV"} & set(pos_of(p)) or past_participle(p)) for p in parts)


MODIFIER_RULE.append(modifier)  # the reader takes "a clear 8" as the label's value by this (see vocabulary.score_in)
