"""What a judge says about its own scores (issue #37, held-out set 37e): a statement that may change a value flags it.

The generators draw real English words (wordfreq's most frequent, classed by lemminflect, as the revision tests
do): random truths in random layouts, then a statement about the scores composed from the net's structures — an
imperative to the reader, the judge acting now on a score it gave, an admitted error, a marked value and its
note, an erratum's "for N read M", a declared scale — with verbs and nouns drawn at random (none from the net's
lists of keeping verbs or error words, where it has them). The invariants:

- every cell is the truth or missing and flagged, and a cell the statement covers is never its old value;
- a clean reply whose judge talks about its scores without changing them is read in full and not flagged.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.judgment.meta_statements import _CLOSED, _ERROR_WORDS, _KEEPING
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment
from tests.unit.judgment.test_judgment_accounting import flagged, truth_or_flagged, truths
from tests.unit.judgment.test_judgment_revisions import classes

lemminflect = pytest.importorskip("lemminflect")

#: (no shrinking: a failing reply is shown as drawn; shrinking these texts takes minutes)
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
FEW = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow],
               phases=PHASES)
THOROUGH = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
LABELS = [CRITERION_LABELS[c] for c in CRITERIA]
NUMBER_WORDS = "one two three four five six seven eight nine ten".split()
Truth = dict[str, list[int]]
Cells = set[tuple[str, int]]


def _outside(w: str) -> bool:
    """A word none of the net's lists holds (a keeping verb, an error word, a closed-class word such as "team",
    a misdeed's prefix, a score noun)."""
    lemmas = {lem for forms in lemminflect.getAllLemmas(w).values() for lem in forms}
    return not (lemmas & _KEEPING or w in _ERROR_WORDS or w in _CLOSED or w.startswith(("mis", "over", "under"))
                or w in ("score", "scores", "mark", "marks", "rating", "grade", "cell", "too", "while"))


@lru_cache(maxsize=16)
def _words(cls: str) -> list[str]:
    if cls == "base":  # a verb's base form (not "got": a past), no adjective's ("clear", "open" before a noun)
        return [w for w in classes()["verb"] if _outside(w) and w in lemminflect.getAllLemmas(w).get("VERB", ())
                and "ADJ" not in lemminflect.getAllLemmas(w)]
    return [w for w in classes()[cls] if _outside(w)]


def word(draw: st.DrawFn, cls: str) -> str:
    return draw(st.sampled_from(_words(cls)))


def verb(draw: st.DrawFn) -> str:
    return word(draw, "base")


def layout(draw: st.DrawFn, truth: Truth, marks: dict[tuple[str, int], str] | None = None) -> str:
    """Both teams' scores in one of four layouts; `marks` puts a mark after a cell's value (`8*`)."""
    marks = marks or {}
    style = draw(st.integers(0, 3))

    def v(t: str, i: int) -> str:
        return f"{truth[t][i]}{marks.get((t, i), '')}"

    if style == 0:
        rows = [f"| {LABELS[i]} | {v('a', i)} | {v('b', i)} |" for i in range(7)]
        return "| Criterion | Team A | Team B |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    head = ["## Team {}", "**Team {}**", "### Team {} scores"][style - 1]
    line = ["- {l}: {v}", "- **{l}:** {v}/10", "{l}: {v}"][style - 1]
    return "\n\n".join(head.format(t.upper()) + "\n" + "\n".join(line.format(l=LABELS[i], v=v(t, i)) for i in range(7))
                       for t in ("a", "b")) + "\n"


def owner(draw: st.DrawFn, t: str) -> str:
    return draw(st.sampled_from([f"Team {t.upper()}'s", f"the {'presenting' if t == 'a' else 'responding'} team's"]))


