"""The text facts of the analysis columns (frame.judgment_facts): which frameworks a text mentions and the first
sentence that mentions each (`framework_facts`), and a text's words and formatting elements (`style_counts`) — what the
documented lexicon reading (ebtui.core.frameworks) and style.py give, found faster; tests hold them equal."""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence

from ebtui.core.frameworks import FRAMEWORK_LEXICON, FRAMEWORKS, AnyOf, fold, sentences

_ANY: dict[str, tuple[AnyOf, bool]] = {}
#: what could let a match cross a sentence boundary or look outside its sentence
_CROSSING = re.compile(r"\\s|\(\?[=!<]|\^|\$|\\n|(?<!\\)\.")


def _any_of(fw: str) -> tuple[AnyOf, bool]:
    """Where any of the framework's lexicon patterns matches, and whether a match can only lie inside one
    sentence (no pattern can cross a boundary or look past it)."""
    if fw not in _ANY:
        pats = FRAMEWORK_LEXICON[fw]
        _ANY[fw] = (AnyOf(pats), not any(_CROSSING.search(p) for p in pats))
    return _ANY[fw]


#: what a lexicon pattern may open with as plain text (lower-case letters, digits, spaces, hyphens, apostrophes)
_PLAIN = re.compile(r"[a-z0-9 '-]*")


def literal_prefix(pattern: str) -> str:
    """The text every match of a lower-case lexicon pattern begins with (after its leading \\b), as far as it
    is plain characters no quantifier applies to; "" when there is none or the pattern has an alternative
    outside every group."""
    depth, k = 0, 0
    while k < len(pattern):
        c = pattern[k]
        if c == "\\":
            k += 1
        elif c == "[":
            close = pattern.find("]", k + 2)
            k = close if close >= 0 else len(pattern)
        elif c in "()":
            depth += 1 if c == "(" else -1
        elif c == "|" and depth == 0:
            return ""
        k += 1
    body = pattern.removeprefix("\\b")
    plain = _PLAIN.match(body)
    lit = plain.group(0) if plain else ""
    if body[len(lit):len(lit) + 1] in ("?", "*", "+", "{"):
        lit = lit[:-1]  # (the quantifier applies to its last character)
    return lit


class _Starts:
    """Where a match of each framework's patterns could start in a text: every place its folded text (`fold`)
    holds one of the literals the patterns open with, found in one pass for all frameworks by an Aho-Corasick
    automaton (ahocorasick_rs, in Rust) — the folded text holds a lower-case pattern's literal wherever the
    pattern matches the text case-insensitively (frameworks._Fold), so no place is missed; the exact pattern
    then confirms each place in order, as AnyOf does with the places its scan finds. A framework with a
    pattern without such a literal (or upper-case letters) is left to AnyOf (`covered` False)."""

    def __init__(self) -> None:
        import ahocorasick_rs

        lits: dict[str, set[int]] = {}
        self.covered = []
        for k, fw in enumerate(FRAMEWORKS):
            pats = FRAMEWORK_LEXICON[fw]
            found = [literal_prefix(p) for p in pats]
            ok = all(found) and _any_of(fw)[0].scan is not None
            self.covered.append(ok)
            for lit in found if ok else ():
                lits.setdefault(lit, set()).add(k)
        self.literals = list(lits)
        self.owners = [sorted(lits[x]) for x in self.literals]
        self.lengths = [len(x) for x in self.literals]
        self.auto = ahocorasick_rs.AhoCorasick(self.literals, matchkind=ahocorasick_rs.MATCHKIND_STANDARD) \
            if self.literals else None
        self.n_covered = sum(self.covered)
        self.exact = [_any_of(fw)[0].exact for fw in FRAMEWORKS]

    def first(self, text: str, folded: str) -> list[re.Match[str] | None]:
        """Per framework, the first match of its patterns in `text` (`folded`: fold(text)), for the covered
        frameworks (None for the others): the places the automaton finds, in order of their start, each
        confirmed by the framework's exact pattern — the first place confirmed is where its search finds it."""
        found: list[re.Match[str] | None] = [None] * len(FRAMEWORKS)
        if self.auto is None:
            return found
        hits = self.auto.find_matches_as_indexes(folded, overlapping=True)
        hits.sort(key=_START)  # (stable: a place's literals in any order, each framework tried once there)
        left = self.n_covered
        owners, exact = self.owners, self.exact
        for i, start, _end in hits:
            for k in owners[i]:
                if found[k] is None and (m := exact[k].match(text, start)) is not None:
                    found[k] = m
                    left -= 1
            if not left:
                break
        return found


