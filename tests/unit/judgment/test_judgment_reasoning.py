"""A reasoning model's working before its answer ("<think>…</think>", parser.without_reasoning): its draft
numbers are not the judgment; the answer after it is read as if alone, and the reply is kept whole."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.records import CRITERIA
from tests.unit.judgment.test_judgment_accounting import FEW, LABELS, truth_or_flagged, truths, words


def _working(draw: st.DrawFn, truth: dict[str, list[int]]) -> str:
    """Draft scores in prose, each with rival values ("maybe 8, or 6? … 7"), none of them necessarily the final."""
    lines = []
    for t in ("a", "b"):
        for i, label in enumerate(LABELS):
            a, b = draw(st.integers(1, 10)), draw(st.integers(1, 10))
            lines.append(f"Team {t.upper()} {label.lower()}: {words(draw, 3)}, maybe {a}, or {b}? "
                         f"{words(draw, 2)}. {draw(st.sampled_from([a, b, truth[t][i]]))}.")
    return "\n".join(lines)


def _answer(truth: dict[str, list[int]]) -> str:
    return "```json\n" + json.dumps({f"team_{t}": {"scores": dict(zip(CRITERIA, truth[t], strict=True))}
                                     for t in ("a", "b")}, indent=2) + "\n```"


@FEW
@given(truths, st.data(), st.sampled_from(["think", "thinking", "reasoning", "THINK"]))
def test_the_answer_after_a_closed_working_block_is_read_alone(truth: dict[str, list[int]], data: st.DataObject,
                                                                tag: str) -> None:
    reply = f"<{tag}>\n{_working(data.draw, truth)}\n</{tag}>\n\n{_answer(truth)}\n"
    j = parse_judgment(reply)
    assert [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA] == truth["a"] + truth["b"]
    assert not j.needs_review, j.review_reasons
    assert j.raw_response == reply  # (the reply is kept whole: only its reading leaves the working out)


@FEW
@given(truths, st.data())
def test_a_working_block_never_closed_is_read_as_it_stands(truth: dict[str, list[int]], data: st.DataObject) -> None:
    """Without its end the block may be the answer: it is read, and each cell is the truth or flagged."""
    reply = f"<think>\n{_working(data.draw, truth)}\n\n{_answer(truth)}\n"
    j = parse_judgment(reply)
    truth_or_flagged(j, truth, reply)


def test_a_closed_block_with_nothing_after_it_is_all_there_is_to_read() -> None:
    reply = "<think>\n" + "\n".join(f"- {label}: 7" for label in LABELS) + "\n</think>\n"
    j = parse_judgment(reply)
    assert j.raw_response == reply and j.needs_review  # (read as it stands: no team named, so flagged)


# ------------------------------------------------- tables drawn with box-drawing characters (box_tables_as_pipes)

_STYLES = [("┌┬┐├┼┤└┴┘", "─", "│"), ("┏┳┓┣╋┫┗┻┛", "━", "┃"), ("╔╦╗╠╬╣╚╩╝", "═", "║")]


@FEW
@given(truths, st.data())
def test_a_box_drawn_table_is_read_as_a_markdown_one(truth: dict[str, list[int]], data: st.DataObject) -> None:
    """Random box style, widths, team column order, criterion order, with or without outer rules: read in full."""
    draw = data.draw
    corners, line, bar = draw(st.sampled_from(_STYLES))
    order = draw(st.permutations(range(7)))
    teams = draw(st.sampled_from([("a", "b"), ("b", "a")]))
    w = [draw(st.integers(24, 30)), draw(st.integers(8, 10)), draw(st.integers(8, 10))]
    outer = draw(st.booleans())

    def rule(left: str, mid: str, right: str) -> str:
        return left + mid.join(line * n for n in w) + right

    def row(cells: list[str]) -> str:
        return bar + bar.join(f" {c}".ljust(n) for c, n in zip(cells, w, strict=True)) + bar

    rows = [rule(*corners[0:3])] if outer else []
    rows += [row(["Criterion", *(f"Team {t.upper()}" for t in teams)]), rule(*corners[3:6])]
    rows += [row([LABELS[i], *(str(truth[t][i]) for t in teams)]) for i in order]
    rows += [rule(*corners[6:9])] if outer else []
    reply = "Final scores:\n\n```\n" + "\n".join(rows) + "\n```\n\nOverall: " + words(draw, 6) + ".\n"
    j = parse_judgment(reply)
    assert [j.parsed_scores(t).as_dict()[c] for t in ("a", "b") for c in CRITERIA] == truth["a"] + truth["b"], reply
    assert not j.needs_review, (reply, j.review_reasons)
    assert j.raw_response == reply
