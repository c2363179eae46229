"""Example-based tests of the judgment parser: one case per format judges really use."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ebtui.core.judgment import (
    JUDGMENT_FORMAT_INSTRUCTIONS,
    JUDGMENT_SCHEMA,
    SCORE_PLACEHOLDER,
    parse_judgment,
)
from ebtui.core.records import CRITERIA, CRITERION_LABELS
from ebtui.providers.scripted import ScriptedClient
from tests.support.paths import DATA, SHARED_FIXTURES

JUDGMENTS = DATA / "judgments"

A7 = [8, 7, 9, 6, 7, 8, 7]
B7 = [6, 5, 8, 7, 9, 6, 8]
NONE7: list[int | None] = [None] * 7


def scores(values: list[int | None]) -> dict[str, int | None]:
    return dict(zip(CRITERIA, values, strict=True))


def schema_json(a: list[int] = A7, b: list[int] = B7, **dump: object) -> str:
    return json.dumps(
        {
            "team_a": {"scores": scores(a), "justification": "A stated a clear principle."},
            "team_b": {"scores": scores(b), "justification": "B found overlooked stakeholders."},
            "overall_analysis": "A thoughtful exchange.",
        },
        **dump,  # type: ignore[arg-type]
    )


def lines_block(values: list[int], labels: list[str] | None = None, fmt: str = "{label}: {v}/10") -> str:
    labels = labels or [CRITERION_LABELS[c] for c in CRITERIA]
    return "\n".join(fmt.format(label=lab, v=v) for lab, v in zip(labels, values, strict=True))


@dataclass
class Case:
    id: str
    text: str
    a: list[int | None]
    b: list[int | None]
    method: str
    review: bool
    reasons: list[str] = field(default_factory=list)  # substrings that must appear among the reasons
    ids: tuple[str | None, str | None] = (None, None)


TABLE_HEADER = "| Criterion | Team A | Team B |\n|---|---|---|\n"
TABLE_ROWS = "".join(f"| {CRITERION_LABELS[c]} | {a} | {b} |\n" for c, a, b in zip(CRITERIA, A7, B7, strict=True))

CASES: list[Case] = [
    # ---------------------------------------------------------------- JSON
    Case("schema-json", schema_json(), A7, B7, "json", False),
    Case("schema-json-indented", schema_json(indent=2), A7, B7, "json", False),
    Case("fenced-json", "```json\n" + schema_json(indent=2) + "\n```", A7, B7, "json", False),
    Case(
        "schema-json-alphabetical-order",
        json.dumps(json.loads(schema_json()), sort_keys=True), A7, B7, "json", False,
    ),
    Case("json-with-prose", "Here is my judgment:\n\n" + schema_json() + "\n\nI hope this helps.", A7, B7, "json", False),
    Case(
        "trailing-commas",
        schema_json(indent=2).replace('"constructive_engagement": 7', '"constructive_engagement": 7,')
        .replace('"A thoughtful exchange."', '"A thoughtful exchange.",'),
        A7, B7, "json_repaired", False,
    ),
    Case(
        "repeated-and-missing-commas",
        schema_json(indent=2).replace('"consistency": 7,', '"consistency": 7,,').replace('"consistency": 5,', '"consistency": 5'),
        A7, B7, "json_repaired", False,
    ),
    Case(
        "single-quotes",
        "{'team_a': {'scores': " + repr(scores(A7)) + ", 'justification': 'Team A's principle was clear'}, "
        "'team_b': {'scores': " + repr(scores(B7)) + ", 'justification': 'ok'}, 'overall_analysis': 'fine'}",
        A7, B7, "json_repaired", False,
    ),
    Case(
        "python-literals-comments-bare-keys",
        "{team_a: {scores: " + json.dumps(scores(A7)) + ", justification: None}, // team A\n"
        "team_b: {scores: " + json.dumps(scores(B7)) + ", justification: 'x'}, overall_analysis: 'y'}",
        A7, B7, "json_repaired", False,
    ),
    Case(
        "raw-newline-in-string",
        schema_json().replace("A stated a clear principle.", "A stated\na clear principle."),
        A7, B7, "json_repaired", False,
    ),
    Case(
        "truncated-in-team-b",
        schema_json(indent=2)[: schema_json(indent=2).index('"uncertainty_integration"', schema_json(indent=2).index("team_b"))],
        A7, B7[:3] + [None] * 4, "json_repaired", True,
        ["cut off", "team B: uncertainty_integration missing"],
    ),
    Case(
        "truncated-on-a-number",  # "1" might have been "10": dropped, not guessed
        '{"team_a": {"scores": {"principle_articulation": 8, "consistency": 1',
        [8] + [None] * 6, NONE7, "json_repaired", True, ["cut off", "team A: consistency missing"],
    ),
    Case(
        "flat-team-keys",
        json.dumps({"team_a_scores": scores(A7), "team_b_scores": scores(B7),
                    "team_a_justification": "ja", "team_b_justification": "jb", "overall_analysis": "o"}),
        A7, B7, "json", False,
    ),
    Case(
        "team-label-keys-and-spelled-criteria",
        json.dumps({"Team A": {CRITERION_LABELS[c]: v for c, v in zip(CRITERIA, A7, strict=True)},
                    "Team B": {CRITERION_LABELS[c].title(): v for c, v in zip(CRITERIA, B7, strict=True)}}),
        A7, B7, "json", False,
    ),
    Case(
        "team-b-first-bare-letters",
        json.dumps({"B": {"scores": scores(B7)}, "A": {"scores": scores(A7)}}),
        A7, B7, "json", False,
    ),
    Case(
        "criterion-major",
        json.dumps({c: {"team_a": a, "team_b": b} for c, a, b in zip(CRITERIA, A7, B7, strict=True)}),
        A7, B7, "json", False,
    ),
    Case(
        "per-criterion-objects",
        json.dumps({"team_a": {c: {"score": v, "justification": "why"} for c, v in zip(CRITERIA, A7, strict=True)},
                    "team_b": {c: {"score": v, "reasoning": "why"} for c, v in zip(CRITERIA, B7, strict=True)}}),
        A7, B7, "json", False,
    ),
    Case(
        "list-of-teams",
        json.dumps({"teams": [{"team": "Team B", "scores": scores(B7)}, {"team": "Team A", "scores": scores(A7)}]}),
        A7, B7, "json", False,
    ),
    Case(
        "list-of-criteria",
        json.dumps({"scores": [{"criterion": CRITERION_LABELS[c], "team_a": a, "team_b": b}
                               for c, a, b in zip(CRITERIA, A7, B7, strict=True)]}),
        A7, B7, "json", False,
    ),
    Case(
        "model-id-keys",
        json.dumps({"gpt-4o-mini": {"scores": scores(B7)}, "gpt-4o": {"scores": scores(A7)}}),
        A7, B7, "json", False, ids=("gpt-4o", "gpt-4o-mini"),
    ),
    Case(
        "role-keys",
        json.dumps({"presenting_team": scores(A7), "responding_team": scores(B7)}),
        A7, B7, "json", False,
    ),
    Case(
        "string-scores",
        json.dumps({"team_a": {"scores": {c: f"{v}/10" for c, v in zip(CRITERIA, A7, strict=True)}},
                    "team_b": {"scores": {c: f"{v} out of 10" for c, v in zip(CRITERIA, B7, strict=True)}}}),
        A7, B7, "json", False,
    ),
    Case(
        "json-bad-values",
        schema_json().replace('"principle_articulation": 8', '"principle_articulation": 7.5')
        .replace('"consistency": 7', '"consistency": 0').replace('"stakeholder_recognition": 9', '"stakeholder_recognition": 15')
        .replace('"uncertainty_integration": 6', '"uncertainty_integration": null'),
        [None, None, None, None, 7, 8, 7], B7, "json", True,
        ["team A: principle_articulation 7.5 is not a whole number", "team A: consistency 0 is outside 1-10",
         "team A: stakeholder_recognition 15 is outside 1-10", "team A: uncertainty_integration given as null"],
    ),
    Case(
        "two-json-objects-last-wins",
        "Draft:\n" + schema_json() + "\nOn reflection I was too generous to Team B:\n" + schema_json(b=[5] * 7),
        A7, [5] * 7, "json", True, ["corrected to 5"],
    ),
    Case(
        "json-beats-text",
        "Team A: consistency 3/10 (draft)\n\n" + schema_json(),
        A7, B7, "json", True, ["3/10 corrected to 7"],
    ),
    # ---------------------------------------------------------------- tables
    Case("table-column-per-team", TABLE_HEADER + TABLE_ROWS + "| **Total** | 52 | 49 |\n", A7, B7, "table", False),
    Case(
        "table-team-b-column-first-bold-and-out-of-ten",
        "| Criterion | Team B (responding) | Team A (presenting) |\n|:--|:-:|:-:|\n"
        + "".join(f"| {CRITERION_LABELS[c]} | **{b}** | {a}/10 |\n" for c, a, b in zip(CRITERIA, A7, B7, strict=True)),
        A7, B7, "table", False,
    ),
    Case(
        "table-bare-letters-abbreviated-criteria",
        "| | A | B |\n|---|---|---|\n"
        + "".join(f"| {n} | {a} | {b} |\n" for n, a, b in zip(
            ["Principle", "Consistency", "Stakeholders", "Uncertainty", "Frameworks", "Honesty", "Engagement"],
            A7, B7, strict=True)),
        A7, B7, "table", False,
    ),
    Case(
        "table-per-team-under-headings",
        "## Team B\n\n| Criterion | Score | Justification |\n|---|---|---|\n"
        + "".join(f"| {CRITERION_LABELS[c]} | {v} | because of point {'abcdefg'[i]} |\n" for i, (c, v) in enumerate(zip(CRITERIA, B7, strict=True)))
        + "\n## Team A\n\n| Criterion | Score | Justification |\n|---|---|---|\n"
        + "".join(f"| {CRITERION_LABELS[c]} | {v} | since part {'abcdefg'[i]} held |\n" for i, (c, v) in enumerate(zip(CRITERIA, A7, strict=True))),
        A7, B7, "table", False,
    ),
    Case(
        "table-column-per-criterion",
        "| Team | " + " | ".join(CRITERION_LABELS[c] for c in CRITERIA) + " |\n|" + "---|" * 8 + "\n"
        + "| Team A | " + " | ".join(map(str, A7)) + " |\n| Team B | " + " | ".join(map(str, B7)) + " |\n",
        A7, B7, "table", False,
    ),
    Case(
        "table-model-id-columns",
        "| Criterion | claude-x | gpt-4o |\n|---|---|---|\n"
        + "".join(f"| {CRITERION_LABELS[c]} | {b} | {a} |\n" for c, a, b in zip(CRITERIA, A7, B7, strict=True)),
        A7, B7, "table", False, ids=("gpt-4o", "claude-x"),
    ),
    Case(
        "table-bad-cells",
        TABLE_HEADER + TABLE_ROWS.replace("articulation | 8 | 6 |", "articulation | 7.5 | N/A |")
        .replace("Consistency | 7 | 5 |", "Consistency | 11 | 0 |"),
        [None, None] + A7[2:], [None, None] + B7[2:], "table", True,
        ["team A: principle_articulation 7.5 is not a whole number", "team A: consistency 11 is outside 1-10",
         "team B: principle_articulation missing", "team B: consistency 0 is outside 1-10"],
    ),
    # ---------------------------------------------------------------- lines
    Case(
        "lines-under-team-headings-b-first",
        "## Team B\n" + lines_block(B7) + "\n\n## Team A\n" + lines_block(A7),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-dash-bold-out-of-abbreviated",
        "**Team A**\n" + lines_block(A7, ["Principle", "Consistency", "Stakeholders", "Uncertainty", "Frameworks",
                                          "Honesty", "Engagement"], "- {label} - {v}")
        + "\n\n**Team B**\n" + lines_block(B7, ["Principle Articulation", "consistency", "Stakeholder Recognition",
                                                "Uncertainty integration", "framework_awareness", "Intellectual Honesty",
                                                "Constructive engagement"], "* **{label}:** **{v}** out of 10"),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-role-headings",
        "### Responding team\n" + lines_block(B7) + "\n### Presenting team\n" + lines_block(A7),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-presenter-respondent",
        "Presenter:\n" + lines_block(A7, fmt="{label} = {v}") + "\nRespondent:\n" + lines_block(B7, fmt="{label} = {v}"),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-model-id-headings",
        "## claude-x (responding)\n" + lines_block(B7) + "\n## gpt-4o\n" + lines_block(A7),
        A7, B7, "lines", False, ids=("gpt-4o", "claude-x"),
    ),
    Case(
        "lines-numbered",
        "Team A:\n" + "\n".join(f"{i}. {CRITERION_LABELS[c]}: {v}" for i, (c, v) in enumerate(zip(CRITERIA, A7, strict=True), 1))
        + "\nTeam B:\n" + "\n".join(f"{i}) {CRITERION_LABELS[c]} — {v}" for i, (c, v) in enumerate(zip(CRITERIA, B7, strict=True), 1)),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-one-per-team",
        "Team A: " + ", ".join(f"{CRITERION_LABELS[c]} {v}" for c, v in zip(CRITERIA, A7, strict=True))
        + "\nTeam B: " + ", ".join(f"{CRITERION_LABELS[c]} {v}" for c, v in zip(CRITERIA, B7, strict=True)),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-pairs-per-criterion",
        "\n".join(f"- {CRITERION_LABELS[c]}: Team A {a}, Team B {b}" for c, a, b in zip(CRITERIA, A7, B7, strict=True)),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-criterion-headings",
        "\n".join(f"### {CRITERION_LABELS[c]}\nTeam B: {b}/10\nTeam A: {a}/10\nBoth were fine.\n"
                  for c, a, b in zip(CRITERIA, A7, B7, strict=True)),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-criterion-headings-with-explanations",
        "\n".join(f"### {i}. {CRITERION_LABELS[c]}\n- Team A: {a}/10 – a clear principle, few stakeholders\n"
                  f"- Team B: **{b}** – honest engagement\n" for i, (c, a, b) in enumerate(zip(CRITERIA, A7, B7, strict=True), 1)),
        A7, B7, "lines", False,
    ),
    Case(
        "lines-score-under-criterion-heading-under-team-heading",
        "# Team A\n" + "".join(f"## {CRITERION_LABELS[c]}\nScore: {v}\nGood work.\n" for c, v in zip(CRITERIA, A7, strict=True))
        + "# Team B\n" + "".join(f"## {CRITERION_LABELS[c]}\n**{v}/10**\n" for c, v in zip(CRITERIA, B7, strict=True)),
        A7, B7, "lines", False,
    ),
    Case(
        "self-correction-same-line",
        "Team A\n" + lines_block(A7).replace("Consistency: 7/10", "Consistency: 7 … actually, Consistency: 6")
        + "\nTeam B\n" + lines_block(B7),
        [8, 6, 9, 6, 7, 8, 7], B7, "lines", True, ["team A: consistency given more than once (7, then 6)"],
    ),
    Case(
        "self-correction-later-line",
        "## Team A\n" + lines_block(A7) + "\n## Team B\n" + lines_block(B7)
        + "\n\nCorrection — Team A:\nConsistency: 5/10\n",
        [8, 5, 9, 6, 7, 8, 7], B7, "lines", True, ["7/10 corrected to 5"],
    ),
    Case(
        "self-correction-actually",
        "## Team A\n" + lines_block(A7).replace("Intellectual honesty: 8/10", "Intellectual honesty: 8, actually make that 9")
        + "\n## Team B\n" + lines_block(B7).replace("Constructive engagement: 8/10", "Constructive engagement: ~~9~~ 8"),
        [8, 7, 9, 6, 7, 9, 7], B7, "lines", True,
    ),
    Case(
        "lines-bad-values",
        "## Team A\n" + lines_block([7, 8, 9, 6, 7, 8, 7]).replace("Principle articulation: 7/10", "Principle articulation: 7.5/10")
        .replace("Consistency: 8/10", "Consistency: 7-8").replace("Stakeholder recognition: 9/10", "Stakeholder recognition: 80/100")
        + "\n## Team B\n" + lines_block(B7).replace("Intellectual honesty: 6/10", "Intellectual honesty: 15"),
        [None, None, None, 6, 7, 8, 7], [6, 5, 8, 7, 9, None, 8], "lines", True,
        ["7.5 is not a whole number", "7-8 is a range", "80/100 is not on the 1-10 scale",
         "team B: intellectual_honesty 15 is outside 1-10"],
    ),
    Case(
        "numbers-that-are-not-scores",
        "I assessed the 7 criteria for both teams. Team 2 was the responder.\n"
        "## Team A\nStakeholders: 3 stakeholders were named.\nConsistency: 8/10\n",
        [None, 8, None, None, None, None, None], NONE7, "lines", True,
        ["team A: stakeholder_recognition missing", "team B: all seven scores missing"],
    ),
    Case(
        "partial-lines",
        "## Team A\nPrinciple articulation: 9\nHonesty: 8\n",
        [9, None, None, None, None, 8, None], NONE7, "lines", True, ["team A: consistency missing"],
    ),
    Case(
        "scores-without-a-team",
        lines_block(A7),
        NONE7, NONE7, "none", True, ["7 score(s) found for no team"],
    ),
    Case(
        "same-id-twice-labels-still-work",
        "## Team A (scripted)\n" + lines_block(A7) + "\n## Team B (scripted)\n" + lines_block(B7),
        A7, B7, "lines", False, ids=("scripted", "scripted"),
    ),
    # ---------------------------------------------------------------- no scores
    Case(
        "prose-only",
        "Both teams engaged thoughtfully. Team A articulated a clear principle; Team B raised stakeholders "
        "Team A had missed. Overall a strong exchange with 2 excellent moments.",
        NONE7, NONE7, "none", True, ["no scores found", "team A: all seven scores missing"],
    ),
    Case("empty", "", NONE7, NONE7, "none", True, ["empty reply"]),
    Case("whitespace", " \n\t \n", NONE7, NONE7, "none", True, ["empty reply"]),
    Case("echoed-format-instructions", JUDGMENT_FORMAT_INSTRUCTIONS, NONE7, NONE7, "none", True, ["no scores found"]),
    Case("garbage-json", "{{{ [[[ }}} ]]] {\"team_a\": {\"scores\": [}", NONE7, NONE7, "none", True),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_formats(case: Case) -> None:
    j = parse_judgment(case.text, team_a_id=case.ids[0], team_b_id=case.ids[1])
    assert j.team_a_scores.as_dict() == scores(case.a)
    assert j.team_b_scores.as_dict() == scores(case.b)
    assert j.parse_method == case.method
    assert j.needs_review is case.review, j.review_reasons
    assert bool(j.review_reasons) is case.review
    for want in case.reasons:
        # "team A: consistency ..." names a checklist item; "team A: all seven ..." all seven of a team's
        m = re.match(r"team ([ab]): (all seven|\w+)", want, re.IGNORECASE)
        if m and m.group(2) == "all seven":
            team = m.group(1).lower()
            assert {i.criterion for i in j.review_items if i.team == team} >= set(CRITERIA), j.review_items
        elif m and m.group(2) in CRITERIA:
            team = m.group(1).lower()
            assert any(i.team == team and i.criterion == m.group(2) for i in j.review_items), (want, j.review_items)
        else:
            assert any(want in r for r in j.review_reasons), (want, j.review_reasons)
    assert j.raw_response == case.text


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


# ------------------------------------------------------------------------------ justifications and analysis


def test_schema_json_texts_are_extracted() -> None:
    j = parse_judgment(schema_json())
    assert j.team_a_justification == "A stated a clear principle."
    assert j.team_b_justification == "B found overlooked stakeholders."
    assert j.overall_analysis == "A thoughtful exchange."


def test_flat_json_texts_are_extracted() -> None:
    text = json.dumps({"team_a_scores": scores(A7), "team_b_scores": scores(B7), "team_a_justification": "ja",
                       "team_b_justification": "jb", "overall_analysis": "the whole"})
    j = parse_judgment(text)
    assert (j.team_a_justification, j.team_b_justification, j.overall_analysis) == ("ja", "jb", "the whole")


def test_text_justifications_and_overall_analysis() -> None:
    text = (
        "## Team B (Responding team)\n" + lines_block(B7) + "\nJustification: B engaged charitably.\n\n"
        "## Team A (Presenting team)\n" + lines_block(A7) + "\nJustification: A was explicit about its principle.\n\n"
        "## Overall analysis\nA careful exchange; both updated.\nNeither team ignored the animals.\n"
    )
    j = parse_judgment(text)
    assert j.team_a_justification == "A was explicit about its principle."
    assert j.team_b_justification == "B engaged charitably."
    assert j.overall_analysis == "A careful exchange; both updated.\nNeither team ignored the animals."


def test_per_team_table_justification_column() -> None:
    text = "### Team A\n| Criterion | Score | Justification |\n|---|---|---|\n| Consistency | 7 | held up |\n"
    j = parse_judgment(text)
    assert j.team_a_scores.consistency == 7
    assert j.team_a_justification == "Consistency: held up"


def test_prose_judge_keeps_no_invented_scores_and_the_raw_reply() -> None:
    text = "Team A was better. I would give Team A the edge on consistency and Team B on engagement."
    j = parse_judgment(text)
    assert j.team_a_scores.missing() == list(CRITERIA)
    assert j.team_b_scores.missing() == list(CRITERIA)
    assert j.needs_review
    assert j.raw_response == text


# ------------------------------------------------------------------------------ schema and instructions


def _walk_schema(node: dict, path: str = "$") -> list[str]:
    problems = []
    allowed = {"type", "properties", "required", "additionalProperties", "description", "minimum", "maximum"}
    extra = set(node) - allowed
    if extra:
        problems.append(f"{path}: unsupported keywords {sorted(extra)}")
    if node.get("type") == "object":
        props = node.get("properties", {})
        if node.get("required") != list(props):
            problems.append(f"{path}: every property must be required, in order")
        if node.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
        for k, v in props.items():
            problems += _walk_schema(v, f"{path}.{k}")
    elif node.get("type") == "integer":
        if (node.get("minimum"), node.get("maximum")) != (1, 10):
            problems.append(f"{path}: scores are 1-10")
    elif node.get("type") != "string":
        problems.append(f"{path}: unexpected type {node.get('type')}")
    return problems


def test_schema_is_the_simple_strict_subset() -> None:
    assert _walk_schema(JUDGMENT_SCHEMA) == []
    assert list(JUDGMENT_SCHEMA["properties"]) == ["team_a", "team_b", "overall_analysis"]
    for team in ("team_a", "team_b"):
        t = JUDGMENT_SCHEMA["properties"][team]["properties"]
        assert list(t) == ["scores", "justification"]
        assert list(t["scores"]["properties"]) == list(CRITERIA)


def test_schema_is_already_openai_strict() -> None:
    from openai.lib._pydantic import _ensure_strict_json_schema

    schema = copy.deepcopy(JUDGMENT_SCHEMA)
    assert _ensure_strict_json_schema(schema, path=(), root=schema) == JUDGMENT_SCHEMA


def test_schema_is_accepted_by_google_genai() -> None:
    from google.genai import _transformers, types

    converted = _transformers.t_schema(None, JUDGMENT_SCHEMA)  # what response_schema=dict goes through
    assert isinstance(converted, types.Schema)
    score = converted.properties["team_b"].properties["scores"].properties["framework_awareness"]
    assert (score.minimum, score.maximum) == (1, 10)
    assert converted.required == ["team_a", "team_b", "overall_analysis"]
    config = types.GenerateContentConfig(response_mime_type="application/json", response_json_schema=JUDGMENT_SCHEMA)
    assert config.response_json_schema == JUDGMENT_SCHEMA


def test_schema_is_accepted_by_anthropic_transform() -> None:
    from anthropic.lib._parse._transform import transform_schema

    out = transform_schema(JUDGMENT_SCHEMA)
    assert out["required"] == ["team_a", "team_b", "overall_analysis"]
    assert out["properties"]["team_a"]["properties"]["scores"]["required"] == list(CRITERIA)


def test_schema_converts_to_a_llama_cpp_grammar() -> None:
    grammar_mod = pytest.importorskip("llama_cpp.llama_grammar", reason="llama-cpp-python is the [local] extra")
    gbnf = grammar_mod.json_schema_to_gbnf(json.dumps(JUDGMENT_SCHEMA))
    for c in CRITERIA:
        assert c in gbnf


def test_format_instructions_agree_with_the_schema() -> None:
    for c in CRITERIA:
        assert f'"{c}"' in JUDGMENT_FORMAT_INSTRUCTIONS
        assert CRITERION_LABELS[c] in JUDGMENT_FORMAT_INSTRUCTIONS
    for key in ("team_a", "team_b", "overall_analysis", "scores", "justification"):
        assert f'"{key}"' in JUDGMENT_FORMAT_INSTRUCTIONS
    # the example in the instructions, filled in, is clean schema JSON
    start = JUDGMENT_FORMAT_INSTRUCTIONS.index("{")
    end = JUDGMENT_FORMAT_INSTRUCTIONS.rindex("}") + 1
    example = JUDGMENT_FORMAT_INSTRUCTIONS[start:end]
    filled = example
    for i in range(14):
        filled = filled.replace(SCORE_PLACEHOLDER, str(i % 10 + 1), 1)
    obj = json.loads(filled)
    assert set(obj) == set(JUDGMENT_SCHEMA["properties"])
    j = parse_judgment(filled)
    assert (j.parse_method, j.needs_review) == ("json", False)
    assert j.team_a_scores.as_dict() == scores([1, 2, 3, 4, 5, 6, 7])
    assert j.team_b_scores.as_dict() == scores([8, 9, 10, 1, 2, 3, 4])


# ------------------------------------------------------------------------------ the scripted judge


def _scripted_reply(mode: str, seed: str = "") -> str:
    client = ScriptedClient("judge", judge_mode=mode, seed=seed)  # type: ignore[arg-type]
    if mode == "malformed":
        return client.reply_for("judge this round", "system", JUDGMENT_SCHEMA)
    return asyncio.run(client.generate("judge this round", "system", json_schema=JUDGMENT_SCHEMA)).text


@pytest.mark.parametrize("seed", ["", "one", "two", "three"])
def test_scripted_valid_judge_round_trips(seed: str) -> None:
    text = _scripted_reply("valid", seed)
    j = parse_judgment(text)
    expected = json.loads(text)
    assert (j.parse_method, j.needs_review, j.review_reasons) == ("json", False, [])
    assert j.team_a_scores.as_dict() == expected["team_a"]["scores"]
    assert j.team_b_scores.as_dict() == expected["team_b"]["scores"]
    assert j.overall_analysis == expected["overall_analysis"]


def test_scripted_malformed_judge_keeps_complete_scores() -> None:
    text = _scripted_reply("malformed")
    full = json.loads(_scripted_reply("valid"))
    j = parse_judgment(text)
    assert j.parse_method == "json_repaired" and j.needs_review
    for team, s in (("team_a", j.team_a_scores), ("team_b", j.team_b_scores)):
        for c, v in s.as_dict().items():
            assert v is None or v == full[team]["scores"][c]
    assert not j.team_a_scores.missing()  # the cut comes in team B
    assert j.team_b_scores.missing()


def test_scripted_prose_and_out_of_range_judges() -> None:
    prose = parse_judgment(_scripted_reply("prose"))
    assert prose.parse_method == "none" and prose.needs_review
    assert prose.team_a_scores.missing() == list(CRITERIA)
    oor = parse_judgment(_scripted_reply("out_of_range"))
    assert oor.needs_review and oor.team_a_scores.principle_articulation is None
    assert any("11 is outside 1-10" in r for r in oor.review_reasons)


# ------------------------------------------------------------------------------ sample replies on disk


def _samples() -> list[Path]:
    return sorted(JUDGMENTS.glob("*.txt"))


@pytest.mark.parametrize("path", _samples(), ids=lambda p: p.stem)
def test_sample_replies(path: Path) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    j = parse_judgment(path.read_text(), team_a_id=expected.get("team_a_id"), team_b_id=expected.get("team_b_id"))
    assert j.team_a_scores.as_dict() == expected["team_a"]
    assert j.team_b_scores.as_dict() == expected["team_b"]
    assert j.parse_method == expected["parse_method"]
    assert j.needs_review is expected["needs_review"]
    for key in ("team_a_justification", "team_b_justification", "overall_analysis"):
        if key in expected:
            assert expected[key] in getattr(j, key)
    if "review" in expected:  # the checklist: (team, criterion, kind), "-" for the whole team / judgment
        got = sorted([i.team or "-", i.criterion or "-", i.kind] for i in j.review_items)
        assert got == sorted(expected["review"]), j.review_reasons
    for src in j.provenance:  # every score's source text is in the reply, word for word
        assert src.text and src.text in path.read_text(), src


def test_real_ethics_bowl_judge_replies_read_like_their_runner() -> None:
    """Judge replies of a public Ethics Bowl run (frontier judges), read in place: the scores its own runner
    parsed without error, no review flag (they are clean)."""
    shared = SHARED_FIXTURES
    files = sorted((shared / "eb_rounds").glob("*.json"))
    if not files:
        pytest.skip(f"shared fixture absent (a fresh clone has no ../shared beside it): {shared / 'eb_rounds'}")
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        reply = next(p["response"] for p in data["phases"] if p["phase_type"] == "judgment")
        j = parse_judgment(reply, team_a_id=data["team_a_model"], team_b_id=data["team_b_model"])
        assert not data["judgment"].get("parse_errors"), f.name  # so the runner's numbers are the judge's
        assert j.team_a_scores.as_dict() == data["judgment"]["team_a_scores"], f.name
        assert j.team_b_scores.as_dict() == data["judgment"]["team_b_scores"], f.name
        assert not j.needs_review, (f.name, j.review_reasons)


def test_there_are_sample_replies() -> None:
    assert len(_samples()) >= 3


# ------------------------------------------------------------------------------ hostile input


GARBAGE = {
    "open-braces": "{" * 1_000_000,
    "open-brackets": "[" * 1_000_000,
    "nested-keys": '{"a": ' * 200_000,
    "unterminated-keys": '{"a' * 330_000,
    "pipes": "| " * 500_000,
    "criteria-colons": "Consistency: " * 80_000,
    "digits": "8" * 1_000_000,
    "bold": "**" * 500_000,
    "team-headings": "## Team A\n" * 100_000,
    "long-line-of-scores": "Consistency 8, " * 70_000,
    "many-objects": '{"x": 1} ' * 110_000,
    "quotes": "'\"" * 500_000,
    "numbers-and-slashes": "8/10/8/10 " * 100_000,
    "teams-and-criteria-on-one-line": "Team A Consistency 8 Team B " * 36_000,
    "distinct-values": "".join(f"Team A: Consistency: {i}, " for i in range(40_000)),
    "json-fragments": '{"team_a": {"scores": {"consistency": 8, ' * 25_000,
    "table-rows": "| Consistency | Team A | 8 |\n" * 35_000,
}


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_megabyte_of_garbage_completes(name: str) -> None:
    text = GARBAGE[name]
    j = parse_judgment(text)
    assert j.raw_response == text
    assert not any("internal parser error" in r for r in j.review_reasons)
    for team in ("a", "b"):
        for v in j.parsed_scores(team).as_dict().values():  # type: ignore[arg-type]
            assert v is None or 1 <= v <= 10


def test_labelled_pairs_separated_by_pipes_on_one_line_are_read_not_taken_for_a_table() -> None:
    labels = ["Principle Articulation", "Consistency", "Stakeholder Recognition", "Uncertainty Integration",
              "Framework Awareness", "Intellectual Honesty", "Constructive Engagement"]
    a, b = [7, 8, 6, 5, 7, 8, 6], [6, 5, 7, 6, 7, 6, 8]
    reply = "\n\n".join(f"**Team {t}:** " + " | ".join(f"{n}: {v}" for n, v in zip(labels, vals, strict=True))
                        for t, vals in (("A", a), ("B", b)))
    j = parse_judgment(reply, team_a_id="m-a", team_b_id="m-b")
    assert list(j.team_a_scores.as_dict().values()) == a
    assert list(j.team_b_scores.as_dict().values()) == b
    assert not j.needs_review
