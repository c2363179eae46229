"""A number is a score only where a rule identifies it as one team's score on one criterion.

Example tests, one per way a judge's layout can mislead a reader: a column that states the maximum, a score
header that names the scale, a revised column, a cut row, a numbered item, a question, teams named by
number or letter, corrections beside hedges, pairs under a two-team heading. Each reply is written here."""

from __future__ import annotations

import json

import pytest

from ebtui.core.judgment import parse_judgment
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment

LABELS = [CRITERION_LABELS[c] for c in CRITERIA]
A = [7, 6, 8, 5, 9, 7, 10]
B = [5, 8, 6, 7, 4, 9, 1]


def as_lists(j: Judgment) -> tuple[list[int | None], list[int | None]]:
    return list(j.team_a_scores.as_dict().values()), list(j.team_b_scores.as_dict().values())


def kinds(j: Judgment) -> list[tuple[str | None, str | None, str]]:
    return [(i.team, i.criterion, i.kind) for i in j.review_items]


def per_team_tables(header: str, row: str, names: tuple[str, str] = ("Team A", "Team B")) -> str:
    parts = []
    for name, values in zip(names, (A, B), strict=True):
        rule = "|" + "---|" * (header.count("|") - 1)
        parts.append(f"#### {name}\n{header}\n{rule}\n" + "\n".join(
            row.format(label=lab, v=v) for lab, v in zip(LABELS, values, strict=True)))
    return "\n\n".join(parts) + "\n"


TEAM_COLUMNS = "| Criterion | Team A | Team B |\n|---|---|---|\n" + "".join(
    f"| {lab} | {a} | {b} |\n" for lab, a, b in zip(LABELS, A, B, strict=True))


# ---------------------------------------------------------------------------------------- table columns


@pytest.mark.parametrize("header,row", [
    ("| Criterion | Out of | Awarded |", "| {label} | 10 | {v} |"),
    ("| Criterion | Score (out of 10) | Justification |", "| {label} | {v} | the reasons for {label} |"),
    ("| Criterion | Score /10 | Notes |", "| {label} | {v} | fine |"),
    ("| Criterion | Max | Rating | Rank |", "| {label} | 10 | {v} | 3 |"),
    ("| Criterion | Weight | Points |", "| {label} | 15% | {v} |"),
])
def test_the_score_column_is_found_by_what_its_header_means(header: str, row: str) -> None:
    j = parse_judgment(per_team_tables(header, row))
    assert as_lists(j) == (A, B)
    assert not j.needs_review, j.review_reasons


def test_a_revised_column_wins_over_the_original_and_the_change_is_flagged() -> None:
    text = per_team_tables("| Criterion | Original | Revised |", "| {label} | {v} | {v} |")
    text = text.replace("| Consistency | 6 | 6 |", "| Consistency | 8 | 6 |")  # Team A's changed 8 -> 6
    j = parse_judgment(text)
    assert as_lists(j) == (A, B)
    assert kinds(j) == [("a", "consistency", "correction")]
    assert "8 corrected to 6" in j.review_reasons[0]


def test_weight_and_weighted_columns_beside_each_team_are_not_its_score() -> None:
    head = "| Criterion | Weight | Team A | Team A (weighted) | Team B | Team B (weighted) |\n|---|---|---|---|---|---|\n"
    rows = "".join(f"| {lab} | 1.5 | {a} | {a * 1.5} | {b} | {b * 1.5} |\n" for lab, a, b in zip(LABELS, A, B, strict=True))
    j = parse_judgment(head + rows + f"| Total | | {sum(A)} | | {sum(B)} | |\n")
    assert as_lists(j) == (A, B) and not j.needs_review


def test_abbreviated_criteria_with_a_total_row_are_clean() -> None:
    short = ["Princ. artic.", "Consist.", "Stakeh. recog.", "Uncert. integ.", "Framew. aw.", "Intell. hon.", "Constr. eng."]
    text = "| | A | B |\n|:-|:-:|:-:|\n" + "".join(f"| {s} | {a} | {b} |\n" for s, a, b in zip(short, A, B, strict=True))
    j = parse_judgment(text + f"| **Total** | **{sum(A)}** | **{sum(B)}** |\n")
    assert as_lists(j) == (A, B) and not j.needs_review


