"""The documented lexicons the analysis reads text with: moral frameworks, consistency cues, disagreement
cues. Transparent rules, not a model: a sentence "mentions" a framework when one of its patterns matches
(case-insensitive, whole words). The README's "Analysis and reports" section repeats the lists; keep the
two in step. The report quotes the sentence that matched, so a reader can judge each hit.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

FRAMEWORKS: tuple[str, ...] = (
    "consequentialist",
    "deontological",
    "virtue",
    "care",
    "contractualist",
    "other",
)

#: framework -> regular expressions (matched case-insensitively against one sentence)
FRAMEWORK_LEXICON: dict[str, tuple[str, ...]] = {
    "consequentialist": (
        r"\bconsequentialis\w*",
        r"\butilitarian\w*",
        r"\bgreatest (?:good|number|happiness)\b",
        r"\bmaximi[sz]\w* (?:overall |total |aggregate |expected )?(?:welfare|well-?being|utility|happiness)\b",
        r"\bexpected (?:welfare|utility|value)\b",
        r"\bcost-benefit\b",
        r"\bnet (?:harm|benefit|welfare)\b",
        r"\baggregate (?:welfare|harm|benefit)\b",
    ),
    "deontological": (
        r"\bdeontolog\w*",
        r"\bkant\w*",
        r"\bcategorical imperative\b",
        r"\bmerely as (?:a )?means\b",
        r"\bmeans to an end\b",
        r"\bdut(?:y|ies)\b",
        r"\bobligations?\b",
        r"\brights?\b",
        r"\binviolab\w*",
        r"\bhuman dignity\b",
    ),
    "virtue": (
        r"\bvirtues?\b",
        r"\bvirtuous\b",
        r"\bvirtue ethic\w*",
        r"\baristotel\w*",
        r"\beudaimonia\b",
        r"\bhuman flourishing\b",
        r"\bpractical wisdom\b",
        r"\bphronesis\b",
        r"\bmoral character\b",
        r"\bwhat (?:a|the) (?:good|virtuous) person would\b",
    ),
    "care": (
        r"\bethics? of care\b",
        r"\bcare ethic\w*",
        r"\bcare[- ](?:perspective|based|ethics?)\b",
        r"\bcaring relationships?\b",
        r"\brelational (?:ethics|obligations?|responsibilit\w*)\b",
        r"\bgilligan\b",
        r"\bnoddings\b",
    ),
    "contractualist": (
        r"\bcontractualis\w*",
        r"\bcontractarian\w*",
        r"\bscanlon\w*",
        r"\brawls\w*",
        r"\bveil of ignorance\b",
        r"\bsocial contract\b",
        r"\boriginal position\b",
        r"\breasonably reject\w*",
        r"\bjustifiable to (?:each|everyone|all)\b",
    ),
    "other": (
        r"\bnatural law\b",
        r"\bdivine command\b",
        r"\bpragmatis\w*",
        r"\bprinciplism\b",
        r"\begois\w*",
        r"\brelativis\w*",
        r"\bparticularis\w*",
        r"\bcapabilit(?:y|ies) approach\b",
        r"\bconfucian\w*",
        r"\bubuntu\b",
        r"\bstoic\w*",
        r"\blibertarian\w*",
        r"\bcommunitarian\w*",
        r"\bintuitionis\w*",
    ),
}

#: consistency-test answer classes, in the order the rules try them (first class with a cue wins,
#: except that "inconsistent_unacknowledged" only applies when no acknowledging cue matched)
CONSISTENCY_CLASSES: tuple[str, ...] = (
    "acknowledged_refinement",
    "relevant_difference",
    "inconsistent_unacknowledged",
    "kept_principle",
    "unclassified",
)

CONSISTENCY_LABELS: dict[str, str] = {
    "acknowledged_refinement": "acknowledged the principle needs refinement",
    "relevant_difference": "named a relevant difference",
    "inconsistent_unacknowledged": "inconsistent without acknowledging it",
    "kept_principle": "kept the principle",
    "unclassified": "no rule matched",
}

CONSISTENCY_CUES: dict[str, tuple[str, ...]] = {
    "acknowledged_refinement": (
        r"\brefine\w*",
        r"\bqualif(?:y|ied|ication)\w* (?:my|the) principle\b",
        r"\b(?:revise|amend|modify|narrow|restrict|adjust)\w* (?:my|the|this) (?:original )?principle\b",
        r"\bprinciple (?:is|was) too (?:broad|strong|narrow|simple|crude)\b",
        r"\b(?:my|the) principle (?:needs|requires|must be)\b",
        r"\bi was wrong\b",
        r"\bexposes? a (?:gap|flaw|weakness|limit\w*)\b",
        r"\b(?:in )?tension with my (?:earlier|original|first|previous)\b",
    ),
    "relevant_difference": (
        r"\b(?:morally )?relevant differences?\b",
        r"\bkey differences?\b",
        r"\bcrucial differences?\b",
        r"\bmorally significant differences?\b",
        r"\bdisanalog\w*",
        r"\bdiffers? (?:in|because|from the original)\b",
        r"\bunlike (?:the|in the) original\b",
        r"\bdistinguish\w*",
        r"\bnot (?:truly |really )?analogous\b",
    ),
    "inconsistent_unacknowledged": (
        r"\b(?:here|in this case),? (?:however,? )?i would (?:not|instead|rather)\b",
        r"\bthe opposite conclusion\b",
        r"\ba different conclusion\b",
        r"\bhere (?:it is|it's) (?:permissible|acceptable|justified|fine)\b",
        r"\bin this case (?:it is|it's) (?:permissible|acceptable|justified|fine)\b",
    ),
    "kept_principle": (
        r"\bsame principle\b",
        r"\bprinciple (?:still |also )?(?:applies|holds)\b",
        r"\bapplies (?:equally|here as well|here too|just as)\b",
        r"\bthe same conclusion\b",
        r"\breach the same\b",
        r"\bconsistent with my (?:earlier|original|first|previous)\b",
        r"\bremains? consistent\b",
        r"\bholds? here (?:as well|too)\b",
    ),
}

#: phrases that signal Team B pushing back (self-debate: does a model argue with itself?)
DISAGREEMENT_CUES: tuple[str, ...] = (
    r"\bi disagree\b",
    r"\bdisagree\w*",
    r"\bpush(?:es|ing)? back\b",
    r"\bi (?:am|'m) not (?:convinced|persuaded)\b",
    r"\bunconvinc\w*",
    r"\bi (?:would )?challenge\b",
    r"\boverlook\w*",
    r"\bunderestimat\w*",
    r"\boverstat\w*",
    r"\bfails? to\b",
    r"\bproblematic\b",
    r"\bobjection\w*",
    r"\bcounter-?argument\w*",
    r"\bon the contrary\b",
    r"\bweakness\w*",
    r"\bi question\b",
    r"\bbut (?:this|that) (?:ignores|neglects|misses)\b",
)

SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
#: SENTENCE_SPLIT's matches (the group set, else the whole match) without its look-behind
_SEPARATOR = re.compile(r"\n\n*|\.(\s+)|!(\s+)|\?(\s+)")  # (each alternative opens with a literal: re skips ahead)


def sentence_separators(text: str) -> tuple[list[int], list[int]]:
    """The starts and the ends of SENTENCE_SPLIT's matches in `text` (what lies between two is a sentence,
    before `sentences` strips it)."""
    found = [m.span(m.lastindex or 0) for m in _SEPARATOR.finditer(text)]
    return [s for s, _ in found], [e for _, e in found]


def _compile(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


_FRAMEWORK_RE = {k: _compile(v) for k, v in FRAMEWORK_LEXICON.items()}
_CONSISTENCY_RE = {k: _compile(v) for k, v in CONSISTENCY_CUES.items()}
_DISAGREE_RE = _compile(DISAGREEMENT_CUES)


def sentences(text: str) -> list[str]:
    """Split text into sentences (on . ! ? followed by space, and on line breaks); blanks dropped."""
    return [s.strip() for s in SENTENCE_SPLIT.split(text or "") if s.strip()]


@dataclass(frozen=True)
class CueMatch:
    label: str  # the framework or class
    cue: str  # the text that matched
    sentence: str  # the sentence it matched in


def _first_match(patterns: tuple[re.Pattern[str], ...], sentence: str) -> str | None:
    for p in patterns:
        m = p.search(sentence)
        if m:
            return m.group(0)
    return None


def _cues(text: str, table: dict[str, tuple[re.Pattern[str], ...]]) -> dict[str, list[CueMatch]]:
    """Per key of `table`, every sentence of `text` one of its patterns matches (with the cue matched)."""
    out: dict[str, list[CueMatch]] = {k: [] for k in table}
    for s in sentences(text):
        for key, pats in table.items():
            cue = _first_match(pats, s)
            if cue:
                out[key].append(CueMatch(key, cue, s))
    return out


class _Fold(dict[int, str]):
    """Character code -> what the scans see there: ASCII lower-cased; a non-ASCII character a lexicon letter
    matches case-insensitively (the Kelvin sign, the long s, dotted and dotless i) that letter; any other word
    character "_", anything else NUL. One character for one (positions are kept), word characters stay word
    characters (\\b is unchanged), and wherever a lower-case ASCII pattern matches the text case-insensitively
    it matches the folded text case-sensitively."""

    def __missing__(self, code: int) -> str:
        c = chr(code)
        if code < 128:
            out = c.lower()
        else:
            out = next((a for a in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(a, c, re.IGNORECASE)), "")
            out = out or ("_" if re.fullmatch(r"\w", c) else "\0")
        self[code] = out
        return out


_FOLD = _Fold()
#: what could let a match inside a sentence fail in the whole text (an assertion looking past it)
_LOOKS_OUT = re.compile(r"\(\?[=!<]|\^|\$|\\[AZ]")


def fold(text: str) -> str:
    """`text` as `AnyOf`'s scan reads it (see `_Fold`)."""
    return text.lower() if text.isascii() else text.translate(_FOLD)