def change(draw: st.DrawFn, truth: Truth) -> tuple[str, Cells, dict[tuple[str, int], str]]:
    """A statement that may change, remove or rescale values, the cells it covers and the marks it needs."""
    t = draw(st.sampled_from(["a", "b"]))
    i = draw(st.integers(0, 6))
    crit, who, old = LABELS[i].lower(), owner(draw, t), truth[t][i]
    new = draw(st.integers(1, 10).filter(lambda x: x != old))
    noun = draw(st.sampled_from(["score", "mark", "rating", "grade"]))
    vb, ving, ved = verb(draw), word(draw, "verb_ing"), word(draw, "verb_ed")
    adj, nouns = word(draw, "adj"), word(draw, "noun_pl")
    one: Cells = {(t, i)}
    team: Cells = {(t, k) for k in range(7)}
    every: Cells = {(tt, k) for tt in ("a", "b") for k in range(7)}
    kind = draw(st.integers(0, 8))
    if kind == 0:  # an imperative to the reader, the cell named
        opener = draw(st.sampled_from(["", "Please ", "So "]))
        return (f"{opener}{vb if opener else vb.capitalize()} {who} {crit} {noun}"
                f"{draw(st.sampled_from(['', ' as ' + adj, ' off', ' for now']))}.", one, {})
    if kind == 1:  # an imperative with a pronoun for the scores a sentence before named
        return (f"Looking at {who} {crit} {noun} again, the {nouns} {ved} it. {vb.capitalize()} it.", one, {})
    if kind == 2:  # an imperative to a team's scores, with an exception
        k = draw(st.integers(0, 6).filter(lambda x: x != i))
        return (f"{vb.capitalize()} each of Team {t.upper()}'s scores above, except {LABELS[k].lower()}.",
                team - {(t, k)}, {})
    if kind == 3:  # the judge acting now on a score it gave
        return (draw(st.sampled_from([f"I'm {ving} the {crit} {noun} I gave Team {t.upper()}.",
                                      f"I'll {vb} {who} {crit} {noun}.", f"Let me {vb} {who} {crit} {noun}."])), one, {})
    if kind == 4:  # an admitted error in the scoring act, any verb
        err = draw(st.sampled_from(["by mistake", "in error", "the wrong way round", "wrongly", "too " + adj]))
        return f"Looking back, I {ved} {who} {crit} {noun} {err}.", one, {}
    if kind == 5:  # a mark on the value and a note with another number
        mark = draw(st.sampled_from(["*", "†", "‡", "¹"]))
        note = draw(st.sampled_from([f"{mark} {adj.capitalize()} {nouns}: {new}.", f"{mark} {new}, {ved} {nouns}.",
                                     f"\\{mark} {NUMBER_WORDS[new - 1].capitalize()}, once the {nouns} {ved}."]))
        return note, one, {(t, i): mark}
    if kind == 6:  # a printer's erratum
        return f"Erratum — Team {t.upper()}, {crit}: for {old} read {new}.", one, {}
    if kind == 7:  # a declared scale other than 1-10
        k = draw(st.sampled_from([4, 5, 6, 7, 20, 100]))
        return (draw(st.sampled_from([f"I {ved} every {noun} on a 1–{k} scale.", f"All {noun}s are out of {k}.",
                                      f"A note: I've {ved} a {k}-point scale throughout."])), every, {})
    return f"I'm {ving} Team {t.upper()}'s scores.", team, {}


def _changed(data: st.DataObject, truth: Truth) -> None:
    draw = data.draw
    sentence, covered, marks = change(draw, truth)
    body = layout(draw, truth, marks)
    text = draw(st.sampled_from([f"{body}\n{sentence}\n", f"{body}\n## Overall analysis\n{sentence}\n"]))
    if "scale" in sentence and draw(st.booleans()):
        text = f"{sentence}\n\n{body}"  # a scale declared before the scores
    j = parse_judgment(text)
    want = {t: [None if (t, k) in covered else v for k, v in enumerate(truth[t])] for t in ("a", "b")}
    truth_or_flagged(j, want, text)  # type: ignore[arg-type]


