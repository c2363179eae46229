"""Lists whose values stand in an order the reply states (ordered_lines.py, issue #37), on generated replies.

A team's seven values after a line that states the rubric's order or lists the seven criteria (names, initials,
shortenings, in any order, among real words); both teams' values as "N/M" under a heading naming them around a
slash. Distractors: lists of six or eight values, values that are no whole score, reasons in real words, a
list with no stated order beside other scores. Invariants: every cell the truth or missing and flagged; a
clean reply read in full and not flagged.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.judgment.abbreviations import INITIALS
from ebtui.core.judgment.ordered_lines import stated_order
from ebtui.core.records import CRITERIA, CRITERION_LABELS
from tests.unit.judgment.test_judgment_tables_layouts import check, truths, word

pytest.importorskip("wordfreq", reason="the word list comes from wordfreq (the test extra)")

FAST = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
THOROUGH = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LABELS = [CRITERION_LABELS[c] for c in CRITERIA]
INITIAL_OF = {c: i for i, c in INITIALS.items()}


def declaration(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    """A line that states the order: the rubric's in words, or the seven criteria listed in a drawn order."""
    if draw(st.booleans()):
        phrase = draw(st.sampled_from(["in rubric order", "in the order of the criteria", "in criterion order",
                                       "in the same order as the rubric", "following the rubric's order"]))
        return f"{word(draw, 'noun_pl').capitalize()} {phrase}:", CRITERIA
    order = tuple(draw(st.permutations(list(CRITERIA))))
    style = draw(st.sampled_from(["initials", "names", "short"]))
    names = [INITIAL_OF[c] if style == "initials" else CRITERION_LABELS[c] if style == "names"
             else CRITERION_LABELS[c].split()[-1][:6].capitalize() for c in order]
    sep = draw(st.sampled_from([" / ", ", ", " | ", " · "]))
    return f"Scores ({sep.join(names)}):", order


