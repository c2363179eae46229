"""Every number accounted for, tested with real English words (issue #37).

The generator draws words of every class — nouns, verbs (in every form), adjectives, adverbs — from a word list
(wordfreq's most frequent English words, sorted into classes by lemminflect's lexicon, so nothing here is a
made-up stem the rules could exclude by its spelling). It puts numbers in every position of a score's line
(before the score, after it, between two criterion names, in parentheses, as list enumerators, as number words)
and composes corrections from every structure, including ones whose verb is on no list. The invariant:

- every cell is the truth (the planted score) or missing and flagged (on that cell, its team or the reply);
- a correction's cell is never the old value unflagged;
- a clean reply (scores with reasons in words, no other numbers) is read in full and not flagged.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.judgment.accounting import numbers_in
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment

wordfreq = pytest.importorskip("wordfreq", reason="the word list comes from wordfreq (the test extra)")
lemminflect = pytest.importorskip("lemminflect")

FAST = settings(max_examples=100, deadline=None, derandomize=True,  # the default run is deterministic (CI)
               suppress_health_check=[HealthCheck.too_slow])
#: the generators added for the judges' styles: fewer examples in the default run (its time is at its limit)
FEW = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
THOROUGH = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LABELS = [CRITERION_LABELS[c] for c in CRITERIA]
NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


@lru_cache(maxsize=1)
def classes() -> dict[str, list[str]]:
    """Real words by class: plural and singular nouns, verbs ending in -s, -ed, -ing and bare, adjectives,
    adverbs; a word of two classes is in both."""
    out: dict[str, list[str]] = {k: [] for k in ("noun_pl", "noun", "verb_s", "verb_ed", "verb_ing", "verb",
                                                 "adj", "adv")}
    for w in wordfreq.top_n_list("en", 12000):
        if not w.isalpha() or not w.islower() or len(w) < 3 or w in NUMBER_WORDS:
            continue  # (a number word is a number: the tests place those themselves)
        pos = lemminflect.getAllLemmas(w)
        if "NOUN" in pos:
            out["noun_pl" if w.endswith("s") and w not in pos["NOUN"] else "noun"].append(w)
        if "VERB" in pos:
            forms = pos["VERB"]
            key = ("verb" if w in forms else "verb_s" if w.endswith("s") else "verb_ed" if w.endswith(("ed", "en"))
                   else "verb_ing" if w.endswith("ing") else "verb")
            out[key].append(w)
        if "ADJ" in pos:
            out["adj"].append(w)
        if "ADV" in pos:
            out["adv"].append(w)
    return out


def word(draw: st.DrawFn, cls: str | None = None) -> str:
    c = classes()
    return draw(st.sampled_from(c[cls] if cls else c[draw(st.sampled_from(sorted(c)))]))


def words(draw: st.DrawFn, k: int) -> str:
    return " ".join(word(draw) for _ in range(k))


def flagged(j: Judgment, team: str, crit: str) -> bool:
    return any((i.team in (team, None)) and (i.criterion in (crit, None)) for i in j.review_items)


def distracted_line(draw: st.DrawFn, i: int, v: int) -> str:
    """A score's line with another number somewhere in it: before or after the score, between two criterion
    names, in parentheses, as a list's enumerators, as a number word; each followed by real words of any
    class."""
    n = draw(st.integers(0, 12))
    nw = draw(st.sampled_from(NUMBER_WORDS))
    other = LABELS[(i + draw(st.integers(1, 6))) % 7].lower()
    tail = words(draw, draw(st.integers(1, 3)))
    forms = [
        f"{n} {tail}, {v}", f"{n} {tail} — {v}/10", f"{v} — {n} {tail}", f"{v}/10; {n} {tail}",
        f"{v}, and unlike their {other}, {n} {tail}", f"{v} ({n} {tail})", f"({n}) {tail}: {v}",
        f"{v}. Two things: (1) {tail}, (2) {words(draw, 2)}", f"{nw} {tail}, {v}", f"{v}, {nw} {tail}",
        f"{v} {tail} {n}", f"{tail} {n}: {v}", f"{v} — {word(draw, 'noun')} {n} {tail}",
    ]
    return draw(st.sampled_from(forms))


def correction(draw: st.DrawFn, who: str, crit: str, old: int, new: int) -> str:
    """A change of a score from `old` to `new`, in any structure: an arrow, a verb of any kind and form (most of
    them on no list), a comparison, a value in parentheses, a value rejected and replaced in its line."""
    verb = word(draw, draw(st.sampled_from(["verb_ed", "verb_s", "verb_ing", "verb"])))
    adv = word(draw, "adv")
    adj = word(draw, "adj")
    return draw(st.sampled_from([
        f"{who} {crit} {old} → {new}: {words(draw, 3)}.", f"I {verb} {who}'s {crit} to {new}.",
        f"{who}'s {crit} {verb} {draw(st.sampled_from(['up', 'down']))} to {new}.",
        f"For {who}'s {crit}, a {new} is {adj}er than the {old} I gave.",
        f"{who}'s {crit} ({new} after {words(draw, 2)}).", f"{who}'s {crit}: {old}, no, {new}.",
        f"I {adv} {verb} {who}'s {crit} from {old} to {new}.", f"{who}'s {crit} {verb} to {new}, even if {words(draw, 3)}.",
        f"I lowered {who}'s {crit} to {new} because their {LABELS[draw(st.integers(0, 6))].lower()} {verb}.",
        # a concessive clause before the change, and a reason naming a second criterion with a count in it
        f"Although {words(draw, 3)}, I {verb} {who}'s {crit} to {new}.",
        f"{who}'s {crit} {verb} to {new}, though their {LABELS[draw(st.integers(0, 6))].lower()} "
        f"{word(draw, 'verb_ed')} {draw(st.integers(2, 9))} {word(draw, 'noun_pl')}.",
    ]))


def reply(draw: st.DrawFn, truth: dict[str, list[int]], line: object) -> str:
    out = []
    for t in draw(st.permutations(["a", "b"])):
        out.append(draw(st.sampled_from(["## Team {}", "**Team {}**", "Team {}:", "### Team {} scores"])).format(t.upper()))
        for i in range(7):
            out.append(line(i, truth[t][i]))  # type: ignore[operator]
        out.append("")
    return "\n".join(out)


truths = st.fixed_dictionaries({t: st.lists(st.integers(1, 10), min_size=7, max_size=7) for t in ("a", "b")})


def truth_or_flagged(j: Judgment, truth: dict[str, list[int]], text: str) -> None:
    for t in ("a", "b"):
        got = j.parsed_scores(t).as_dict()  # type: ignore[arg-type]
        for c, want in zip(CRITERIA, truth[t], strict=True):
            assert got[c] in (want, None), (t, c, got[c], want, text, j.review_reasons)
            if got[c] is None:
                assert flagged(j, t, c), (t, c, text)


def _distracted(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    k = {t: set(draw(st.lists(st.integers(0, 6), max_size=3))) for t in ("a", "b")}
    text = reply(draw, truth, lambda i, v: f"- {LABELS[i]}: " + (
        distracted_line(draw, i, v) if any(i in s for s in k.values()) and draw(st.booleans()) else f"{v}/10"))
    if draw(st.booleans()):  # a sentence after the scores naming a team and a criterion, with a number
        t = draw(st.sampled_from(["A", "B"]))
        text += (f"\nTeam {t}'s {LABELS[draw(st.integers(0, 6))].lower()} {word(draw)} {word(draw)} "
                 f"{draw(st.integers(0, 12))} {words(draw, 2)}.\n")
    truth_or_flagged(parse_judgment(text), truth, text)


@FAST
@given(truths, st.data())
def test_numbers_anywhere_on_a_line_leave_each_cell_the_truth_or_missing_and_flagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _distracted(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_numbers_anywhere_on_a_line(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _distracted(data, truth)


def _corrected(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    t = draw(st.sampled_from(["a", "b"]))
    i = draw(st.integers(0, 6))
    old = truth[t][i]
    new = draw(st.integers(1, 10).filter(lambda x: x != old))
    text = reply(draw, truth, lambda k, v: f"- {LABELS[k]}: {v}")
    text += "\n" + correction(draw, f"Team {t.upper()}", LABELS[i].lower(), old, new) + "\n"
    j = parse_judgment(text)
    got = j.parsed_scores(t).as_dict()[CRITERIA[i]]  # type: ignore[arg-type]
    # the old value would be wrong (the judge moved it) and the new one is only sure where the correction says
    # it was made: either is flagged, and the old one never stands
    assert got in (None, new), (got, old, new, text, j.review_reasons)
    assert flagged(j, t, CRITERIA[i]), (text, j.review_reasons)
    for tt in ("a", "b"):
        vals = j.parsed_scores(tt).as_dict()  # type: ignore[arg-type]
        for k, c in enumerate(CRITERIA):
            if (tt, k) != (t, i):
                assert vals[c] in (truth[tt][k], None), (tt, c, text)


@FAST
@given(truths, st.data())
def test_a_correction_in_any_words_never_leaves_the_old_value_unflagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _corrected(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_corrections_in_any_words(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _corrected(data, truth)


def _clean(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    style = draw(st.integers(0, 3))

    def line(i: int, v: int) -> str:
        why = words(draw, draw(st.integers(2, 6)))
        return [f"- {LABELS[i]}: {v}/10 — {why}", f"- {LABELS[i]}: {v}", f"{i + 1}. {LABELS[i]}: {v} ({why})",
                f"- **{LABELS[i]}:** {v}. {why.capitalize()}."][style]

    text = reply(draw, truth, line)
    if draw(st.booleans()):
        text += f"\n## Overall\n{words(draw, 8).capitalize()}.\n"
    j = parse_judgment(text)
    assert [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA] == [  # type: ignore[arg-type]
        v for t in ("a", "b") for v in truth[t]], (text, j.review_reasons)
    assert not j.needs_review, (text, j.review_reasons)


@FAST
@given(truths, st.data())
def test_a_clean_reply_with_reasons_in_any_words_is_read_in_full_and_not_flagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _clean(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_clean_replies_in_any_words(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _clean(data, truth)


# ------------------------------------------------------------------------ each number's reason, by example


@pytest.mark.parametrize("line,number,reason", [
    ("They named 3 stakeholders and 2 frameworks.", "3", "a count"),
    ("2 named frameworks", "2", "a count"),
    ("4 team members' worth of detail", "4", "a count"),
    ("3 points of tension", "3", "a count"),
    ("Roughly 40% of the groups", "40", "a percentage"),
    ("The 2019 precedent", "2019", "a year"),
    ("Consistency: 7 out of 10", "10", "the scale's maximum"),
    ("on a 1-10 scale", "1", "the scale (1-10)"),
    ("in 2 of the 3 test cases", "3", "a ratio's denominator"),
    ("(1) a worked example and (2) a reason", "1", "a list"),
    ("(1) a worked example and (2) a reason", "2", "a list enumerator"),
    ("their Principle 2 (autonomy)", "2", "an item's number"),
    ("they quoted \"a 9 out of 10 chance\" twice", "9", "in a quoted passage"),
    ("Team A changed its answer from 2 to 1", "1", "a change of their answer"),
    ("a 2-part test", "2", "part of a compound word"),
])
def test_each_number_has_its_reason(line: str, number: str, reason: str) -> None:
    n = next(x for x in numbers_in(line) if x.shown == number)
    assert n.reason is not None and n.reason.startswith(reason), (line, n)


@pytest.mark.parametrize("line,number", [
    ("Consistency: overall 6", "6"), ("5 for the hospital staff alone — 9", "5"), ("1 here, really", "1"), ("8 reflects", "8"),
    ("a 5 is fairer than the 6 I gave", "5"), ("7½", "7½"), ("3 overall", "3"), ("7 → 5", "5"),
])
def test_a_number_nothing_explains_is_unexplained(line: str, number: str) -> None:
    n = next(x for x in numbers_in(line) if x.shown == number)
    assert n.reason is None, (line, n)


def _two_teams(a: list[int], b: list[int], after: str) -> str:
    return ("## Team A\n" + "\n".join(f"- {lab}: {v}" for lab, v in zip(LABELS, a, strict=True))
            + "\n\n## Team B\n" + "\n".join(f"- {lab}: {v}" for lab, v in zip(LABELS, b, strict=True))
            + "\n\n" + after + "\n")


def test_a_correction_to_a_value_another_named_cell_has_is_not_left_unflagged() -> None:
    """Found by the generator: "lowered X to 8 because their <other criterion> ..." where that other criterion
    has 8 took the 8 as a reference to it and kept X's old value; only a reference structure makes a number
    another cell's value, so the 8 is X's (a correction or a conflict), whatever the reason names."""
    a = [1, 1, 1, 1, 1, 1, 8]
    text = _two_teams(a, [1] * 7, "I lowered Team A's principle articulation to 8 because their constructive "
                                  "engagement was thin.")
    j = parse_judgment(text)
    assert j.parsed_scores("a").as_dict()["principle_articulation"] in (None, 8)
    assert flagged(j, "a", "principle_articulation"), j.review_reasons


@pytest.mark.parametrize("sentence", [
    "Team B's framework awareness gets the same 6 as their consistency, for the same reason.",
    "Team B's framework awareness: 4, matching their consistency score (6) in spirit if not in number.",
    "Team B's framework awareness sits at 4; their consistency, like their honesty, is 6 to match their uncertainty integration.",
])
def test_a_number_tied_to_another_cells_name_by_a_reference_is_that_cells_value(sentence: str) -> None:
    b = [7, 6, 5, 6, 4, 6, 3]
    j = parse_judgment(_two_teams([5] * 7, b, sentence))
    assert [j.parsed_scores("b").as_dict()[c] for c in CRITERIA] == b, j.review_reasons  # type: ignore[arg-type]
    assert not j.needs_review, j.review_reasons


@pytest.mark.parametrize("sentence", [
    "Team B's framework awareness was a 6, not much like their consistency.",  # 6 is framework's, not a reference
    "I nudged Team B's framework awareness to 6 because their consistency carried it.",
    "Team B's framework awareness, as with their consistency, sits at 6.",
])
def test_a_value_another_named_cell_has_is_no_reference_without_the_structure(sentence: str) -> None:
    b = [7, 6, 5, 6, 4, 8, 3]
    j = parse_judgment(_two_teams([5] * 7, b, sentence))
    assert j.parsed_scores("b").as_dict()["framework_awareness"] in (None, 6), j.review_reasons
    assert flagged(j, "b", "framework_awareness"), j.review_reasons


@pytest.mark.parametrize("half", ["7½", "7 ½", "7.5", "7 1/2", "seven and a half", "7 and a half", "7-and-a-half"])
@pytest.mark.parametrize("layout", ["- {label}: {v}", "| {label} | {v} |", "{label} — {v}, a fair showing"])
def test_a_half_point_is_missing_and_flagged_as_not_a_whole_number(half: str, layout: str) -> None:
    """Never rounded, never read as the whole number before it, and the reason says why."""
    b = [6, 5, 8, 4, 9, 3, 6]
    lines = [layout.format(label=lab, v=half if k == 2 else v) for k, (lab, v) in enumerate(zip(LABELS, b, strict=True))]
    sep = "| Criterion | Score |\n|---|---|\n" if layout.startswith("|") else ""
    text = "## Team A\n" + sep + "\n".join(layout.format(label=lab, v=4) for lab in LABELS) + "\n\n## Team B\n" + sep \
        + "\n".join(lines) + "\n"
    j = parse_judgment(text)
    got = j.parsed_scores("b").as_dict()  # type: ignore[arg-type]
    assert got["stakeholder_recognition"] is None, (text, j.review_reasons)
    assert [got[c] for k, c in enumerate(CRITERIA) if k != 2] == [v for k, v in enumerate(b) if k != 2], j.review_reasons
    item = next(i for i in j.review_items if i.team == "b" and i.criterion == "stakeholder_recognition")
    assert "not a whole number" in item.message and half in item.message, item.message
    assert [i for i in j.review_items if (i.team, i.criterion) != ("b", "stakeholder_recognition")] == []


@pytest.mark.parametrize("team_head,unknown", [
    ("### Team {}", "### Closing thoughts"), ("## Team {}", "## Where the round turned"), ("**Team {}**", "**Verdict**"),
    ("Team {}:", "Takeaways:"), ("# Team {}", "# Comparative notes"), ("**Team {}**", "**Looking ahead**"),
])
def test_an_unknown_heading_ends_the_team_section(team_head: str, unknown: str) -> None:
    """A heading the reader does not know, at the team heading's level or above, ends that team's section:
    a criterion's line under it is no score of the team whose section was open (missing and flagged)."""
    a = [6, 5, 8, 4, 9, 3, 6]
    text = (team_head.format("A") + "\n" + "\n".join(f"- {lab}: {v}" for lab, v in zip(LABELS, a, strict=True))
            + "\n\n" + team_head.format("B") + "\n"
            + "\n".join(f"- {lab}: {v}" for k, (lab, v) in enumerate(zip(LABELS, a, strict=True)) if k != 1)
            + f"\n\n{unknown}\n- Consistency: 9, where both teams did their best work.\n")
    j = parse_judgment(text)
    assert j.parsed_scores("b").as_dict()["consistency"] is None, (text, j.review_reasons)  # type: ignore[arg-type]
    assert flagged(j, "b", "consistency")
    got = j.parsed_scores("a").as_dict()  # type: ignore[arg-type]
    # (a consistency of 9 that names no team makes Team A's consistency a person's call too: missing, flagged)
    assert [got[c] for c in CRITERIA if c != "consistency"] == [v for k, v in enumerate(a) if k != 1]
    assert got["consistency"] == a[1] or flagged(j, "a", "consistency")


