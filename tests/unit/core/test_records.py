from __future__ import annotations

import pytest
from pydantic import ValidationError

from ebtui.core.records import (
    CRITERIA,
    Dilemma,
    Judgment,
    Override,
    Phase,
    PhaseStatus,
    PhaseType,
    Round,
    RoundStatus,
    Scores,
    Tournament,
)
from ebtui.providers.base import Usage


def _round() -> Round:
    judgment = Judgment(
        team_a_scores=Scores(principle_articulation=8, consistency=None, stakeholder_recognition=7),
        team_b_scores=Scores(**{c: 6 for c in CRITERIA}),
        team_a_justification="clear",
        team_b_justification="charitable",
        overall_analysis="good",
        raw_response="{...}",
        needs_review=True,
        review_reasons=["team A consistency missing"],
    )
    return Round(
        dilemma_id="gradient_entity",
        team_a_model="a",
        team_b_model="b",
        judge_model="j",
        phases=[
            Phase(
                phase_type=PhaseType.PRESENTATION,
                model_id="a",
                prompt="p",
                system_prompt="s",
                response="r",
                status=PhaseStatus.COMPLETE,
                usage=Usage(input_tokens=10, output_tokens=20, cached_tokens=5, cost_usd=0.01),
                latency=1.5,
            )
        ],
        judgment=judgment,
        status=RoundStatus.INCOMPLETE,
        tournament_id="t-1",
    )


def test_round_json_round_trip() -> None:
    r = _round()
    again = Round.model_validate_json(r.model_dump_json())
    assert again == r
    assert again.phases[0].usage.cached_tokens == 5
    assert again.judgment is not None and again.judgment.team_a_scores.consistency is None
    assert again.schema_version == 1


def test_every_record_has_schema_version() -> None:
    for rec in (Dilemma(id="x", title="X"), Scores(), Judgment(), _round(), Tournament()):
        assert rec.model_dump()["schema_version"] == 1


def test_dilemma_round_trip_keeps_metadata() -> None:
    d = Dilemma(id="x", title="X", questions=["q1"], metadata={"structure": "Asymmetric"})
    assert Dilemma.model_validate_json(d.model_dump_json()) == d


@pytest.mark.parametrize("bad", [0, 11, 15, -1])
def test_scores_reject_out_of_range(bad: int) -> None:
    with pytest.raises(ValidationError):
        Scores(consistency=bad)


def test_missing_is_not_zero() -> None:
    s = Scores(principle_articulation=8)
    assert s.consistency is None
    assert "consistency" in s.missing()
    assert s.total() is None
    assert s.mean() == 8


def test_overrides_apply_and_clear() -> None:
    j = _round().judgment
    assert j is not None
    j.overrides.append(Override(team="a", criterion="consistency", parsed_value=None, value=6, note="read it"))
    assert j.effective_scores("a").consistency == 6
    assert j.team_a_scores.consistency is None  # parsed value kept
    j.overrides.append(Override(team="a", criterion="consistency", parsed_value=None, value=None, note="undo"))
    assert j.effective_scores("a").consistency is None
    assert len(j.overrides) == 2  # history kept


def test_override_validates() -> None:
    with pytest.raises(ValidationError):
        Override(team="a", criterion="consistency", parsed_value=None, value=11)
    with pytest.raises(ValidationError):
        Override(team="a", criterion="charisma", parsed_value=None, value=5)


def test_usage_adds_and_round_total_skips_reused() -> None:
    r = _round()
    p = r.phases[0].model_copy(update={"reused_from": "r-other", "phase_type": PhaseType.RESPONSE})
    r.phases.append(p)
    assert r.total_usage().input_tokens == 10
    assert r.total_usage(include_reused=True).input_tokens == 20