_START = operator.itemgetter(1)
_STARTS: list[_Starts | None] = []


def _starts() -> _Starts | None:
    """The one _Starts (None without ahocorasick_rs: AnyOf finds every match, more slowly)."""
    if not _STARTS:
        try:
            _STARTS.append(_Starts())
        except ImportError:
            _STARTS.append(None)
    return _STARTS[0]


_LEXICON: list[tuple[str, AnyOf, bool]] = []


def _lexicon() -> list[tuple[str, AnyOf, bool]]:
    """(framework, its AnyOf, whether a match lies inside one sentence), in FRAMEWORKS order (made once)."""
    if not _LEXICON:
        _LEXICON.extend((fw, *_any_of(fw)) for fw in FRAMEWORKS)
    return _LEXICON


def framework_facts_any(text: str) -> tuple[int, dict[str, str]]:
    """`framework_facts` for any lexicon: the frameworks a text mentions as bits and the first sentence for each, found faster
    than `framework_mentions`: the first sentence in which any of a
    framework's patterns matches holds the first match in the whole text, when no pattern can cross a
    sentence boundary (checked per framework; else its sentences are searched one by one)."""
    bits = 0
    quotes: dict[str, str] = {}
    split: list[str] | None = None
    folded = fold(text)
    finder = _starts()
    firsts = finder.first(text, folded) if finder is not None else None
    at: list[tuple[str, int]] = []  # (framework, where its first match starts) to quote
    for k, (fw, pat, inside) in enumerate(_lexicon()):
        m = firsts[k] if firsts is not None and finder is not None and finder.covered[k] else pat.search(text, folded)
        if m is None:
            continue
        if inside:
            bits |= 1 << k
            at.append((fw, m.start()))
            continue
        split = split if split is not None else sentences(text)
        for sentence in split:
            if pat.search(sentence):
                bits |= 1 << k
                quotes[fw] = sentence
                break
    if at:
        for fw, pos in at:
            quotes[fw] = sentence_around(text, pos)
        if len(quotes) > len(at):  # (a framework searched sentence by sentence: keep FRAMEWORKS order)
            quotes = {fw: quotes[fw] for fw in FRAMEWORKS if fw in quotes}
    return bits, quotes


class _Fast:
    """`framework_facts`'s reading where every framework is covered by the automaton (`_Starts.covered`) and no pattern can
    match across a sentence boundary (`_any_of`'s second value): one scan of the folded text, the places in order
    of their start, each framework's exact pattern tried where its literals are — the first place confirmed is
    where its search finds the first match, and the sentence around it is the first sentence that mentions it."""

    def __init__(self, starts: _Starts) -> None:
        assert starts.auto is not None
        self.auto, self.owners, self.exact = starts.auto, starts.owners, starts.exact


_FAST: list[_Fast | None] = []


def _fast() -> _Fast | None:
    if not _FAST:
        finder = _starts()
        ok = finder is not None and finder.auto is not None and all(finder.covered) and all(
            _any_of(fw)[1] for fw in FRAMEWORKS)
        _FAST.append(_Fast(finder) if ok and finder is not None else None)
    return _FAST[0]