@pytest.mark.parametrize("team_head,part", [
    ("## Team {}", "### Scores"), ("## Team {}", "### How they did"), ("**Team {}**", "**Scores**"),
    ("### Team {}", "**Their strengths**"), ("Team {}:", "Scoring breakdown:"),
])
def test_a_heading_inside_a_team_section_keeps_it(team_head: str, part: str) -> None:
    """A deeper heading, or one naming a part of the team's evaluation, is inside the team's section."""
    a, b = [6, 5, 8, 4, 9, 3, 6], [7, 7, 2, 5, 8, 9, 9]
    text = "\n\n".join(team_head.format(t) + "\n" + part + "\n" + "\n".join(f"- {lab}: {v}" for lab, v in zip(LABELS, s, strict=True))
                       for t, s in (("A", a), ("B", b)))
    j = parse_judgment(text)
    assert [j.parsed_scores("a").as_dict()[c] for c in CRITERIA] == a, (text, j.review_reasons)  # type: ignore[arg-type]
    assert [j.parsed_scores("b").as_dict()[c] for c in CRITERIA] == b  # type: ignore[arg-type]
    assert not j.needs_review, j.review_reasons


# ------------------------------------------------------------- judges' styles, with real words of every class


@lru_cache(maxsize=16)
def _plain(cls: str | None) -> list[str]:
    from ebtui.core.judgment.vocabulary import CRIT_RE, team_regex

    rx = team_regex("", "")
    # (nor an auxiliary that is also a noun: "2 does, 1" is deer to lemminflect and "does" to a reader)
    return [w for w in (classes()[cls] if cls else sorted(set(sum(classes().values(), []))))
            if not CRIT_RE.search(w) and not rx.search(w) and "AUX" not in lemminflect.getAllLemmas(w)]


