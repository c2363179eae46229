"""Counts in a criterion's reason, recognised by structure (issue #37), tested with real English words.

The generators draw nouns, verbs, adjectives and adverbs from wordfreq's word list classed by lemminflect (the
helpers of test_judgment_accounting), names the lexicon lacks ("london", "obama") capitalised, and acronyms
of random capitals, and put counts in every structure the reader explains: a noun phrase with any modifiers,
a rate, a count whose noun is left out after a fronted partitive, joined to another count, or in a gapped
parallel clause. The invariants: a clean reply (counts only) is read in full and not flagged; where the reason
also holds a second score or a correction, every cell is the truth or missing and flagged.
"""

from __future__ import annotations

import string
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.judgment.accounting import numbers_in
from ebtui.core.judgment.vocabulary import CRIT_RE, team_regex
from ebtui.core.judgment.wordclass import FUNCTION_WORDS
from ebtui.core.records import CRITERIA
from tests.unit.judgment.test_judgment_accounting import (
    LABELS,
    NUMBER_WORDS,
    classes,
    flagged,
    reply,
    truth_or_flagged,
    truths,
)

wordfreq = pytest.importorskip("wordfreq", reason="the word list comes from wordfreq (the test extra)")
lemminflect = pytest.importorskip("lemminflect")

FEW = settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
THOROUGH = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _plain(w: str) -> bool:
    """A word that names no criterion or team, is no auxiliary, no score's word and no correction's word."""
    from ebtui.core.judgment.vocabulary import scoring_word

    return (not CRIT_RE.search(w) and not team_regex("", "").search(w) and "AUX" not in lemminflect.getAllLemmas(w)
            and not scoring_word(w) and w not in FUNCTION_WORDS
            and not any(h in w for h in ("actual", "correct", "revis", "rather", "reflect", "chang", "mean")))


@lru_cache(maxsize=16)
def pool(kind: str) -> list[str]:
    """Words of one kind: the word classes of test_judgment_accounting, plus manner adverbs (-ly words that are
    nothing but adverbs), nouns that are nothing but singular nouns, and names the lexicon lacks."""
    c = classes()
    if kind == "adv_manner":
        out = [w for w in c["adv"] if w.endswith("ly") and set(lemminflect.getAllLemmas(w)) == {"ADV"}]
    elif kind == "noun_only":
        out = [w for w in c["noun"] if set(lemminflect.getAllLemmas(w)) == {"NOUN"} and not w.endswith("s")
               and w not in ("criteria", "criterion", "rubric", "scale", "anchor", "standard", "guideline", "prompt")]
    elif kind == "name":
        out = [w.capitalize() for w in wordfreq.top_n_list("en", 20000)
               if w.isalpha() and w.islower() and len(w) >= 4 and not lemminflect.getAllLemmas(w)
               and w not in NUMBER_WORDS and w not in FUNCTION_WORDS]
    elif kind == "noun_pl":  # (a plural that is a noun and nothing else: "abuses" is a verb's form too)
        out = [w for w in c["noun_pl"] if set(lemminflect.getAllLemmas(w)) == {"NOUN"}]
    elif kind == "adj_only":
        out = [w for w in c["adj"] if set(lemminflect.getAllLemmas(w)) == {"ADJ"}]
    else:
        out = c[kind]
    return sorted(w for w in out if _plain(w.lower()))


def pick(draw: st.DrawFn, kind: str) -> str:
    return draw(st.sampled_from(pool(kind)))


def acronym(draw: st.DrawFn) -> str:
    return draw(st.text(alphabet=string.ascii_uppercase, min_size=2, max_size=5).filter(
        lambda s: not CRIT_RE.fullmatch(s) and s not in ("AB", "BA")))


def subject(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(["it", "they", "Team A", "Team B", "the team"]))


def modifiers(draw: st.DrawFn) -> str:
    """Modifiers of a counted noun: an acronym, a name, an adjective, a noun (a compound), or none (words of one
    class only: a word that is also a verb, "bleeding", is left to the word-class tests)."""
    parts = [draw(st.sampled_from(["", pick(draw, "adj_only")])),  # (in English's order: adjective, name, noun)
             draw(st.sampled_from(["", acronym(draw), pick(draw, "name")])), draw(st.sampled_from(["", pick(draw, "noun_only")]))]
    return " ".join(p for p in parts if p)