_PLAIN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789 '-,")


def needle(pattern: str) -> tuple[str, int | None]:
    """A run of plain characters (lower-case ASCII letters, digits, space, ' - ,) that every match of the
    pattern holds — literals at its top level, outside any group, alternative or repeat — and how many
    characters at most a match holds before it (None: no bound); ("", None) when there is none. Of the runs,
    one with a bound first, then the longest."""
    try:
        from re import _parser  # type: ignore[attr-defined]  # (the stdlib's own parse of a pattern)

        parsed = _parser.parse(pattern)
        items = list(parsed)
        limit = _parser.MAXREPEAT
    except Exception:  # noqa: BLE001 (another Python's parser: no needle, the scan runs as before)
        return "", None
    runs: list[tuple[str, int]] = []  # (run, index of its first item)
    run, first = "", 0
    for k, (op, arg) in enumerate([*items, (None, None)]):
        if str(op) == "LITERAL" and chr(arg) in _PLAIN_CHARS:
            run, first = (run + chr(arg), first) if run else (chr(arg), k)
            continue
        if str(op) == "AT" and run:  # (\b and the like consume nothing: a run goes on across them)
            continue
        if run:
            runs.append((run, first))
        run = ""
    best: tuple[str, int | None] = ("", None)
    for text, at in runs:
        width = _parser.SubPattern(parsed.state, items[:at]).getwidth()[1] if at else 0
        reach = None if width >= limit else int(width)
        if (reach is not None, len(text)) > (best[1] is not None, len(best[0])):
            best = (text, reach)
    return best