def _plain_word(draw: st.DrawFn, cls: str | None = None) -> str:
    """A real word that names no criterion and no team (those change what a line is about), and is no
    auxiliary."""
    return draw(st.sampled_from(_plain(cls)))


def _styled(data: st.DataObject, truth: dict[str, list[int]]) -> tuple[str, int]:
    """A clean reply in one judge's style, with counts and reasons in real words: a count before a score set
    off at the end of its line, a score's own label after a reason, number-first lines with a reason, a table
    whose count column (any header) sits beside the score column."""
    draw = data.draw
    style = draw(st.integers(0, 3))

    def reason(k: int) -> str:
        return " ".join(_plain_word(draw) for _ in range(k))

    def line(i: int, v: int) -> str:
        n = draw(st.integers(2, 10))
        if style == 0:
            return f"- {LABELS[i]}: {n} {_plain_word(draw, 'noun_pl')}, {v}"
        if style == 1:
            return f"- {LABELS[i]}: {reason(draw(st.integers(2, 4)))}; score {v}"
        if style == 2:
            return f"{v}/10 {LABELS[i].lower()} — {reason(draw(st.integers(2, 5)))}"
        return f"| {LABELS[i]} | {draw(st.integers(0, 10))} | {v} |"

    if style == 3:
        header = f"| Criterion | {_plain_word(draw, 'noun').capitalize()} {_plain_word(draw, 'verb_ed')} | Score |\n|---|---|---|"
        text = "\n\n".join(f"## Team {t.upper()}\n{header}\n" + "\n".join(line(i, v) for i, v in enumerate(truth[t]))
                           for t in ("a", "b"))
    else:
        text = reply(draw, truth, line)
    return text, style