def count_clause(draw: st.DrawFn) -> str:
    """A reason's clause with counts in one of the structures the reader explains (never a second score)."""
    n, k = draw(st.integers(2, 9)), draw(st.integers(1, 9))
    whole = draw(st.integers(2, 9))
    part = draw(st.integers(1, whole))
    noun, verb, adv = pick(draw, "noun_pl"), pick(draw, "verb_ed"), pick(draw, "adv_manner")
    shown_whole = draw(st.sampled_from([str(whole), NUMBER_WORDS[whole - 1]]))
    form = draw(st.integers(0, 7))
    if form == 0:  # a noun phrase, whatever its modifiers
        return f"{verb} {n} {modifiers(draw)} {noun} {draw(st.sampled_from(['', 'in the ' + pick(draw, 'noun')]))}"
    if form == 1:  # a fronted partitive, the count no more than the whole
        return f"of the {shown_whole} {noun}, {subject(draw)} {verb} {part} {adv}"
    if form == 2:  # a partitive of a team's things, two counts joined
        return (f"of Team {draw(st.sampled_from('AB'))}'s {noun}, {subject(draw)} {verb} {k} {adv} and "
                f"{draw(st.integers(1, 9))} in {pick(draw, 'noun_only')}")
    if form == 3:  # a rate per a noun
        return f"{pick(draw, 'verb_s')} {n} per {pick(draw, 'noun_only')}"
    if form == 4:
        return f"a {pick(draw, 'noun_only')} of {n} per {pick(draw, 'noun_only')}"
    if form == 5:  # a rate with "a", "each", "every"
        unit = pick(draw, "noun_only")
        det = draw(st.sampled_from(["an" if unit[0] in "aeiou" else "a", "each", "every"]))
        return f"{pick(draw, 'verb_s')} {n} {det} {unit}"
    if form == 6:  # a gapped parallel clause
        t1, t2 = draw(st.permutations(["A", "B"]))
        return f"{t1} {verb} {n} {modifiers(draw)} {noun}, {t2} {draw(st.sampled_from(['', 'only ', 'just ']))}{k}"
    return f"{verb} {n} {noun} {adv}"  # a count and an adverb


def counted_line(draw: st.DrawFn, i: int, v: int) -> str:
    why = count_clause(draw)
    return draw(st.sampled_from([f"- {LABELS[i]}: {v} — {why}.", f"- {LABELS[i]}: {v}/10 — {why}.",
                                 f"- **{LABELS[i]}:** {v}. {why[0].upper() + why[1:]}."]))


