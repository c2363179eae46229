"""The columns' fast lexicon readings (text_facts.framework_facts: frameworks in one automaton scan; consistency_rules:
the four classes' cues in one scan) give exactly what a plain reading gives — kept here: split the text into
sentences, try every pattern of the lexicon on each — on texts of ordinary words with lexicon phrases put
in at random places, cased, punctuated and run into their neighbours at random. The phrases are drawn from
the patterns themselves (`_sample`), so every alternative of every pattern is exercised."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from ebtui.core import frameworks
from ebtui.core.analysis import text_facts
from ebtui.core.analysis.consistency_rules import classify_consistency
from ebtui.core.frameworks import CONSISTENCY_CUES, FRAMEWORK_LEXICON, FRAMEWORKS

WORDS = ("the", "a", "of", "we", "it", "not", "right", "rights", "duty", "care", "virtue", "means", "end",
         "principle", "case", "different", "same", "conclusion", "here", "however", "would", "is", "was",
         "reject", "expected", "value", "greatest", "net", "human", "practical", "moral", "wisdom", "social",
         "contract", "kantian", "utility", "rawlsian", "stoicism", "refinement", "tension", "distinguish",
         "applies", "holds", "analogous", "wrong", "narrow", "my", "original", "earlier", "good", "person")
#: what may stand between two words or phrases: spaces, sentence ends, line breaks, marks, nothing at all
GLUE = (" ", " ", " ", ". ", "! ", "? ", ".\n", "\n\n", ", ", "; ", " - ", "-", "'", "", ".", "\u00a0", " (", ") ")
#: characters re matches case-insensitively with an ASCII letter, and other non-ASCII word characters
ODD = ("\u212a", "\u017f", "\u0131", "\u0130", "é", "ß")


def _sample(pattern: str, rnd: random.Random) -> str:
    """A text the pattern matches (case-sensitively as written), drawn at random from the stdlib's parse of it."""
    from re import _parser  # type: ignore[attr-defined]

    def walk(items: Any) -> str:
        out = []
        for op_, arg in items:
            op = str(op_)
            if op == "LITERAL":
                out.append(chr(arg))
            elif op == "IN":
                lits = [chr(a) for o, a in arg if str(o) == "LITERAL"]
                out.append(rnd.choice(lits) if lits else "x")
            elif op == "BRANCH":
                out.append(walk(rnd.choice(arg[1])))
            elif op == "SUBPATTERN":
                out.append(walk(arg[3]))
            elif op in ("MAX_REPEAT", "MIN_REPEAT"):
                lo, hi, sub = arg
                out.extend(walk(sub) for _ in range(rnd.randint(lo, min(hi, lo + 3))))
            elif op == "CATEGORY":
                out.append(rnd.choice("stinoe"))
            elif op != "AT":
                raise AssertionError(f"{pattern}: {op} not sampled")
        return "".join(out)

    return walk(_parser.parse(pattern))


def _text(rnd: random.Random, phrases: list[str]) -> str:
    parts: list[str] = []
    for _ in range(rnd.randint(0, 30)):
        piece = rnd.choice(phrases) if rnd.random() < 0.3 else rnd.choice(WORDS)
        if rnd.random() < 0.2:
            piece = piece.upper() if rnd.random() < 0.5 else piece.title()
        if rnd.random() < 0.03:
            k = rnd.randrange(len(piece) + 1)
            piece = piece[:k] + rnd.choice(ODD) + piece[k:]
        parts.append(piece)
        parts.append(rnd.choice(GLUE))
    return "".join(parts)