def test_a_table_that_abbreviates_the_criteria_to_their_initials() -> None:
    initials = ["PA", "C", "SR", "UI", "FA", "IH", "CE"]
    by_column = ("| Team | " + " | ".join(initials) + " | Total |\n|---|" + "---|" * 8 + "\n"
                 + "".join(f"| Team {t} | " + " | ".join(map(str, v)) + f" | {sum(v)} |\n" for t, v in (("A", A), ("B", B))))
    by_row = "| | A | B |\n|---|---|---|\n" + "".join(f"| {k} | {a} | {b} |\n" for k, a, b in zip(initials, A, B, strict=True))
    for text in (by_column, by_row + f"| Total | {sum(A)} | {sum(B)} |\n"):
        j = parse_judgment(text)
        assert as_lists(j) == (A, B) and not j.needs_review, (text, j.review_reasons)
    # and in a line per team
    lines = "\n".join(f"Team {t} — " + " · ".join(f"{k} {v}" for k, v in zip(initials, vals, strict=True))
                      for t, vals in (("A", A), ("B", B)))
    j = parse_judgment(lines + "\n")  # (ending on "CE 1" with no line break, it might have been cut from 10)
    assert as_lists(j) == (A, B) and not j.needs_review, j.review_reasons
    # two initials are not enough to say a table abbreviates the rubric: "C" alone could be anything
    j = parse_judgment("| | A | B |\n|---|---|---|\n| C | 7 | 6 |\n| PA | 8 | 5 |\n")
    assert as_lists(j) == ([None] * 7, [None] * 7)


# ---------------------------------------------------------------------------------------- truncation


def test_a_table_row_cut_before_its_closing_cell_is_not_read() -> None:
    cut = TEAM_COLUMNS.rstrip("\n")[: -len(" |")]  # "... | Constructive engagement | 10 | 1"
    assert cut.endswith("| 10 | 1")
    for reason in (None, "length"):
        j = parse_judgment(cut, finish_reason=reason)
        assert as_lists(j) == (A, B[:6] + [None])
        assert ("b", "constructive_engagement", "missing") in kinds(j)
        assert any(i.kind == "truncated" and "| 10 | 1" in i.message for i in j.review_items)


def test_a_labelled_line_cut_at_the_end_is_not_read() -> None:
    lines = "## Team A\n" + "\n".join(f"- {lab}: {v}/10" for lab, v in zip(LABELS, A, strict=True))
    lines += "\n## Team B\n" + "\n".join(f"- {lab}: {v}/10" for lab, v in zip(LABELS, B, strict=True))
    cut = lines[: -len("/10")]  # "- Constructive engagement: 1" — the judge's other lines go on with "/10"
    j = parse_judgment(cut)
    assert as_lists(j) == (A, B[:6] + [None]) and j.needs_review
    # the same reply, complete and without a final line break, is read in full
    assert as_lists(parse_judgment(lines)) == (A, B) and not parse_judgment(lines).needs_review
    # finish reason "length": the last number is never read, wherever the reply stops
    j = parse_judgment(lines, finish_reason="length")
    assert as_lists(j) == (A, B[:6] + [None])


# ---------------------------------------------------------------------------------------- not a score


def test_numbered_items_and_count_keys_are_not_scores() -> None:
    text = "## Team A\n" + "\n".join(f"{lab}: {v}" for lab, v in zip(LABELS, A, strict=True))
    text += "\nTheir Principle 2 (autonomy) clashed with stakeholder 3 (the insurer).\n"
    text += "## Team B\n" + "\n".join(f"{lab}: {v}" for lab, v in zip(LABELS, B, strict=True)) + "\n"
    j = parse_judgment(text)
    assert as_lists(j) == (A, B) and not j.needs_review
    obj = {"team_a": {"scores": dict(zip(CRITERIA, A, strict=True)), "num_stakeholders": 4, "principle_count": 2},
           "team_b": {"scores": dict(zip(CRITERIA, B, strict=True)), "stakeholders_named": 3}}
    j = parse_judgment(json.dumps(obj))
    assert as_lists(j) == (A, B) and not j.needs_review


def test_a_questioned_value_is_not_read() -> None:
    text = "## Team A\n" + "\n".join(f"{lab}: {v}" for lab, v in zip(LABELS[:6], A, strict=False))
    text += "\nConstructive engagement: a 9 for them? Not quite, they talked past Team B.\n"
    text += "## Team B\n" + "\n".join(f"{lab}: {v}" for lab, v in zip(LABELS, B, strict=True)) + "\n"
    j = parse_judgment(text)
    assert as_lists(j) == (A[:6] + [None], B)
    assert ("a", "constructive_engagement", "missing") in kinds(j)
    # the reason says where a person should look
    item = next(i for i in j.review_items if i.criterion == "constructive_engagement")
    assert "a 9 for them? Not quite" in item.message and "Team A Constructive engagement" in item.message


@pytest.mark.parametrize("anchors", ["(1 = absent, 10 = exemplary)", "— anchors: 1 (absent), 5 (fair), 10 (model)",
                                     "(scale 1-10)", "(0–10)"])
