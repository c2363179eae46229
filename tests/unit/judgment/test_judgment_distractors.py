"""The parser against numbers that are not scores.

Property: true scores are written in JSON, a markdown table or labelled lines, and surrounded by distractors
(percentages, counts, other scales, years, model names with digits, Max/Weight/Out-of columns, rubric anchors,
negated and questioned candidates, a third team's scores). Every score parsed is the true one or None (then
flagged) — never a distractor. And each syntax-only variant of a clean reply is read without a review flag.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import parse_judgment
from ebtui.core.records import CRITERIA, CRITERION_LABELS

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCORES = st.lists(st.integers(1, 10), min_size=7, max_size=7)

# distractor phrases: each holds numbers that are not a score ({n} 1-10, so it could pass for one)
PHRASES = [
    "they cited {n}0% of the relevant cases", "about {n}% of readers would agree", "{n} examples were offered",
    "{n} of 12 checks passed", "{n} out of 10 test cases went their way", "it rated {n}/5 on my rubric's sub-scale",
    "a {n}-{m} range would be too generous", "as argued in 2019", "unlike gpt-5.2 or claude-4.5 or grok-4",
    "on a 60/30 split", "they first ranked option {m}, then {n}", "not a {n}", "does this deserve a {n}? Not quite",
    "(1 = no principle stated, 10 = fully articulated)", "with {n} stakeholders named", "{n} times over",
]


def distractor(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 10))
    m = draw(st.integers(1, 10))
    # (English agrees in number: "1 time over", "3 times over")
    return draw(st.sampled_from(PHRASES)).format(n=n, m=m).replace("1 times", "1 time")


# what a judge may write where a score would stand, without giving one: the score is then missing
SLOT_PHRASES = [
    "{n}0% of the way there", "{n}% convincing", "{n} examples", "{n} of 12 checks", "{n} out of 10 test cases",
    "{n}/5", "{n}-{m}", "2019", "see gpt-5.2", "claude-4.5 did better", "grok-4", "60/30",
    "not a {n}", "a {n}? Hard to say", "{n} stakeholders", "1 = no principle stated", "between {m} and {n}",
]


@st.composite
def reply(draw: st.DrawFn) -> tuple[str, dict[str, list[int | None]], str]:
    scores: dict[str, list[int | None]] = {
        t: [None if draw(st.integers(0, 5)) == 0 else v for v in draw(SCORES)] for t in ("a", "b")
    }

    def slot(v: int | None, fmt: str = "{v}") -> str:
        if v is not None:
            return fmt.format(v=v)
        return draw(st.sampled_from(SLOT_PHRASES)).format(n=draw(st.integers(1, 10)), m=draw(st.integers(1, 10)))

    layout = draw(st.sampled_from(["json", "table", "lines"]))
    order = draw(st.permutations(["a", "b"]))
    d = lambda: distractor(draw)  # noqa: E731
    out: list[str] = [f"# Judgment\n\nI read the exchange twice; {d()}. {d()}.\n"]
    if draw(st.booleans()):
        out.append("Rubric reminder: 1 = no principle stated; 5 = adequate; 10 = exemplary.\n")
    if layout == "json":
        obj = {f"team_{t}": {"scores": {c: (v if v is not None else slot(v)) for c, v in zip(CRITERIA, scores[t],
                                                                                            strict=True)},
                             "max_score": 10, "weight": draw(st.integers(1, 5)),
                             "justification": f"{d()}; {d()}."} for t in order}
        obj["overall_analysis"] = f"{d()}. {d()}."
        out.append("```json\n" + json.dumps(obj, indent=2) + "\n```\n")
    elif layout == "table":
        extra = draw(st.sampled_from(["Max", "Out of", "Weight", "Rank"]))
        head = "| Criterion | " + " | ".join(f"Team {t.upper()}" for t in order) + f" | {extra} | Notes |"
        rows = [head, "|---|" + "---|" * (len(order) + 2)]
        for i, c in enumerate(CRITERIA):
            cells = [slot(scores[t][i]) for t in order]
            rows.append(f"| {i + 1}. {CRITERION_LABELS[c]} | " + " | ".join(cells)
                        + f" | {draw(st.integers(1, 10))} | {d()} |")
        rows.append("| Total | " + " | ".join(str(sum(v or 0 for v in scores[t])) for t in order) + " | 70 | |")
        out.append("\n".join(rows) + "\n")
    else:
        for t in order:
            out.append(f"## Team {t.upper()}\n")
            for i, c in enumerate(CRITERIA):
                style = draw(st.integers(0, 3))
                v = scores[t][i]
                line = [f"- **{CRITERION_LABELS[c]}**: {slot(v, '{v}/10')} — {d()}.",
                        f"{i + 1}. {CRITERION_LABELS[c]} - {slot(v)}. {d()}.",
                        f"{CRITERION_LABELS[c]}: {slot(v)} ({d()})",
                        f"**{CRITERION_LABELS[c]} ({slot(v, '{v}/10')}):** {d()}."][style]
                out.append(line)
            out.append(f"\nJustification: {d()}.\n")
    if draw(st.booleans()):  # a third team, with its own numbers, in a hypothetical
        third = "\n".join(f"{CRITERION_LABELS[c]}: {draw(st.integers(1, 10))}" for c in CRITERIA)
        out.append(f"\n## {draw(st.sampled_from(['Team C (a hypothetical)', 'The previous team']))}\n{third}\n")
    out.append(f"\n## Overall\n{d()}; {d()}.")
    return "\n".join(out), scores, layout


@SETTINGS
@given(reply())
def test_a_parsed_score_is_the_true_score_or_none_never_a_distractor(case) -> None:
    text, scores, layout = case
    j = parse_judgment(text)
    for team in ("a", "b"):
        got = j.parsed_scores(team).as_dict()  # type: ignore[arg-type]
        for i, crit in enumerate(CRITERIA):
            assert got[crit] in (None, scores[team][i]), (layout, team, crit, got[crit], scores[team][i], text)
            if got[crit] is None:
                assert j.needs_review and any(r.team == team and r.criterion == crit for r in j.review_items)


@SETTINGS
@given(reply())
def test_clean_layouts_with_distractors_are_read_in_full(case) -> None:
    """Distractors beside a clearly labelled score never cost the score itself."""
    text, scores, layout = case
    j = parse_judgment(text)
    assert j.team_a_scores.as_dict() == dict(zip(CRITERIA, scores["a"], strict=True)), (layout, text)
    assert j.team_b_scores.as_dict() == dict(zip(CRITERIA, scores["b"], strict=True)), (layout, text)
    assert j.needs_review is any(v is None for t in ("a", "b") for v in scores[t]), (j.review_reasons, text)


# ---- syntax-only variants are not flagged --------------------------------------------------------------

A = [8, 7, 6, 9, 5, 7, 8]
B = [6, 8, 7, 5, 9, 6, 7]


def _schema(a=A, b=B, fmt=lambda v: v) -> dict:
    return {"team_a": {"scores": {c: fmt(v) for c, v in zip(CRITERIA, a, strict=True)}, "justification": "Clear."},
            "team_b": {"scores": {c: fmt(v) for c, v in zip(CRITERIA, b, strict=True)}, "justification": "Fair."},
            "overall_analysis": "Close."}


def _lines(order=("a", "b"), fmt="{label}: {v}") -> str:
    out = []
    for t in order:
        out.append(f"## Team {t.upper()}")
        out += [fmt.format(label=CRITERION_LABELS[c], v=v, i=i + 1)
                for i, (c, v) in enumerate(zip(CRITERIA, A if t == "a" else B, strict=True))]
    return "\n".join(out)


SYNTAX_ONLY = {
    "plain": json.dumps(_schema()),
    "fenced": "```json\n" + json.dumps(_schema(), indent=2) + "\n```",
    "prose-around": "Here is my judgment.\n\n" + json.dumps(_schema(), indent=2) + "\n\nI hope this helps.",
    "trailing-commas": json.dumps(_schema(), indent=2).replace('"Close."', '"Close.",').replace("7\n    }", "7,\n    }"),
    "comments": json.dumps(_schema(), indent=2).replace('"team_a": {', '"team_a": { // the presenters'),
    "single-quotes": json.dumps(_schema()).replace('"', "'"),
    "numbers-as-strings": json.dumps(_schema(fmt=str)),
    "out-of-ten-strings": json.dumps(_schema(fmt=lambda v: f"{v}/10")),
    "team-b-first": json.dumps({"team_b": _schema()["team_b"], "team_a": _schema()["team_a"],
                                "overall_analysis": "Close."}),
    "table": "| Criterion | Team A | Team B |\n|---|---|---|\n" + "\n".join(
        f"| {CRITERION_LABELS[c]} | {a} | {b} |" for c, a, b in zip(CRITERIA, A, B, strict=True)),
    "table-team-b-first-with-max": "| Criterion | Team B | Team A | Max |\n|:--|:-:|:-:|--:|\n" + "\n".join(
        f"| {CRITERION_LABELS[c]} | {b} | **{a}** | 10 |" for c, a, b in zip(CRITERIA, A, B, strict=True)),
    "labelled-lines": _lines(),
    "labelled-lines-b-first": _lines(("b", "a")),
    "numbered-lines": _lines(fmt="{i}. {label} - {v}"),
    "bold-out-of-ten": _lines(fmt="- **{label}:** {v}/10"),
}


def test_each_syntax_only_variant_is_read_exactly_and_not_flagged() -> None:
    for name, text in SYNTAX_ONLY.items():
        j = parse_judgment(text)
        assert j.team_a_scores.as_dict() == dict(zip(CRITERIA, A, strict=True)), name
        assert j.team_b_scores.as_dict() == dict(zip(CRITERIA, B, strict=True)), name
        assert not j.needs_review, (name, j.review_reasons)
        assert {p.kind for p in j.provenance} <= {"json", "json_repaired", "table", "line"}, name
        assert all(p.text and p.text in text for p in j.provenance), name


def test_corrections_win_and_are_flagged_conflicts_are_missing() -> None:
    base = json.dumps(_schema(), indent=2)
    j = parse_judgment(base + "\n\nCorrection: Team A's consistency should be 5, not 7.")
    assert j.team_a_scores.consistency == 5 and j.needs_review
    src = j.source_of("a", "consistency")
    assert src and src.kind == "correction" and "should be 5" in src.text and "7" in src.note
    j = parse_judgment(base + "\n\nRevised after re-reading:\n" + json.dumps(_schema(b=[*B[:4], 8, *B[5:]])))
    assert j.team_b_scores.framework_awareness == 8 and j.needs_review
    assert [(r.team, r.criterion, r.kind) for r in j.review_items] == [("b", "framework_awareness", "correction")]
    j = parse_judgment(_lines() + "\n\n## Summary table\n| Criterion | Team A |\n|---|---|\n| Consistency | 4 |")
    assert j.team_a_scores.consistency is None  # 7 then 4, no correction language
    assert [(r.team, r.criterion, r.kind) for r in j.review_items] == [("a", "consistency", "conflict")]


def test_a_team_named_by_its_model_id_is_read_without_a_flag() -> None:
    # the ids the round passes are exact identifications of the two teams (issue #23), so nothing to check
    text = _lines().replace("## Team A", "## gpt-5.2").replace("## Team B", "## claude-4.5")
    j = parse_judgment(text, team_a_id="gpt-5.2", team_b_id="claude-4.5")
    assert j.team_a_scores.as_dict() == dict(zip(CRITERIA, A, strict=True))
    assert j.team_b_scores.as_dict() == dict(zip(CRITERIA, B, strict=True))
    assert j.review_items == []


def test_two_teams_with_one_model_id_are_not_told_apart_by_it() -> None:
    # a model debating itself: its id names both teams, so a heading with it attributes nothing
    text = _lines().replace("## Team A", "## gpt-5.2").replace("## Team B", "## gpt-5.2")
    j = parse_judgment(text, team_a_id="gpt-5.2", team_b_id="gpt-5.2")
    assert j.team_a_scores.missing() and j.team_b_scores.missing() and j.needs_review


def test_numbers_next_to_another_criterion_or_in_a_hypothetical_are_not_its_score() -> None:
    listed = "Team A: " + ", ".join(f"{v}/10 on {CRITERION_LABELS[c].lower()}" for c, v in zip(CRITERIA, A, strict=True))
    j = parse_judgment(listed)
    assert j.team_a_scores.as_dict() == dict(zip(CRITERIA, A, strict=True))  # each number is the next label's
    assert j.needs_review and {p.kind for p in j.provenance} == {"prose"}  # read, and looked at
    j = parse_judgment("## Team A\nPrinciple articulation: 8, which is better than the 6 for consistency they nearly got.")
    assert j.team_a_scores.principle_articulation == 8 and j.team_a_scores.consistency is None
    base = json.dumps(_schema())
    aside = "Team A changed its answer from 2 to 1 in the consistency test."  # their answer's numbers
    j = parse_judgment(base + "\n\n" + aside)
    assert j.team_a_scores.as_dict() == dict(zip(CRITERIA, A, strict=True)), aside
    assert not j.needs_review, (aside, j.review_reasons)
    # a change only thought of is no correction, but its value is a second one for the cell: a conflict
    for aside, crit in (("I'd raise Team A's intellectual honesty score to a 9 if they had conceded earlier.",
                         "intellectual_honesty"),
                        ("I would not lower Team A's consistency to 5, despite the wobble.", "consistency")):
        j = parse_judgment(base + "\n\n" + aside)
        assert j.team_a_scores.as_dict() == {c: None if c == crit else v for c, v in zip(CRITERIA, A, strict=True)}
        assert [(i.team, i.criterion, i.kind) for i in j.review_items] == [("a", crit, "conflict")], aside