def framework_facts(text: str) -> tuple[int, dict[str, str]]:
    """The frameworks a text mentions as bits (FRAMEWORKS order) and the first sentence for each — what
    `framework_mentions(text)[fw][0].sentence` gives (`_Fast`'s reading, else `framework_facts_any`'s)."""
    fast = _FAST[0] if _FAST else _fast()
    if fast is None:
        return framework_facts_any(text)
    hits = fast.auto.find_matches_as_indexes(text.lower() if text.isascii() else fold(text), overlapping=True)
    if not hits:
        return 0, {}
    hits.sort(key=_START)  # (stable: a place's literals in any order, each framework tried once there)
    at: dict[int, int] = {}  # framework index -> where its first match starts
    owners, exact = fast.owners, fast.exact
    for i, start, _end in hits:
        for k in owners[i]:
            if k not in at and exact[k].match(text, start) is not None:
                at[k] = start
    bits = 0
    quotes: dict[str, str] = {}
    for k in sorted(at):
        bits |= 1 << k
        quotes[FRAMEWORKS[k]] = sentence_around(text, at[k])
    return bits, quotes


#: a sentence's end: . ! or ? followed by a space (SENTENCE_SPLIT's first alternative; the other is a line break)
_PUNCT_SPACE = re.compile(r"[.!?](?=\s)")
#: the last such end in a stretch of text (greedy: re backtracks from the stretch's end, in C); a . ! ? just
#: before the stretch's end is never one here (the character after it, where a match starts, is no space)
_LAST_PUNCT_SPACE = re.compile(r"(?s:.*)[.!?](?=\s)")


def sentence_around(text: str, pos: int) -> str:
    """The sentence (as `sentences` splits and strips it) holding character `pos` (not a space): it ends at
    the first line break, or . ! ? followed by a space (kept), from `pos` on, and begins after the last of
    them before `pos` — found by a few searches from `pos` instead of every separator before it."""
    m = _PUNCT_SPACE.search(text, pos)
    end = m.end() if m is not None else len(text)
    nl = text.find("\n", pos, end)
    if nl >= 0:
        end = nl
    start = text.rfind("\n", 0, pos) + 1
    if (last := _LAST_PUNCT_SPACE.match(text, start, pos)) is not None:
        start = last.end()
    return text[start:end].strip()


#: style.py's block pattern, found from each line break (a literal re skips ahead to) instead of every position
_BLOCK_AFTER_BREAK = re.compile(r"\n[ \t]*(?:#{1,6}[ \t]|[-*+][ \t]|\d{1,3}[.)][ \t]|\||>)")
_BLOCK_AT_START = re.compile(r"[ \t]*(?:#{1,6}[ \t]|[-*+][ \t]|\d{1,3}[.)][ \t]|\||>)")
#: style.py's span pattern, as it is there (tests/unit/analysis/test_cold_build.py checks the counts agree)
_SPAN = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__|(?<![*\w])\*[^*\s][^*\n]*\*(?!\*)|(?<![_\w])_[^_\s][^_\n]*_(?![_\w])"
                   r"|`[^`\n]+`")


#: an ASCII byte -> " " where str.split() cuts (str.isspace), else "x"
_SPACES = bytes(32 if chr(i).isspace() else 120 for i in range(256))


def words(text: str) -> int:
    """len(text.split()), without making the words: for ASCII text, the places a space is followed by another
    character (with the spaces mapped to " " and the rest to "x", one pass in C each)."""
    if text.isascii():
        marks = text.encode("ascii").translate(_SPACES)
        return marks.count(b" x") + marks.startswith(b"x")
    return len(text.split())


def style_counts(text: str) -> tuple[int, int]:
    """(words, formatting elements) of a text: what style.text_style gives, found faster — words are what
    str.split() cuts (\\S+ runs), a block element starts the text or follows a line break (never spanning
    one), and a span element needs a *, _ or ` in the text."""
    elements = len(_BLOCK_AFTER_BREAK.findall(text)) + (_BLOCK_AT_START.match(text) is not None)
    if "*" in text or "_" in text or "`" in text:
        elements += len(_SPAN.findall(text))
    return words(text), elements


def team_style(parts: Sequence[str]) -> tuple[int, int]:
    """`style_counts` of a team's texts joined by blank lines (style.team_text), from each text alone: a word,
    a block element (it starts a line) and a span element (never across a line break) lie within one text."""
    words = elements = 0
    for text in parts:
        w, e = style_counts(text)
        words += w
        elements += e
    return words, elements