def test_rubric_anchors_in_criterion_headings_are_clean(anchors: str) -> None:
    text = "".join(f"### {lab} {anchors}\n- Team A: {a}\n- Team B: {b}\n\n"
                   for lab, a, b in zip(LABELS, A, B, strict=True))
    j = parse_judgment(text)
    assert as_lists(j) == (A, B) and not j.needs_review


# ---------------------------------------------------------------------------------------- teams


@pytest.mark.parametrize("first,second", [("Team 1", "Team 2"), ("Team One", "Team Two"),
                                          ("A (presenting)", "B (responding)"), ("**B**", "**A**")])
def test_the_two_teams_by_number_word_or_letter(first: str, second: str) -> None:
    swap = first == "**B**"
    one, two = (B, A) if swap else (A, B)
    text = f"### {first}\n" + "\n".join(f"- {lab}: {v}" for lab, v in zip(LABELS, one, strict=True))
    text += f"\n\n### {second}\n" + "\n".join(f"- {lab}: {v}" for lab, v in zip(LABELS, two, strict=True)) + "\n"
    j = parse_judgment(text)
    assert as_lists(j) == (A, B) and not j.needs_review, j.review_reasons


def test_the_other_team_is_the_opponent_and_a_team_c_is_a_third_party() -> None:
    text = TEAM_COLUMNS + "\n## Team A\nOne correction: the other team deserves a 3 on consistency, not 8.\n"
    j = parse_judgment(text)
    assert j.team_b_scores.consistency == 3 and ("b", "consistency", "correction") in kinds(j)
    assert j.team_a_scores.consistency == 6
    j = parse_judgment(TEAM_COLUMNS + "\nTeam C, in an earlier round, had consistency 2.\n")
    assert as_lists(j) == (A, B) and not j.needs_review


@pytest.mark.parametrize("sentence", [
    "On reflection I was not fair to Team A: their consistency should be 3, not 6.",
    "Having compared them with the opposing team, I am lowering Team A's consistency from 6 to 3.",
    "Team A's consistency deserves a 3 rather than 6; I misread their second answer.",
])
def test_a_correction_with_a_hedge_a_negation_or_the_opponent_still_corrects(sentence: str) -> None:
    j = parse_judgment(TEAM_COLUMNS + "\n" + sentence + "\n")
    assert j.team_a_scores.consistency == 3
    assert kinds(j) == [("a", "consistency", "correction")]
    assert "6 corrected to 3" in j.review_reasons[0] and sentence[:30] in j.review_reasons[0]


@pytest.mark.parametrize("sentence", [
    "I would not lower Team A's consistency to 3; their second answer holds up.",
    "Had Team A dropped the exception, I would have raised their consistency to 9.",
])
def test_a_change_the_judge_considered_and_did_not_make_is_no_correction_but_a_second_value(sentence: str) -> None:
    """Not a correction (the table's value is not replaced by it), but a second value for the cell all the same:
    whatever words carry it, the cell is missing and flagged, and the reason quotes the sentence."""
    j = parse_judgment(TEAM_COLUMNS + "\n" + sentence + "\n")
    a, b = as_lists(j)
    assert a == [None if c == "consistency" else v for c, v in zip(CRITERIA, A, strict=True)] and b == B
    assert kinds(j) == [("a", "consistency", "conflict")]
    assert sentence[:20] in j.review_reasons[0] and "6" in j.review_reasons[0]


@pytest.mark.parametrize("sentence,made", [
    ("I weighed lowering Team A's consistency to 3.", False),
    ("For a while I toyed with a revision of Team A's consistency to 3.", False),
    ("I was tempted to lower Team A's consistency to 3, but it stays.", False),
    ("I'd lower Team A's consistency to 3.", False),
    ("I nearly lowered Team A's consistency to 3.", False),
    ("I'm lowering Team A's consistency to 3.", True),
    ("I lowered Team A's consistency to 3 after a second reading.", True),
    ("Team A's consistency is revised to 3.", True),
    ("I have changed Team A's consistency from 6 to 3.", True),
])
def test_a_change_corrects_when_stated_as_made_and_is_a_conflict_when_only_weighed(sentence: str, made: bool) -> None:
    j = parse_judgment(TEAM_COLUMNS + "\n" + sentence + "\n")
    assert j.team_a_scores.consistency == (3 if made else None)
    assert kinds(j) == [("a", "consistency", "correction" if made else "conflict")]
    assert sentence[:20] in j.review_reasons[0]


def test_a_weighed_change_settled_by_a_later_revised_table_takes_the_table() -> None:
    revised = TEAM_COLUMNS.replace("| Consistency | 6 | 8 |", "| Consistency | 3 | 8 |")
    j = parse_judgment(TEAM_COLUMNS + "\nI weighed lowering Team A's consistency to 3.\n\n## Revised scores\n\n" + revised)
    assert j.team_a_scores.consistency == 3 and kinds(j) == [("a", "consistency", "correction")]