def _check_styled(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    text, style = _styled(data, truth)
    j = parse_judgment(text)
    assert [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA] == [  # type: ignore[arg-type]
        v for t in ("a", "b") for v in truth[t]], (style, text, j.review_reasons)
    assert not j.needs_review, (style, text, j.review_reasons)


@FEW
@given(truths, st.data())
def test_judges_styles_with_counts_and_reasons_in_any_words_are_read_in_full(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _check_styled(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_judges_styles(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _check_styled(data, truth)


def _prose(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    """Prose paragraphs: each criterion's score given by a verb of any kind and an article ("Consistency
    <verb> a 7"), with counts of real nouns between: read as the truth (flagged as prose), or missing and
    flagged; never another number."""
    draw = data.draw
    out = []
    for t in ("a", "b"):
        sents = [f"Team {t.upper()} {_plain_word(draw, 'verb_ed')} {draw(st.integers(2, 9))} {_plain_word(draw, 'noun_pl')}."]
        for i, v in enumerate(truth[t]):
            verb = _plain_word(draw, draw(st.sampled_from(["verb_s", "verb_ed"])))
            form = draw(st.integers(0, 2))
            sents.append([f"{LABELS[i]} {verb} a {v}.",
                          f"For {LABELS[i].lower()} I {verb} them a {v}, with {draw(st.integers(2, 9))} "
                          f"{_plain_word(draw, 'noun_pl')} {_plain_word(draw, 'verb_ed')}.",
                          f"Their {LABELS[i].lower()} {verb} {draw(st.integers(2, 9))} {_plain_word(draw, 'noun_pl')}, "
                          f"which {verb} a {v}."][form])
        out.append(" ".join(sents))
    text = "\n\n".join(out)
    truth_or_flagged(parse_judgment(text), truth, text)


@FEW
@given(truths, st.data())
def test_prose_scores_with_any_verb_are_the_truth_or_missing_and_flagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _prose(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_prose_scores_with_any_verb(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _prose(data, truth)


@pytest.mark.parametrize("layout", ["- {label}: {w}", "**{label}** — {w} (a fair showing)", "{label}: {w}/10"])
def test_a_number_word_as_a_labels_value_is_read_and_not_flagged(layout: str) -> None:
    """"Consistency: eight" is the judge's 8: one criterion, one value in a score's place, its team settled by
    the section, so it is read and not flagged (a number word in running text is never read: "they raised
    eight objections")."""
    a = [6, 5, 8, 4, 9, 3, 10]
    body = "\n".join(layout.format(label=lab, w=NUMBER_WORDS[v - 1]) for lab, v in zip(LABELS, a, strict=True))
    j = parse_judgment(f"## Team A\n{body}\nThey raised eight objections in all.\n\n## Team B\n{body}\n")
    for t in ("a", "b"):
        assert [j.parsed_scores(t).as_dict()[c] for c in CRITERIA] == a, j.review_reasons  # type: ignore[arg-type]
    assert not j.review_items, j.review_reasons


@pytest.mark.parametrize("line", ["Consistency: seven, or eight if the rebuttal counts", "Consistency: seven?",
                                  "Consistency and honesty: seven", "Consistency: seven for Team B"])
def test_a_number_word_whose_reading_is_open_is_flagged(line: str) -> None:
    """A condition, a question, two criteria for one value, another team named: the reading is open, so the
    cell is flagged (read or missing), never a silent 7 for Team A."""
    j = parse_judgment(f"## Team A\n{line}\n")
    flagged = {i.criterion for i in j.review_items if i.team in ("a", None)}
    assert "consistency" in flagged or None in flagged, j.review_reasons