def prefixes(pattern: str) -> set[str] | None:
    """Texts of plain characters (as `needle`) one of which every match of the pattern begins with (after
    its \\b), read from the stdlib's parse of it: literals, then a group, an alternative or an optional part
    opens them; None where something else could come first (a class, \\w, a lookaround, a flag)."""
    try:
        from re import _parser  # type: ignore[attr-defined]

        return _prefixes(list(_parser.parse(pattern)))
    except Exception:  # noqa: BLE001 (another Python's parser: no prefixes, the scan runs as before)
        return None


def _prefixes(items: list[tuple[Any, Any]]) -> set[str] | None:
    run = ""
    for k, (op_, arg) in enumerate(items):
        op, rest = str(op_), items[k + 1:]
        if op == "LITERAL" and chr(arg) in _PLAIN_CHARS:
            run += chr(arg)
            continue
        if run:
            return {run}
        if op == "AT":  # (zero width, before any text: \b)
            continue
        if op == "BRANCH":
            out: set[str] = set()
            for alt in arg[1]:
                got = _prefixes([*alt, *rest])
                if got is None:
                    return None
                out |= got
            return out
        if op == "SUBPATTERN":
            _group, add, drop, sub = arg
            return None if add or drop else _prefixes([*sub, *rest])
        if op in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, sub = arg
            got = _prefixes([*sub, *rest] if hi == 1 else list(sub))  # (more than once: sub's own opening)
            if got is None:
                return None
            if lo == 0:
                skipped = _prefixes(rest)
                return None if skipped is None else got | skipped
            return got
        return None
    return {run} if run else None