def _clean(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    with_count = set(draw(st.lists(st.integers(0, 6), min_size=1, max_size=4)))
    text = reply(draw, truth, lambda i, v: counted_line(draw, i, v) if i in with_count else f"- {LABELS[i]}: {v}")
    j = parse_judgment(text)
    assert [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA] == [  # type: ignore[arg-type]
        v for t in ("a", "b") for v in truth[t]], (text, j.review_reasons)
    assert not j.needs_review, (text, j.review_reasons)


@FEW
@given(truths, st.data())
def test_a_reason_with_counts_in_any_structure_is_read_in_full_and_not_flagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _clean(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_reasons_with_counts(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _clean(data, truth)


def second_score(draw: st.DrawFn, v: int, w: int) -> tuple[str, set[int]]:
    """A reason holding a count and a second score or a correction, and the values the cell may hold without a
    flag (none: a second score or a correction; the first: the second is where it came from)."""
    why = count_clause(draw)
    noun, verb, adv = pick(draw, "noun_pl"), pick(draw, "verb_ed"), pick(draw, "adv_manner")
    whole = draw(st.integers(1, w - 1)) if w > 1 else None
    scoring = draw(st.sampled_from(["earns", "deserves", "gets", "merits", "earned", "got", "scores"]))
    forms: list[tuple[str, set[int]]] = [
        (f"{v} — {why}; on reflection {w}", set()),
        (f"{v} — {why}, though {w} would be fair", set()),
        (f"{v} — {why}. I'd have given {w} had it {verb} more {noun}", {v}),
        (f"{v} (up from {w}) — {why}", {v}),
        (f"{v} — {why}, so {w} in my view", set()),
        (f"{v} — of the {draw(st.integers(2, 9))} {noun}, it {scoring} {w} {adv}", set()),
        (f"{v} — {why}, and {w} overall", set()),
        (f"{v} — {verb} {draw(st.integers(2, 9))} {noun} {adv}, and {w} in my view", set()),
        (f"{v} — {why}. Make it {w}", set()),
        (f"{v} — {why}; {w} would be fairer", set()),
    ]
    if whole is not None:  # a count over the whole it is part of is no count of it
        forms.append((f"{v} — of the {NUMBER_WORDS[whole - 1]} {noun}, it {verb} {w} {adv}", set()))
    return draw(st.sampled_from(forms))


def _second(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    t = draw(st.sampled_from(["a", "b"]))
    i = draw(st.integers(0, 6))
    v = truth[t][i]
    w = draw(st.integers(1, 10).filter(lambda x: x != v))
    line, unflagged_ok = second_score(draw, v, w)
    out = []
    for tt in draw(st.permutations(["a", "b"])):
        out.append(draw(st.sampled_from(["## Team {}", "**Team {}**", "Team {}:"])).format(tt.upper()))
        out += [f"- {LABELS[k]}: " + (line if (tt, k) == (t, i) else f"{x}") for k, x in enumerate(truth[tt])]
        out.append("")
    text = "\n".join(out)
    j = parse_judgment(text)
    got = j.parsed_scores(t).as_dict()[CRITERIA[i]]  # type: ignore[arg-type]
    assert got in (v, w, None), (got, text, j.review_reasons)
    if not flagged(j, t, CRITERIA[i]):
        assert got in unflagged_ok, (got, v, w, text, j.review_reasons)
    for tt in ("a", "b"):  # every other cell: the truth or missing and flagged
        vals = j.parsed_scores(tt).as_dict()  # type: ignore[arg-type]
        for k, c in enumerate(CRITERIA):
            if (tt, k) != (t, i):
                assert vals[c] in (truth[tt][k], None) and (vals[c] is not None or flagged(j, tt, c)), (tt, c, text)


@FEW
@given(truths, st.data())
def test_a_second_score_or_correction_beside_counts_is_never_a_silent_wrong_value(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _second(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_second_scores_beside_counts(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _second(data, truth)


def unexplained_clause(draw: st.DrawFn) -> str:
    """A reason's number the rules leave unexplained on purpose (its cell may be lost, never wrong): a count
    of the scale's unit after an ordinary verb, a number after a verb with no antecedent for its noun, a part
    larger than its whole, a gapped clause after no count."""
    verb, adv, noun = pick(draw, "verb_ed"), pick(draw, "adv_manner"), pick(draw, "noun_pl")
    whole = draw(st.integers(1, 8))
    t1, t2 = draw(st.permutations(["A", "B"]))
    return draw(st.sampled_from([
        f"{t1} {verb} {draw(st.integers(2, 9))} points {adv}, {t2} none",
        f"{subject(draw)} {verb} {draw(st.integers(1, 9))} {adv}",
        f"of the {NUMBER_WORDS[whole - 1]} {noun}, it {verb} {draw(st.integers(whole + 1, 10))} {adv}",
        f"{t1} {verb} {adv}, {t2} {draw(st.integers(1, 9))}",
    ]))


def _unexplained(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    chosen = set(draw(st.lists(st.integers(0, 6), min_size=1, max_size=3)))
    text = reply(draw, truth, lambda i, v: f"- {LABELS[i]}: {v} — {unexplained_clause(draw)}." if i in chosen
                 else f"- {LABELS[i]}: {v} — {count_clause(draw)}.")
    truth_or_flagged(parse_judgment(text), truth, text)


@FEW
@given(truths, st.data())
def test_a_number_no_structure_explains_leaves_its_cell_the_truth_or_missing_and_flagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _unexplained(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_numbers_no_structure_explains(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _unexplained(data, truth)


# ------------------------------------------------------------------------ each structure, by example


@pytest.mark.parametrize("line,number,reason", [
    ("consulted 4 UN agencies and a charity", "4", "a count of UN agencies"),
    ("it worked with 5 NGOs", "5", "a count of NGOs"),
    ("it heard 3 Oxfam volunteers", "3", "a count of Oxfam volunteers"),
    ("allows 2 per patient", "2", "a rate (per patient)"),
    ("a quota of 4 per district, fairly", "4", "a rate (per district)"),
    ("budgets 3 a week for it", "3", "a rate (a week)"),
    ("of the four objections, it rebutted 3 convincingly.", "3", "a count of objections, its noun left out"),
    ("of Team A's examples, they granted 2 readily and 1 with caveats.", "2", "a count of examples, its noun"),
    ("of Team A's examples, they granted 2 readily and 1 with caveats.", "1", "a count of the same thing again"),
    ("A cited 4 studies, B only 1.", "1", "a count of the same thing in a parallel clause"),
    ("A listed 6 studies and B listed 2.", "2", "a count of the same thing in a parallel clause"),
])
def test_each_count_structure_has_its_reason(line: str, number: str, reason: str) -> None:
    n = [x for x in numbers_in(line) if x.shown == number][-1]
    assert n.reason is not None and n.reason.startswith(reason), (line, n)


@pytest.mark.parametrize("line,number", [
    ("of the three cases, it handled 7 cleanly.", "7"),  # a part larger than its whole
    ("of the three cases, it earns 2 comfortably.", "2"),  # a score's verb
    ("of the criteria, it managed 6 comfortably.", "6"),  # the rubric's own nouns are no counted thing
    ("of the three cases, it handled 2 in my view.", "2"),  # the judge's stance
    ("of the four objections, it rebutted 3 convincingly, and 6 in my view.", "6"),
    ("it handled 2 cleanly.", "2"),  # no antecedent for the noun left out
    ("A cited 4 studies; B 6.", "6"),  # a gapped clause never crosses a sentence's end
    ("A cited 4 studies, B 6 overall.", "6"),
    ("A conceded 2 points outright, B none.", "2"),
    ("B found 5 affected groups, the score 6.", "6"),  # a score's word is no subject of a gapped clause
    ("Consistency: 8 a strength throughout", "8"),  # a label's value, not a rate  # the scale's unit: a count, or a score's change
    ("8 per rubric", "8"), ("7 per the rubric", "7"), ("7 each", "7"), ("8 a piece", "8"),
    ("Consistency: 7 — on reflection 6", "6"), ("7, though 6 would be fair", "6"),
    ("Consistency: 7 — I'd have given 6 had it tried", "6"),
])
def test_a_number_in_no_count_structure_stays_unexplained(line: str, number: str) -> None:
    n = [x for x in numbers_in(line) if x.shown == number][-1]
    assert n.reason is None, (line, n)


def _reply_with(line: str, crit: int = 1, team: str = "a") -> tuple[str, list[int], list[int]]:
    a, b = [6, 5, 8, 4, 9, 3, 6], [7, 7, 2, 5, 8, 9, 9]
    rows = {t: [f"- {lab}: {v}" for lab, v in zip(LABELS, s, strict=True)] for t, s in (("a", a), ("b", b))}
    rows[team][crit] = f"- {LABELS[crit]}: {line}"
    return "## Team A\n" + "\n".join(rows["a"]) + "\n\n## Team B\n" + "\n".join(rows["b"]) + "\n", a, b


@pytest.mark.parametrize("reason", [
    "of the four objections, it rebutted 3 convincingly and 1 in passing",
    "consulted 4 UN agencies and 2 Red Crescent teams", "allows 2 per patient through the winter",
    "Team A cited 4 studies, Team B only 1", "of its three cases, Team A handled 2 cleanly",
    "A cited 2 EU UN studies, B 1",  # (two acronyms in a row)
])
def test_a_clean_reply_with_counts_in_a_reason_is_read_in_full(reason: str) -> None:
    text, a, b = _reply_with(f"5 — {reason}.")
    j = parse_judgment(text)
    assert [j.parsed_scores("a").as_dict()[c] for c in CRITERIA] == a, j.review_reasons  # type: ignore[arg-type]
    assert [j.parsed_scores("b").as_dict()[c] for c in CRITERIA] == b  # type: ignore[arg-type]
    assert not j.needs_review, j.review_reasons


@pytest.mark.parametrize("line,final", [
    ("5 — of the three cases, it handled 2 cleanly; on reflection 4", None),
    ("5, though 4 would be fair — of the three cases it handled 2 cleanly", None),
    ("5 — of the three cases it handled 2 cleanly, and 4 in my view", None),
    ("5 — cites 2 WHO reports. I'd have given 4 had it weighed them", 5),
    ("5 (up from 4) — cites 2 WHO reports", 5),
    ("5 — of the three cases, it handled 7 cleanly", None),
    ("5 — of Team B's objections, it deserves 4 honestly", None),
    ("5 — A cited 4 studies; B 6", None),
    ("5 — it handled 2 cases well, though 4 would be fair", None),  # (a modal after it: no count's verb)
])
def test_a_second_score_beside_counts_is_flagged_or_read_as_its_change(line: str, final: int | None) -> None:
    """A second score or a correction in a reason with counts stays a conflict (missing and flagged) or is read
    as a change by the correction rules; the first value never stands silently where the judge moved it."""
    text, a, _ = _reply_with(line)
    j = parse_judgment(text)
    got = j.parsed_scores("a").as_dict()["consistency"]  # type: ignore[arg-type]
    if not flagged(j, "a", "consistency"):
        assert final is not None and got == final, (got, j.review_reasons)
    else:
        assert got in (5, 4, None), got
