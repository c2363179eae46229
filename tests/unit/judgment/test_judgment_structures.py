"""Structures the reader settles without a person, generated with real English words (issue #37, third round).

Clean structures (one score per criterion by a word of scoring, number words, the blind set's classes) are read
in full and not flagged; open ones (any real verb, a condition, modal or negation, teams in turn) are the truth
or missing and flagged, never an unflagged value from a verb that is no word of scoring."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.judgment.corrections import CORR_LANG
from ebtui.core.judgment.vocabulary import SCORE_LEMMAS, scoring_word
from ebtui.core.judgment.wordclass import FUNCTION_WORDS
from ebtui.core.records import CRITERIA, Judgment
from tests.unit.judgment.test_judgment_accounting import (
    LABELS,
    NUMBER_WORDS,
    _plain,
    _plain_word,
    flagged,
    truth_or_flagged,
    truths,
)

lemminflect = pytest.importorskip("lemminflect")

FEW = settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
THOROUGH = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
Truth = dict[str, list[int]]


def _forms(lemmas: set[str], tag: str) -> list[str]:
    return sorted({f for lemma in lemmas for f in lemminflect.getAllInflections(lemma, upos="VERB").get(tag, ())})


#: the rubric's verbs for a score (SCORE_LEMMAS that are verbs of scoring) in each form: "earns", "deserved";
#: and those that give a team its score ("I awarded them a 7")
_SCORE_VERBS = {"earn", "deserve", "merit", "receive", "get", "score", "rate", "grade", "mark"} & SCORE_LEMMAS
SCORING, SCORED = _forms(_SCORE_VERBS, "VBZ"), _forms(_SCORE_VERBS, "VBD")
GAVE = _forms({"give", "award", "assign"} & SCORE_LEMMAS, "VBD")


def _noun(draw: st.DrawFn) -> str:
    """A singular noun that is no word of a closed class ("another" is a determiner, whatever else it is)."""
    return draw(st.sampled_from([w for w in _plain("noun") if w not in FUNCTION_WORDS]))


def _count(draw: st.DrawFn) -> str:
    return f"{draw(st.integers(2, 9))} {_plain_word(draw, 'noun_pl')}"


def _read_in_full(j: Judgment, truth: Truth, text: str) -> None:
    got = [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA]  # type: ignore[arg-type]
    assert got == [v for t in ("a", "b") for v in truth[t]], (text, j.review_reasons)
    assert not j.needs_review, (text, j.review_reasons)


def _by_team(draw: st.DrawFn, truth: Truth, line: object, heading: str = "## Team {}") -> str:
    return "\n\n".join(heading.format(t.upper()) + "\n" + "\n".join(line(i, v) for i, v in enumerate(truth[t]))  # type: ignore[operator]
                       for t in draw(st.permutations(["a", "b"])))


# -------------------------------------------------------------- clean structures: read in full, no flag


def _clean_structure(data: st.DataObject, truth: Truth) -> str:
    draw = data.draw
    kind = draw(st.integers(0, 6))
    if kind == 0:  # prose: one criterion, one value after a word of scoring or a copula, counts beside it
        def sentence(i: int, v: int) -> str:
            verb = draw(st.sampled_from(SCORING + SCORED))
            return draw(st.sampled_from([
                f"{LABELS[i]} {verb} a {v}, with {_count(draw)} {_plain_word(draw, 'verb_ed')}.",
                f"For {LABELS[i].lower()} I {draw(st.sampled_from(GAVE))} them a {v}.",
                f"{LABELS[i]} is a {v} across {_count(draw)}.",
                f"Their {LABELS[i].lower()} {verb} a {v}: {_count(draw)} {_plain_word(draw, 'verb_ed')}.",
            ]))
        # (a closing remark: a reply that ends on "a 9." may have been cut off from "a 9.5", see parser.cut_tail)
        return "\n\n".join(f"Team {t.upper()} {_plain_word(draw, 'verb_ed')} {_count(draw)}. "
                             + " ".join(sentence(i, v) for i, v in enumerate(truth[t])) for t in ("a", "b")) \
            + f"\n\n{_plain_word(draw, 'adj').capitalize()} {_plain_word(draw, 'noun_pl')} overall."
    if kind == 1:  # a number word as a label's value, with a reason holding a count
        return _by_team(draw, truth, lambda i, v: f"- {LABELS[i]}: {NUMBER_WORDS[v - 1]}" + draw(st.sampled_from(
            ["", f" ({_count(draw)} {_plain_word(draw, 'verb_ed')})", f" — {_plain_word(draw, 'adj')}"])))
    if kind == 2:  # a row-number column, a percentage column, signed differences, a blank-numbered totals row
        rows = [f"| {i + 1} | {LABELS[i]} | {draw(st.integers(5, 30))}% | {a} | {b} | "
                f"{'+' if a > b else '−' if a < b else ''}{abs(a - b)} |"
                for i, (a, b) in enumerate(zip(truth["a"], truth["b"], strict=True))]
        head = f"| # | Criterion | {_plain_word(draw, 'noun').capitalize()} | Team A | Team B | Δ |\n|---|---|---|---|---|---|"
        return "\n".join([head, *rows, f"| | **{_plain_word(draw, 'noun').capitalize()}** | 100% | | | |"])
    if kind == 3:  # an evidence column of counts whose noun is left out the second time
        def evidence() -> str:
            return f"{draw(st.integers(2, 6))} {_plain_word(draw, 'noun_pl')} {_plain_word(draw, 'verb_ed')}, " \
                   f"{draw(st.integers(1, 5))} {_plain_word(draw, 'verb_ed')}"
        rows = [f"| {LABELS[i]} | {a} | {evidence()} | {b} | {evidence()} |"
                for i, (a, b) in enumerate(zip(truth["a"], truth["b"], strict=True))]
        return "\n".join(["| Criterion | A | A: evidence | B | B: evidence |", "|---|---|---|---|---|", *rows])
    if kind == 4:  # bracketed numbers that refer to items in a score's reason
        return _by_team(draw, truth, lambda i, v: f"- {LABELS[i]}: {v}/10 — " + draw(st.sampled_from([
            f"{_plain_word(draw, 'verb_s')} {_plain_word(draw, 'noun_pl')} ({draw(st.integers(1, 4))}) and "
            f"({draw(st.integers(5, 9))}) of the {_noun(draw)}",
            f"{_plain_word(draw, 'adj')} in {_noun(draw)} ({draw(st.integers(1, 9))}) of the "
            f"{_noun(draw)}"])))
    if kind == 5:  # a legend's own abbreviations (capitals no rule knows), then the scores by them
        abbrevs = draw(st.lists(st.text("CDEFGHJKLMNPQRSTUVWXYZ", min_size=3, max_size=4), min_size=7, max_size=7,
                                unique=True))
        legend = "Legend: " + ", ".join(f"{ab} = {lab.lower()}" for ab, lab in zip(abbrevs, LABELS, strict=True)) + "."
        return legend + "\n\n" + "\n".join(f"Team {t.upper()}: " + ", ".join(
            f"{ab} {v}" for ab, v in zip(abbrevs, truth[t], strict=True)) for t in ("a", "b"))
    # criterion paragraphs in a team's section, naming the other team as the owner of a thing
    def paragraph(t: str) -> object:
        o = "B" if t == "a" else "A"
        return lambda i, v: (f"**{LABELS[i]}.** {_plain_word(draw, 'verb_s').capitalize()} "
                             f"{_plain_word(draw, 'adj')} {_plain_word(draw, 'noun_pl')} and {_plain_word(draw, 'verb_s')} "
                             f"Team {o}'s {_plain_word(draw, 'noun')}. Score: {v} out of 10.")
    return "\n\n".join(f"## Team {t.upper()}\n\n" + "\n\n".join(paragraph(t)(i, v) for i, v in enumerate(truth[t]))  # type: ignore[operator]
                       for t in ("a", "b"))


@FEW
@given(truths, st.data())
def test_structures_that_leave_one_reading_are_read_in_full_and_not_flagged(truth: Truth, data: st.DataObject) -> None:
    text = _clean_structure(data, truth) + "\n"  # (a reply that stops on "… 1" may have been cut off from "10")
    _read_in_full(parse_judgment(text), truth, text)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_structures_that_leave_one_reading(truth: Truth, data: st.DataObject) -> None:
    text = _clean_structure(data, truth) + "\n"  # (a reply that stops on "… 1" may have been cut off from "10")
    _read_in_full(parse_judgment(text), truth, text)


# -------------------------------------------------------------- open structures: never an unflagged guess


def _open_structure(data: st.DataObject, truth: Truth) -> None:
    """A sentence whose verb is any real verb, or whose value stands under a condition, a modal or a negation,
    or a paragraph speaking of the teams in turn: the truth or missing and flagged, and the value a verb that is
    no word of scoring gives is never read without a flag."""
    draw = data.draw
    kind = draw(st.integers(0, 2))
    verbs: dict[tuple[str, str], str] = {}

    def sentence(t: str, i: int, v: int) -> str:
        # (a verb of correcting, "Consistency revised a 3", gives the score it names: the reader takes it as one)
        verb = draw(st.sampled_from([w for w in _plain(draw(st.sampled_from(["verb_s", "verb_ed"])))
                                     if not CORR_LANG.search(w)]))
        if kind == 0:
            verbs[(t, CRITERIA[i])] = verb
            return f"{LABELS[i]} {verb} a {v}, with {_count(draw)}."
        if kind == 1:
            return draw(st.sampled_from([f"{LABELS[i]} would {_plain_word(draw, 'verb')} a {v}.",
                                         f"{LABELS[i]} {verb} a {v} if {_plain_word(draw, 'noun_pl')} {verb}.",
                                         f"{LABELS[i]} does not {_plain_word(draw, 'verb')} a {v}.",
                                         f"I'd {_plain_word(draw, 'verb')} {LABELS[i].lower()} a {v}."]))
        return f"Team {t.upper()} {verb} {_count(draw)}; {NUMBER_WORDS[v - 1]}."

    if kind == 2:  # paragraphs under each criterion's label that speak of the teams in turn
        text = "\n\n".join(f"**{LABELS[i]}.** " + " ".join(sentence(t, i, truth[t][i]) for t in ("a", "b"))
                           for i in range(7))
    else:
        text = "\n\n".join(f"## Team {t.upper()}\n" + " ".join(sentence(t, i, v) for i, v in enumerate(truth[t]))
                           for t in ("a", "b"))
    j = parse_judgment(text)
    truth_or_flagged(j, truth, text)
    for t in ("a", "b"):
        got = j.parsed_scores(t).as_dict()  # type: ignore[arg-type]
        for c in CRITERIA:
            if got[c] is not None and not flagged(j, t, c):
                assert kind == 0 and scoring_word(verbs[(t, c)]), (t, c, text, j.review_reasons)


@FEW
@given(truths, st.data())
def test_a_value_no_structure_settles_is_thetruth_or_flagged(truth: Truth, data: st.DataObject) -> None:
    _open_structure(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_values_no_structure_settles(truth: Truth, data: st.DataObject) -> None:
    _open_structure(data, truth)
