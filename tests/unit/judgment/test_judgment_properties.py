"""Property tests of the judgment parser: it never raises, never invents a score, and reads back exactly
what a well-behaved judge wrote."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebtui.core.judgment import JUDGMENT_SCHEMA, parse_judgment
from ebtui.core.records import CRITERIA, CRITERION_LABELS, Judgment
from ebtui.providers.scripted import ScriptedClient

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(text: str, j: Judgment) -> None:
    assert isinstance(j, Judgment)
    assert j.raw_response == text
    assert not any("internal parser error" in r for r in j.review_reasons), j.review_reasons
    assert j.parse_method in ("json", "json_repaired", "table", "lines", "none")
    for team in ("a", "b"):
        for value in j.parsed_scores(team).as_dict().values():  # type: ignore[arg-type]
            assert value is None or (type(value) is int and 1 <= value <= 10)
            if value is not None:
                # a score is always read from the reply, never made up
                word = "one two three four five six seven eight nine ten".split()[value - 1]
                assert re.search(rf"(?<!\d){value}(?!\d)", text) or re.search(rf"(?<!\d)0+{value}(?!\d)", text) \
                    or re.search(rf"(?i)\b{word}\b", text)  # ("Consistency: eight", read and flagged)
        if j.parsed_scores(team).missing():  # type: ignore[arg-type]
            assert j.needs_review
    assert j.needs_review == bool(j.review_reasons) == bool(j.review_items)
    # every score read has its provenance: how it was read and the exact text, which the reply holds
    for src in j.provenance:
        if src.value is not None:
            assert src.text in text, src  # (empty only where the reply's own spelling could not be found)


# ------------------------------------------------------------------------------ arbitrary text


@FAST
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    check_invariants(text, parse_judgment(text))


@FAST
@given(st.text(), st.text(max_size=12), st.text(max_size=12))
def test_never_raises_with_arbitrary_ids(text: str, a: str, b: str) -> None:
    check_invariants(text, parse_judgment(text, team_a_id=a, team_b_id=b))


NAMES = [CRITERION_LABELS[c] for c in CRITERIA] + list(CRITERIA) + [
    "Principle", "Stakeholders", "Uncertainty", "Frameworks", "Honesty", "Engagement", "Constructive engagement",
]
TEAMS = ["Team A", "Team B", "team_a", "team_b", "A", "B", "Presenting team", "Responding team", "presenter",
         "respondent", "Team 2", "gpt-4o", "claude"]
PUNCT = [":", " - ", " — ", "/10", " out of 10", "**", "|", "||", "\n", "\n\n", "## ", "# ", "{", "}", "[", "]",
         ",", ", ", '"', "'", ": {", "}, ", "```json\n", "\n```", "~~", "actually, ", "Justification: ",
         "Overall analysis: ", "|---|---|\n", " ", "null", "true", "7 criteria", "3 stakeholders", "..."]
NUMBERS = st.one_of(
    st.integers(-3, 120).map(str),
    st.floats(0, 12, allow_nan=False).map(lambda f: f"{f:.1f}"),
    st.integers(1, 10).map(lambda n: f"{n}/10"),
    st.integers(1, 10).map(lambda n: f"**{n}**"),
    st.tuples(st.integers(1, 10), st.integers(1, 10)).map(lambda p: f"{p[0]}-{p[1]}"),
)
FRAGMENT = st.one_of(st.sampled_from(NAMES), st.sampled_from(TEAMS), st.sampled_from(PUNCT), NUMBERS,
                     st.text(max_size=6))


@FAST
@given(st.lists(FRAGMENT, max_size=80).map("".join))
def test_never_raises_on_judge_like_fragments(text: str) -> None:
    check_invariants(text, parse_judgment(text, team_a_id="gpt-4o", team_b_id="claude"))


JSON_KEYS = st.one_of(st.sampled_from(NAMES + TEAMS + ["scores", "score", "justification", "overall_analysis",
                                                       "team", "criterion", "teams"]), st.text(max_size=8))
JSON_LEAVES = st.one_of(st.integers(-5, 50), st.floats(allow_nan=False, allow_infinity=False), st.none(),
                        st.booleans(), st.text(max_size=10), NUMBERS)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(JSON_KEYS, inner, max_size=6)),
    max_leaves=40,
)


@FAST
@given(JSON_VALUES, st.integers(0, 3), st.data())
def test_never_raises_on_json_shapes_cut_anywhere(value: object, mutation: int, data: st.DataObject) -> None:
    text = json.dumps(value, indent=data.draw(st.sampled_from([None, 2])))
    if mutation == 1:
        text = text[: data.draw(st.integers(0, len(text)))]
    elif mutation == 2:
        text = text.replace('"', "'").replace("}", ",}")
    elif mutation == 3:
        text = "Here you go:\n```json\n" + text + "\n```\nThanks."
    check_invariants(text, parse_judgment(text))


# ------------------------------------------------------------------------------ well-behaved judges

SCORE_LISTS = st.lists(st.integers(1, 10), min_size=7, max_size=7)
PROSE = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


def instance(a: list[int], b: list[int], ja: str, jb: str, overall: str) -> dict:
    return {
        "team_a": {"scores": dict(zip(CRITERIA, a, strict=True)), "justification": ja},
        "team_b": {"scores": dict(zip(CRITERIA, b, strict=True)), "justification": jb},
        "overall_analysis": overall,
    }


@FAST
@given(SCORE_LISTS, SCORE_LISTS, PROSE, PROSE, PROSE, st.sampled_from([None, 0, 2, 4]), st.booleans())
def test_schema_instances_round_trip(a, b, ja, jb, overall, indent, ascii_only) -> None:
    value = instance(a, b, ja, jb, overall)
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    j = parse_judgment(text)
    assert (j.parse_method, j.needs_review, j.review_reasons) == ("json", False, [])
    assert j.team_a_scores.as_dict() == value["team_a"]["scores"]
    assert j.team_b_scores.as_dict() == value["team_b"]["scores"]
    assert (j.team_a_justification, j.team_b_justification, j.overall_analysis) == (ja.strip(), jb.strip(), overall.strip())


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=80))
def test_scripted_judge_instances_round_trip(seed: str, prompt: str) -> None:
    text = ScriptedClient("judge", seed=seed).reply_for(prompt, "system", JUDGMENT_SCHEMA)
    expected = json.loads(text)
    j = parse_judgment(text)
    assert (j.parse_method, j.needs_review) == ("json", False)
    assert j.team_a_scores.as_dict() == expected["team_a"]["scores"]
    assert j.team_b_scores.as_dict() == expected["team_b"]["scores"]


@FAST
@given(SCORE_LISTS, SCORE_LISTS, PROSE, st.data())
def test_a_cut_off_reply_keeps_only_true_scores(a, b, ja, data: st.DataObject) -> None:
    """Wherever max tokens cuts the reply, every score read is the one the judge wrote, or missing."""
    value = instance(a, b, ja, "x", "y")
    text = json.dumps(value, indent=data.draw(st.sampled_from([None, 2])))
    cut = text[: data.draw(st.integers(0, len(text)))]
    j = parse_judgment(cut)
    check_invariants(cut, j)
    for team, got in (("team_a", j.team_a_scores), ("team_b", j.team_b_scores)):
        for crit, v in got.as_dict().items():
            assert v is None or v == value[team]["scores"][crit]
    if cut != text:
        assert j.needs_review


def _render_lines(scores: dict[str, list[int]], order: list[str], style: int) -> str:
    out = []
    for team in order:
        out.append(["## Team {}", "**Team {}**", "Team {}:"][style % 3].format(team.upper()))
        for crit, v in zip(CRITERIA, scores[team], strict=True):
            label = CRITERION_LABELS[crit]
            out.append(["- {l}: {v}/10", "{l} - {v}", "* **{l}:** **{v}**", "{l}: {v} out of 10"][style % 4]
                       .format(l=label, v=v))
        out.append("Justification: reasons.")
    return "\n".join(out)


def _render_table(scores: dict[str, list[int]], order: list[str]) -> str:
    head = "| Criterion | " + " | ".join(f"Team {t.upper()}" for t in order) + " |\n|---|---|---|\n"
    rows = "".join(
        f"| {CRITERION_LABELS[c]} | " + " | ".join(str(scores[t][i]) for t in order) + " |\n"
        for i, c in enumerate(CRITERIA)
    )
    return head + rows


@FAST
@given(SCORE_LISTS, SCORE_LISTS, st.permutations(["a", "b"]), st.integers(0, 11), st.booleans())
def test_markdown_renderings_read_back_exactly(a, b, order, style, as_table) -> None:
    scores = {"a": a, "b": b}
    text = _render_table(scores, order) if as_table else _render_lines(scores, order, style)
    j = parse_judgment(text)
    check_invariants(text, j)
    assert j.team_a_scores.as_dict() == dict(zip(CRITERIA, a, strict=True))
    assert j.team_b_scores.as_dict() == dict(zip(CRITERIA, b, strict=True))
    assert j.parse_method == ("table" if as_table else "lines")
    assert not j.needs_review, j.review_reasons  # a clear table or labelled lines is no guess


@FAST
@given(SCORE_LISTS, SCORE_LISTS, st.integers(0, 13), st.sampled_from(["0", "11", "15", "7.5", "-2", "100"]))
def test_a_bad_value_is_missing_never_clamped(a, b, index, bad) -> None:
    value = instance(a, b, "x", "y", "z")
    team = "team_a" if index < 7 else "team_b"
    crit = CRITERIA[index % 7]
    value[team]["scores"][crit] = 987654
    text = json.dumps(value).replace("987654", bad)
    j = parse_judgment(text)
    got = (j.team_a_scores if team == "team_a" else j.team_b_scores).as_dict()
    assert got[crit] is None
    assert j.needs_review
    assert any(i.criterion == crit and bad in i.message for i in j.review_items), j.review_items