@pytest.mark.parametrize("after,read", [
    ("suits them", True), ("is fair", True), ("seems generous", True), ("would serve them", True),
    ("rewards them well", True), ("named stakeholders", False), ("were named", False), ("parties", False),
    ("that matter", False),  # a relative clause: it may count things as well as praise a score
    ("reflects their effort", False),  # a noun ("reflects") the team named? A person decides
])
def test_what_follows_a_number_makes_it_a_score_or_a_count(after: str, read: bool) -> None:
    j = parse_judgment(TEAM_COLUMNS.replace("| Consistency | 6 | 8 |", f"| Consistency | 6 {after} | 8 |"))
    assert j.team_a_scores.consistency == (6 if read else None)
    assert kinds(j) == ([] if read else [("a", "consistency", "missing")])


def test_a_correction_that_names_no_team_leaves_the_criterion_missing_for_both() -> None:
    j = parse_judgment(TEAM_COLUMNS + "\nCorrection: consistency should read 4, not 6.\n")
    assert j.team_a_scores.consistency is None and j.team_b_scores.consistency is None
    assert {("a", "consistency", "conflict"), ("b", "consistency", "conflict")} <= set(kinds(j))


def test_prose_that_disagrees_with_a_table_is_a_conflict() -> None:
    j = parse_judgment(TEAM_COLUMNS + "\nIn the end Team B's framework awareness was a 3.\n")
    assert j.team_b_scores.framework_awareness is None
    assert ("b", "framework_awareness", "conflict") in kinds(j)


# ---------------------------------------------------------------------------------------- lost replies


@pytest.mark.parametrize("line", ["- {label}: Strong ({v})", "{label} — {v} is fair.", "{label}: ★★★☆ ({v})"])
def test_a_score_in_a_rating_construction_is_read(line: str) -> None:
    text = "".join(f"## Team {t}\n" + "\n".join(line.format(label=lab, v=v) for lab, v in zip(LABELS, vals, strict=True))
                   + "\n\n" for t, vals in (("A", A), ("B", B)))
    j = parse_judgment(text)
    assert as_lists(j) == (A, B) and not j.needs_review, j.review_reasons


@pytest.mark.parametrize("heading,sep", [("Scores (Team A / Team B):", " / "), ("**Team B vs Team A**", " vs "),
                                         ("**Scores — A | B**", " | ")])
def test_pairs_under_a_heading_naming_both_teams(heading: str, sep: str) -> None:
    swap = "Team B vs" in heading
    text = heading + "\n" + "".join(f"- {lab}: {(b if swap else a)}{sep}{(a if swap else b)}\n"
                                    for lab, a, b in zip(LABELS, A, B, strict=True))
    j = parse_judgment(text)
    assert as_lists(j) == (A, B) and not j.needs_review, j.review_reasons


def test_csv_and_space_aligned_tables() -> None:
    csv = "criterion,team_a,team_b\n" + "".join(f"{c},{a},{b}\n" for c, a, b in zip(CRITERIA, A, B, strict=True))
    aligned = "Criterion                  A    B\n" + "".join(
        f"{lab:<27}{a:<5}{b}\n" for lab, a, b in zip(LABELS, A, B, strict=True))
    for text in (csv, aligned):
        j = parse_judgment("Scores:\n\n" + text + "\nThat is all.")
        assert as_lists(j) == (A, B) and not j.needs_review, (text, j.review_reasons)


def test_each_review_reason_names_the_cell_its_source_and_why() -> None:
    j = parse_judgment(TEAM_COLUMNS.replace("| Consistency | 6 | 8 |", "| Consistency | 6.5 | 8 |"))
    item = next(i for i in j.review_items if i.criterion == "consistency")
    assert (item.team, item.kind) == ("a", "invalid")
    assert "Team A Consistency" in item.message and "| Consistency | 6.5 | 8 |" in item.message
    assert "not a whole number" in item.message


def test_a_line_naming_both_teams_by_letter_is_read_per_team_even_inside_a_team_section() -> None:
    """"Consistency: A 8, B 6" under a "Scores" heading that follows Team B's section gives each team its own
    score, not both to Team B."""
    text = "## Team A\nA steady case.\n\n## Team B\nA sharp reply.\n\n## Scores\n" + "".join(
        f"{lab}: A {a}, B {b}\n" for lab, a, b in zip(LABELS, A, B, strict=True))
    j = parse_judgment(text)
    assert as_lists(j) == (A, B) and not j.needs_review, j.review_reasons
