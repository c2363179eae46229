"""What the tests build: realistic Rounds straight from the records (no round engine) and the two
dilemmas the app tests play."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ebtui.core.records import (
    CRITERIA,
    PHASE_ORDER,
    PHASE_SPEAKER,
    Dilemma,
    Judgment,
    Phase,
    PhaseStatus,
    Round,
    RoundStatus,
    Scores,
)
from ebtui.providers.base import Usage

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def make_round(
    i: int = 0,
    *,
    team_a: str = "alpha",
    team_b: str = "beta",
    judge: str = "gamma",
    dilemma: str = "gradient_entity",
    tournament: str | None = None,
    status: RoundStatus = RoundStatus.COMPLETE,
    judged: bool = True,
    missing: tuple[str, ...] = (),
    text_size: int = 3000,
    round_id: str | None = None,
) -> Round:
    """A five-phase round with a parsed judgment: team A scores 5+i%5, team B 6; `missing` criteria are None
    for team A (and the judgment then needs review)."""
    ts = T0 + timedelta(minutes=i)
    phases = []
    for n, pt in enumerate(PHASE_ORDER):
        speaker = PHASE_SPEAKER[pt]
        model = {"a": team_a, "b": team_b, "judge": judge}[speaker]
        phases.append(
            Phase(
                phase_type=pt,
                model_id=model,
                prompt=f"Prompt for {pt} of round {i}. " + "p" * text_size,
                system_prompt="You are taking part in an Ethics Bowl.",
                response=f"Answer of {model} in {pt}. " + "r" * text_size,
                timestamp=ts + timedelta(seconds=n),
                finished_at=ts + timedelta(seconds=n + 1),
                status=PhaseStatus.COMPLETE,
                usage=Usage(input_tokens=900, output_tokens=700),
                latency=1.0,
                attempts=1,
                finish_reason="stop",
            )
        )
    judgment = None
    if judged:
        a = {c: (None if c in missing else 5 + i % 5) for c in CRITERIA}
        judgment = Judgment(
            team_a_scores=Scores(**a),
            team_b_scores=Scores(**{c: 6 for c in CRITERIA}),
            team_a_justification="clear principle",
            team_b_justification="charitable",
            overall_analysis="a good exchange",
            raw_response="{...}",
            needs_review=bool(missing),
            review_reasons=[f"team A {c} missing" for c in missing],
            parse_method="json",
            judge_model=judge,
        )
    kwargs = {"id": round_id} if round_id else {}
    return Round(
        **kwargs,
        dilemma_id=dilemma,
        dilemma_title=dilemma.replace("_", " ").title(),
        team_a_model=team_a,
        team_b_model=team_b,
        judge_model=judge,
        phases=phases,
        judgment=judgment,
        timestamp=ts,
        finished_at=ts + timedelta(seconds=10),
        status=status,
        tournament_id=tournament,
    )


def make_dilemmas() -> list[Dilemma]:
    return [
        Dilemma(
            id="D1",
            title="The Lighthouse Keeper's Log",
            category="Duties to strangers",
            core_scenario="A keeper must decide whether to falsify a log to protect a sailor who broke a rule.",
            complications=["The sailor saved a child.", "The rule protects the whole harbour."],
            questions=["Is honesty owed to an institution?", "Does motive change the duty?"],
            consistency_case="A nurse is asked to back-date a chart to protect a colleague.",
        ),
        Dilemma(
            id="D2",
            title="Seed Vault Access",
            category="Future generations",
            core_scenario="A seed vault may open early to feed a famine at the cost of future resilience.",
            questions=["Who may speak for those not yet born?"],
            consistency_case="A pension fund is raided to pay for an emergency today.",
        ),
    ]