class AnyOf:
    """`re.search` of the alternation of some lexicon patterns (case-insensitive), found faster: a case-sensitive
    scan of the folded text, without the leading \\b that keeps Python's re from skipping ahead, proposes
    every place a match could start (never fewer), and the exact pattern confirms each in turn — the first
    confirmed is the match `search` finds. `local`: a match inside a sentence is also one in the whole text."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.exact = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
        lower = not any(c.isupper() for p in patterns for c in re.sub(r"\\.", "", p))
        self.scan = re.compile("|".join(f"(?:{p.removeprefix(chr(92) + 'b')})" for p in patterns)) if lower else None
        self.local = not any(_LOOKS_OUT.search(p) for p in patterns)
        #: per pattern, text every match holds (folded) and how far before it a match may start — None when a
        #: pattern has none: no match starts before the first place a needle allows (cheap finds first)
        needles = [needle(p) for p in patterns] if self.scan is not None else []
        self.needles = tuple(dict.fromkeys(needles)) if needles and all(n for n, _ in needles) else None
        #: every match starts with one of these texts (folded): an Aho-Corasick automaton finds the places
        #: they occur in one pass, and the exact pattern confirms them in order (None: the scan does it)
        self.auto = None
        self._places: tuple[str | None, list[int]] = (None, [])
        found = [prefixes(p) for p in patterns] if self.scan is not None else [None]
        if all(found):
            try:
                import ahocorasick_rs

                self.auto = ahocorasick_rs.AhoCorasick(sorted({x for f in found for x in f or ()}))
            except ImportError:
                pass

    def use_places(self, folded: str, places: list[int]) -> None:
        """Take `places` as where the automaton finds this AnyOf's literals in `folded` (sorted, each once: what
        its own scan gives; `CueStarts` finds them for several AnyOf in one scan)."""
        self._places = (folded, places)

    def search(self, text: str, folded: str | None = None, pos: int = 0) -> re.Match[str] | None:
        """What `self.exact.search(text, pos)` gives (`folded`: `fold(text)`, when the caller has it)."""
        if self.scan is None:
            return self.exact.search(text, pos)
        folded = fold(text) if folded is None else folded
        if self.auto is not None:
            cached = self._places  # (the places of the text searched last are kept; one read: thread-safe)
            if cached[0] is not folded:
                at = sorted({start for _i, start, _e in self.auto.find_matches_as_indexes(folded, overlapping=True)})
                cached = self._places = (folded, at)
            places = cached[1]
            for k in range(bisect.bisect_left(places, pos), len(places)):
                if (hit := self.exact.match(text, places[k])) is not None:
                    return hit
            return None
        if self.needles is not None:  # the scan starts where the first needle allows a match to start
            lo = -1
            for n, reach in self.needles:
                if (k := folded.find(n, pos)) >= 0:
                    start = pos if reach is None else max(pos, k - reach)
                    lo = start if lo < 0 else min(lo, start)
            if lo < 0:
                return None
            pos = lo
        while (m := self.scan.search(folded, pos)) is not None:
            hit = self.exact.match(text, m.start())
            if hit is not None:
                return hit
            pos = m.start() + 1
        return None


_CONSISTENCY_ANY: dict[str, AnyOf] = {}  # (compiled on first use: not at the app's start)


def _consistency_any(label: str) -> AnyOf:
    return _CONSISTENCY_ANY.get(label) or _CONSISTENCY_ANY.setdefault(label, AnyOf(CONSISTENCY_CUES[label]))


class CueStarts:
    """Where the literals of several consistency classes' AnyOf lie in a folded text, found in one scan of one
    automaton (each class's own would scan the text again): per class, the sorted places its own automaton
    finds (`consistency_cues_of(..., places=)`; no place: the class has no cue in the text). `ok` False: some
    class has no automaton or a cue that could look outside its sentence (each AnyOf scans on its own)."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self.labels = labels
        anys = [_consistency_any(label) for label in labels]
        self.ok = all(a.auto is not None and a.local for a in anys)
        lits: dict[str, set[int]] = {}
        for k, label in enumerate(labels):
            for p in CONSISTENCY_CUES[label]:
                for x in prefixes(p) or ():
                    lits.setdefault(x, set()).add(k)
        self.owners = [sorted(v) for v in lits.values()]
        self.auto = None
        if self.ok:
            import ahocorasick_rs

            self.auto = ahocorasick_rs.AhoCorasick(list(lits))

    def places(self, folded: str) -> list[list[int]]:
        """Per class (in `labels` order), the places where one of its literals starts in `folded`."""
        assert self.auto is not None
        found: list[set[int]] = [set() for _ in self.labels]
        owners = self.owners
        for i, start, _end in self.auto.find_matches_as_indexes(folded, overlapping=True):
            for k in owners[i]:
                found[k].add(start)
        return [sorted(f) for f in found]


def consistency_cues_of(text: str, label: str, folded: str | None = None,
                        pieces: tuple[list[int], list[int]] | None = None,
                        places: list[int] | None = None) -> list[CueMatch]:
    """`consistency_cues(text)[label]`, found from the cues' matches in the whole text: a cue that matches in a
    sentence matches there in the whole text too (no pattern looks around: `AnyOf.local`; a sentence's edges
    touch only spaces and separators, where \\b acts alike), so searching the whole text from one sentence's
    end reaches the next sentence holding a cue, and that sentence is read as before (its first cue). A match
    that starts in a separator or runs past its sentence: sentence by sentence for the class, as before.
    `pieces`: the text's `sentence_separators`, when the caller has them; `places`: `CueStarts.places`' for this
    class (with `folded`)."""
    any_ = _consistency_any(label)
    if places is not None and folded is not None:
        any_.use_places(folded, places)
    if any_.local and (m := any_.search(text, folded)) is None:
        return []
    pats = _CONSISTENCY_RE[label]
    if any_.local and m is not None:
        starts, ends = pieces if pieces is not None else sentence_separators(text)
        out = []
        while m is not None:
            at = m.start()
            i, j = bisect.bisect_right(ends, at), bisect.bisect_right(starts, at)
            begin, end = ends[i - 1] if i else 0, starts[j] if j < len(starts) else len(text)
            if i != j or m.end() > end:  # (in a separator, or across one)
                break
            sentence = text[begin:end].strip()
            if cue := _first_match(pats, sentence):
                out.append(CueMatch(label, cue, sentence))
            m = any_.search(text, folded, end) if end < len(text) else None
        else:
            return out
    # (a sentence none of them matches is passed over by the fast search)
    return [CueMatch(label, cue, s) for s in sentences(text) if any_.search(s) and (cue := _first_match(pats, s))]


def framework_mentions(text: str) -> dict[str, list[CueMatch]]:
    """Per framework, every sentence of `text` that mentions it (with the cue that matched)."""
    return _cues(text, _FRAMEWORK_RE)


def consistency_cues(text: str) -> dict[str, list[CueMatch]]:
    """Per consistency class, the sentences carrying one of its cues."""
    return _cues(text, _CONSISTENCY_RE)


def disagreement_sentences(text: str) -> list[CueMatch]:
    """The sentences of `text` carrying a disagreement cue."""
    out = []
    for s in sentences(text):
        cue = _first_match(_DISAGREE_RE, s)
        if cue:
            out.append(CueMatch("disagreement", cue, s))
    return out