def _ordered(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    head, order = declaration(draw)
    assert stated_order(head, {}) == order
    sep = draw(st.sampled_from([" / ", "/", ", ", " ", " · ", "; "]))  # (with pipes a list is a table's row)
    want: dict[str, list[int | None]] = {t: list(truth[t]) for t in ("a", "b")}
    lines = [head]
    for t in draw(st.permutations(["a", "b"])):
        values = [str(truth[t][CRITERIA.index(c)]) for c in order]
        bad = draw(st.sampled_from(["none", "none", "none", "short", "long", "fraction", "outside"]))
        if bad == "short":
            values = values[:6]
        elif bad == "long":
            values.append(str(draw(st.integers(1, 10))))
        elif bad == "fraction":
            values[draw(st.integers(0, 6))] = "7.5"
        elif bad == "outside":
            values[draw(st.integers(0, 6))] = draw(st.sampled_from(["0", "11", "12"]))
        if bad != "none":
            want[t] = [None] * 7
        label = draw(st.sampled_from(["- Team {}", "Team {}", "**Team {}**", "- {}", "{}"])).format(t.upper())
        lines.append(f"{label}: {sep.join(values)}")
    lines += ["", f"Team A: {word(draw, 'adj')} {word(draw, 'noun')}, {word(draw, 'verb_ed')} {word(draw, 'adv')}.",
              f"Overall: {word(draw, 'adj')}."]
    text = "\n".join(lines) + "\n"
    clean = all(v is not None for t in want.values() for v in t)
    check(parse_judgment(text), want, text, clean)


@FAST
@given(truths, st.data())
def test_seven_values_in_a_stated_order(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _ordered(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_seven_values_in_a_stated_order(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _ordered(data, truth)


@FAST
@given(truths, st.data())
def test_a_list_with_no_stated_order_is_read_only_alone_and_flagged(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    draw = data.draw
    sep = draw(st.sampled_from([" / ", ", ", " "]))
    labelled_b = draw(st.booleans())
    lines = [f"Team A: {sep.join(map(str, truth['a']))}"]
    if labelled_b:  # the other team by labelled lines: its list is not needed
        lines += ["", "Team B:"] + [f"- {LABELS[k]}: {v}" for k, v in enumerate(truth["b"])]
    text = "\n".join(lines) + "\n"
    j = parse_judgment(text)
    want: dict[str, list[int | None]] = {"a": list(truth["a"]), "b": list(truth["b"]) if labelled_b else [None] * 7}
    check(j, want, text, False)
    assert any(i.team == "a" for i in j.review_items), text  # the order is the rubric's only by assumption


def _slash_pairs(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    order = draw(st.permutations(["a", "b"]))
    x, y = (t.upper() for t in order)
    head = draw(st.sampled_from([f"Scores as {x}/{y}:", f"Scores ({x} / {y})", f"**Team {x} / Team {y}**",
                                 f"{word(draw, 'noun_pl').capitalize()} — {x}/{y}:"]))
    want: dict[str, list[int | None]] = {t: list(truth[t]) for t in ("a", "b")}
    lines = [head]
    for i in range(7):
        first, second = truth[order[0]][i], truth[order[1]][i]
        if second == 10:
            want["a"][i] = want["b"][i] = None  # "7/10": seven out of ten, or 7 and 10? Left missing
        lines.append(f"- {LABELS[i]}: {first}/{second}")
    lines += ["", f"Overall: {word(draw, 'adj')} {word(draw, 'noun')}."]
    text = "\n".join(lines) + "\n"
    clean = all(v is not None for t in want.values() for v in t)
    check(parse_judgment(text), want, text, clean)


@FAST
@given(truths, st.data())
def test_both_teams_as_n_slash_m_under_a_heading_naming_their_order(
        truth: dict[str, list[int]], data: st.DataObject) -> None:
    _slash_pairs(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_slash_pairs(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _slash_pairs(data, truth)


def test_a_line_of_words_states_no_order() -> None:
    assert stated_order("The teams were close on most things.", {}) is None
    assert stated_order("Order: PA / C / SR / UI / FA / IH", {}) is None  # six: not the rubric
    assert stated_order("PA / C / SR / UI / FA / IH / CE (7 criteria)", {}) is None  # a digit: no heading


def _for_teams(data: st.DataObject, truth: dict[str, list[int]]) -> None:
    draw = data.draw
    name = draw(st.sampled_from(["{}", "Team {}"]))
    prep = draw(st.sampled_from(["for", "to"]))
    counted = draw(st.booleans())  # a reason with a count in it: read or missing and flagged, never wrong
    lines = [draw(st.sampled_from(["Scores:", "## Scores", "**Scores**"]))]
    for i in range(7):
        order = draw(st.permutations(["a", "b"]))
        x, y = (name.format(t.upper()) for t in order)
        why = f"{word(draw, 'adj')} {word(draw, 'noun')}"
        if counted and i == 3:
            why = f"{draw(st.integers(0, 12))} {word(draw, 'noun_pl')} {word(draw, 'verb_ed')}"
        sep = draw(st.sampled_from([", ", "; ", " and ", ", and "]))
        lines.append(f"- {LABELS[i]} {draw(st.sampled_from(['—', ':', '-']))} {truth[order[0]][i]} {prep} {x}{sep}"
                     f"{truth[order[1]][i]} {prep} {y} ({why})")
    lines += ["", f"Overall: {word(draw, 'adj')} {word(draw, 'noun')}."]
    text = "\n".join(lines) + "\n"
    # read in full where the teams are bare letters; "Team A, 2 for Team B" is also read by the text reader's
    # name-then-value rule (text_reader._pairs) as Team A's 2: a conflict, flagged, until that rule sees "for"
    check(parse_judgment(text), {t: list(truth[t]) for t in ("a", "b")}, text, not counted and name == "{}")


@FAST
@given(truths, st.data())
def test_each_value_before_the_team_it_is_for(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _for_teams(data, truth)


@pytest.mark.slow
@THOROUGH
@given(truths, st.data())
def test_thorough_each_value_before_its_team(truth: dict[str, list[int]], data: st.DataObject) -> None:
    _for_teams(data, truth)