@FEW
@given(truths, st.data())
def test_a_statement_that_may_change_scores_leaves_its_cells_missing_and_flagged(truth: Truth, data: st.DataObject) -> None:
    _changed(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_statements_that_may_change_scores(truth: Truth, data: st.DataObject) -> None:
    _changed(data, truth)


def benign(draw: st.DrawFn, truth: Truth) -> tuple[str, dict[tuple[str, int], str]]:
    """The judge talking about its scores without changing them, in random words."""
    t = draw(st.sampled_from(["a", "b"]))
    i = draw(st.integers(0, 6))
    crit, ved, nouns, adj = LABELS[i].lower(), word(draw, "verb_ed"), word(draw, "noun_pl"), word(draw, "adj")
    other = "b" if t == "a" else "a"
    higher = "higher" if truth[t][i] > truth[other][i] else "lower" if truth[t][i] < truth[other][i] else "same"
    forms = [
        f"I gave Team {t.upper()} the {higher} {crit} score because its {nouns} {ved}.",
        f"My scores above reflect the {nouns} each team {ved}.",
        f"I scored both teams on the 1–10 scale, and the {adj} {nouns} {ved} most.",
        f"The {crit} scores follow from how the {nouns} {ved}.",
        f"I {ved} the transcript twice before giving my scores.",
        f"See the table above for my scores; the {nouns} {ved} as expected.",
        f"My {crit} score for Team {t.upper()} stands: its {nouns} {ved}.",
    ]
    k = draw(st.integers(0, len(forms)))
    if k == len(forms):  # a footnote that only explains
        mark = draw(st.sampled_from(["*", "†", "¹"]))
        return f"{mark} {adj.capitalize()} {nouns}, {ved} by Team {t.upper()}.", {(t, i): mark}
    return forms[k], {}


def _benign(data: st.DataObject, truth: Truth) -> None:
    draw = data.draw
    sentence, marks = benign(draw, truth)
    text = f"{layout(draw, truth, marks)}\n## Overall analysis\n{sentence}\n"
    j = parse_judgment(text)
    got = [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA]  # type: ignore[arg-type]
    assert got == [v for t in ("a", "b") for v in truth[t]], (text, j.review_reasons)
    assert not j.needs_review, (text, j.review_reasons)


@FEW
@given(truths, st.data())
def test_a_judge_talking_about_its_scores_without_changing_them_is_not_flagged(truth: Truth, data: st.DataObject) -> None:
    _benign(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_benign_statements_about_scores(truth: Truth, data: st.DataObject) -> None:
    _benign(data, truth)


# ----------------------------------------------------------------------------------------------- by example

A = [7, 8, 8, 7, 6, 8, 7]
B = [8, 7, 6, 8, 7, 7, 8]


def _reply(after: str, a: list[int] = A, b: list[int] = B, fmt: str = "- {l}: {v}") -> str:
    return "\n\n".join(f"## Team {t}\n" + "\n".join(fmt.format(l=lab, v=v) for lab, v in zip(LABELS, s, strict=True))
                       for t, s in (("A", a), ("B", b))) + f"\n\n## Overall analysis\n{after}\n"


def _meta_cells(j: Judgment) -> set[tuple[str | None, str | None]]:
    return {(i.team, i.criterion) for i in j.review_items if i.kind == "meta"}


@pytest.mark.parametrize("sentence,cells", [
    ("I entered the two teams' consistency scores the wrong way round. Swap them.", {("a", "consistency"), ("b", "consistency")}),
    ("Please disregard Team B's framework awareness mark.", {("b", "framework_awareness")}),
    ("I'm retracting the honesty score I gave Team A; treat it as unscored.", {("a", "intellectual_honesty")}),
    ("Knock one point off each of Team A's scores, except consistency.", {("a", c) for c in CRITERIA} - {("a", "consistency")}),
    ("Correction — Team A, framework awareness: for 6 read 4.", {("a", "framework_awareness")}),
    ("All scores above are out of 5.", {(t, c) for t in ("a", "b") for c in CRITERIA}),
    ("I marked everything on a scale of one to five.", {(t, c) for t in ("a", "b") for c in CRITERIA}),
    ("I mistyped Team B's stakeholder recognition score.", {("b", "stakeholder_recognition")}),
    ("I withdraw my consistency score for Team B.", {("b", "consistency")}),
])
def test_each_structure_flags_the_cells_it_covers(sentence: str, cells: set[tuple[str, str]]) -> None:
    j = parse_judgment(_reply(sentence))
    # (the late-revision net, run first, may already hold a cell: "for 6 read 4" names a value; one item a cell)
    late = {(i.team, i.criterion) for i in j.review_items if i.kind == "revision"}
    assert _meta_cells(j) | (late & cells) == cells, j.review_reasons
    for t, c in cells:
        assert j.parsed_scores(t).as_dict()[c] is None  # type: ignore[arg-type]
        item = next(i for i in j.review_items if (i.team, i.criterion) == (t, c))
        assert "read as" in item.message and sentence.split()[0] in item.message  # the value read and the sentence


@pytest.mark.parametrize("sentence", [
    "I gave Team B the higher consistency score because its answer to the travel case held.",
    "My scores above reflect the written rebuttals more than the oral ones.",
    "I scored both teams on the 1–10 scale, not the 1-5 scale some judges use.",
    "Team B's proposal used a 1–5 scale for triage, which I found too coarse.",
    "Team A found two errors in Team B's consistency case; I weighed that in my scores.",
    "I would revisit Team A's consistency score only if shown a case where their rule gives the wrong answer.",
    "See the table above for my scores.",
    "Take the consistency case: Team A never answered it.",
    "Team A: clear principle, weaker stakeholders.",
    "Overall: Team B wins three criteria outright and ties two.",
    "Let me know if you'd like me to revise the scores.",
    "I'm happy to revisit these scores if asked.",
    "Would you like me to adjust any of the scores?",
    "I'd update Team A's consistency score if shown a case where their threshold does real work.",
    "Team A's clarity of principle against Team B's breadth; I would call it a draw on the merits.",
    "I've tried to keep my scores consistent across both teams.",
    "I hope my scores are useful.",
    "Use these scores as a guide.",
    "I'm leaving all scores as they are.",
])
def test_talk_about_the_scores_that_changes_nothing_is_not_flagged(sentence: str) -> None:
    j = parse_judgment(_reply(sentence))
    assert not _meta_cells(j), j.review_reasons


@pytest.mark.parametrize("cell,note,changes", [
    ("8*", "\\* Should be 6 — I misread the rebuttal.", True),
    ("8*", "* Borderline: between 7 and 8.", True),
    ("8†", "† Team A's rebuttal carried this one.", False),
    ("8*", "", True),  # a mark with no note: nothing shows it changes nothing
    ("**8**", "", False),  # bold, no mark
    ("8¹", "¹ I'd withdraw this if the transcript shows the quote was Team B's. Treat it as provisional.", True),
])
def test_a_mark_on_a_value_is_resolved_at_its_note(cell: str, note: str, changes: bool) -> None:
    rows = [f"| {lab} | {cell if k == 1 else A[k]} | {B[k]} |" for k, lab in enumerate(LABELS)]
    text = "| Criterion | Team A | Team B |\n|---|---|---|\n" + "\n".join(rows) + f"\n\n{note}\n"
    j = parse_judgment(text)
    assert (("a", "consistency") in _meta_cells(j)) == changes, j.review_reasons
    assert _meta_cells(j) <= {("a", "consistency")}
    assert j.parsed_scores("a").as_dict()["consistency"] == (None if changes else 8)  # type: ignore[arg-type]


def test_a_pronoun_takes_the_cell_named_before_it_not_a_team_named_in_passing() -> None:
    text = _reply("I'm withdrawing the framework awareness mark I gave Team B. I can't tell whether the argument was "
                  "a quotation of Team A's presentation, and I'd rather leave that cell blank. Please treat it as unscored.")
    j = parse_judgment(text)
    assert _meta_cells(j) == {("b", "framework_awareness")}, j.review_reasons


def test_a_scale_the_judge_rejects_or_supposes_is_no_declared_scale() -> None:
    j = parse_judgment(_reply("I've used the 1–10 scale rather than 1–5, as asked."))
    assert not j.needs_review, j.review_reasons
    j = parse_judgment(_reply("If I had to put them on a five-point scale I'd give both a 4, but record the scores above."))
    assert not j.needs_review, j.review_reasons
    j = parse_judgment(_reply("If it helps, I've used a 1–5 scale for all of the above."))
    assert all(flagged(j, t, c) for t in ("a", "b") for c in CRITERIA), j.review_reasons
    j = parse_judgment(_reply("I've used a 1–5 scale rather than 1–10.", a=[4, 3, 4, 3, 4, 3, 4], b=[3, 4, 3, 4, 3, 4, 3]))
    assert all(j.parsed_scores(t).as_dict()[c] is None and flagged(j, t, c)  # type: ignore[arg-type]
               for t in ("a", "b") for c in CRITERIA), j.review_reasons