def _phrases(table: dict[str, tuple[str, ...]], seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [_sample(p, rnd) for pats in table.values() for p in pats for _ in range(3)]


def _plain_frameworks(text: str) -> tuple[int, dict[str, str]]:
    """Per framework, the first sentence in which one of its patterns matches (the plain reading)."""
    pats = {fw: [re.compile(p, re.IGNORECASE) for p in FRAMEWORK_LEXICON[fw]] for fw in FRAMEWORKS}
    bits, quotes = 0, {}
    for k, fw in enumerate(FRAMEWORKS):
        for s in frameworks.sentences(text):
            if any(p.search(s) for p in pats[fw]):
                bits |= 1 << k
                quotes[fw] = s
                break
    return bits, quotes


def _plain_class(text: str) -> tuple[str, list[str], list[str]]:
    """The first class (in the rules' order) with a cue in some sentence: its sentences and cues (the plain
    reading: in each sentence, the first of the class's patterns that matches)."""
    for label in ("acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged", "kept_principle"):
        pats = [re.compile(p, re.IGNORECASE) for p in CONSISTENCY_CUES[label]]
        found = []
        for s in frameworks.sentences(text):
            m = next((m for p in pats if (m := p.search(s))), None)
            if m:
                found.append((s, m.group(0)))
        if found:
            return label, [s for s, _ in found], [c for _, c in found]
    return "unclassified", [], []


def test_sampled_phrases_match_their_own_pattern() -> None:
    rnd = random.Random(1)
    for pats in (*FRAMEWORK_LEXICON.values(), *CONSISTENCY_CUES.values()):
        for p in pats:
            for _ in range(5):
                phrase = _sample(p, rnd)
                assert re.fullmatch(p, phrase) or re.search(p, phrase), (p, phrase)


@pytest.mark.parametrize("seed", [1, 2])
def test_framework_reading_in_one_scan_equals_the_plain_reading(seed: int) -> None:
    rnd = random.Random(seed)
    phrases = _phrases(FRAMEWORK_LEXICON, seed)
    assert text_facts._fast() is not None  # (the one-scan reading is the one under test)
    found = 0
    for _ in range(600):
        text = _text(rnd, phrases)
        want = _plain_frameworks(text)
        assert text_facts.framework_facts(text) == want, text
        assert text_facts.framework_facts_any(text) == want, text
        found += bool(want[0])
    assert found > 300  # most texts mention some framework


@pytest.mark.parametrize("seed", [3, 4])
def test_consistency_classes_in_one_scan_equal_the_plain_reading(seed: int) -> None:
    rnd = random.Random(seed)
    phrases = _phrases(CONSISTENCY_CUES, seed)
    labels = set()
    for _ in range(600):
        text = _text(rnd, phrases)
        c = classify_consistency(text)
        assert (c.label, c.evidence, c.cues) == _plain_class(text), text
        labels.add(c.label)
    assert labels == {"acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged",
                      "kept_principle", "unclassified"}


def test_known_answers() -> None:
    bits, quotes = text_facts.framework_facts("We weigh costs.\nA Kantian view!  Greatest   good? The greatest good. Duties matter")
    assert quotes == {"consequentialist": "The greatest good.", "deontological": "A Kantian view!"}
    assert bits == 0b11
    assert text_facts.framework_facts("Nothing here: kantianism's cousin is xkant.") == (2, {"deontological": "Nothing here: kantianism's cousin is xkant."})
    assert text_facts.framework_facts("no framework at all") == (0, {})
    c = classify_consistency("The same principle applies. Yet a key difference: here it's fine.")
    assert (c.label, c.cues) == ("relevant_difference", ["key difference"])


def test_words_are_what_str_split_cuts() -> None:
    rnd = random.Random(5)
    chars = [chr(i) for i in range(128)] + ["\u00a0", "\u2003", "\u3000", "é", "\u0085"]
    assert text_facts.words("") == 0 and text_facts.words("  a  bb\tc\n") == 3 and text_facts.words("x") == 1
    for _ in range(4000):
        pool = rnd.choice([chars[:128], chars, [" ", "\t", "\n", "\x1c", "\x1f", "\x0b", "a", "b", "."]])
        text = "".join(rnd.choice(pool) for _ in range(rnd.randint(0, 30)))
        assert text_facts.words(text) == len(text.split()), repr(text)
