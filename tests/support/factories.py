"""What the tests build: Rounds straight from the records (no round engine), the dilemmas the tests play, round
specs with scripted clients, and stores in a temporary folder. The one place a test gets a Round from."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from ebtui.core.records import (
    CRITERIA,
    PHASE_ORDER,
    PHASE_SPEAKER,
    Dilemma,
    Judgment,
    Phase,
    PhaseStatus,
    PhaseType,
    Round,
    RoundStatus,
    Scores,
    Tournament,
    TournamentStatus,
)
from ebtui.core.round import RoundSpec
from ebtui.core.store import ResultsStore
from ebtui.providers.base import ModelClient, Usage
from ebtui.providers.scripted import ScriptedClient

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
#: the app tests' clock: every fixed round starts here
FIXED_TIME = datetime(2026, 11, 5, 14, 30, tzinfo=UTC)


# -- stores -------------------------------------------------------------------------------------------------
def open_store(root: Path) -> ResultsStore:
    """A real store at `root`, without fsync (the tests' disk need not survive a power cut)."""
    return ResultsStore(root, durable=False)


# -- dilemmas -----------------------------------------------------------------------------------------------
def make_dilemmas() -> list[Dilemma]:
    """The two dilemmas the app tests play."""
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


def memory_trust() -> Dilemma:
    """The dilemma the round-engine tests play (a fresh copy each call)."""
    return Dilemma(
        id="memory-trust",
        title="The Memory Trust",
        core_scenario="A clinic can restore a patient's erased memories, but only by copying them from a sibling.",
        complications=["The sibling consented years ago, as a minor."],
        questions=["Who owns a shared memory?"],
        asymmetric_features=["The sibling gains nothing from the procedure."],
        consistency_case="A library restores a burnt diary from the letters its author sent to a friend.",
    )


# -- round specs and scripted clients -----------------------------------------------------------------------
def round_spec(**kw: Any) -> RoundSpec:
    """The Memory Trust played by alpha (Team A), beta (Team B) and judge."""
    return RoundSpec(dilemma=memory_trust(), team_a="alpha", team_b="beta", judge="judge", **kw)


def scripted_clients(**kw: ModelClient) -> dict[str, ModelClient]:
    """Scripted alpha, beta and judge; keyword arguments replace (or add) clients by name."""
    out: dict[str, ModelClient] = {name: ScriptedClient(name) for name in ("alpha", "beta", "judge")}
    out.update(kw)
    return out


# -- rounds -------------------------------------------------------------------------------------------------
def seats(team_a: str, team_b: str, judge: str) -> dict[str, str]:
    return {"a": team_a, "b": team_b, "judge": judge}


def played_phases(models: dict[str, str], response: Callable[[PhaseType, str, int], str], start: datetime, *,
                  step: float, duration: float, usage: Callable[[int], Usage], latency: float,
                  **fields: Any) -> list[Phase]:
    """The five phases in order, each complete and spoken by its seat's model: the n-th starts `step * n`
    seconds after `start` and takes `duration` seconds; `response(phase, model, n)` is its text."""
    phases = []
    for n, pt in enumerate(PHASE_ORDER):
        model = models[PHASE_SPEAKER[pt]]
        began = start + timedelta(seconds=step * n)
        phases.append(Phase(phase_type=pt, model_id=model, response=response(pt, model, n), timestamp=began,
                            finished_at=began + timedelta(seconds=duration), status=PhaseStatus.COMPLETE,
                            usage=usage(n), latency=latency, attempts=1, finish_reason="stop", **fields))
    return phases


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
    phases = played_phases(
        seats(team_a, team_b, judge), lambda pt, model, _n: f"Answer of {model} in {pt}. " + "r" * text_size,
        ts, step=1, duration=1, usage=lambda _n: Usage(input_tokens=900, output_tokens=700), latency=1.0,
        system_prompt="You are taking part in an Ethics Bowl.")
    for phase in phases:
        phase.prompt = f"Prompt for {phase.phase_type} of round {i}. " + "p" * text_size
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


def recording_round(i: int, families: dict[str, str], **seats: str) -> Round:
    """`make_round(i, **seats)` that recorded these families when it was played (RoundSettings.families)."""
    r = make_round(i, **seats)
    r.settings.families = families
    return r


def planted_scores(values: Iterable[float]) -> Scores:
    """One value per criterion (in CRITERIA's order), rounded and clipped to 1-10 as a judge gives them."""
    return Scores(**{c: int(np.clip(np.rint(v), 1, 10)) for c, v in zip(CRITERIA, values, strict=True)})


def scored_round(rid: str, dilemma_id: str, team_a: str, team_b: str, judge: str,
                 scores_a: Scores | Mapping[str, int | None], scores_b: Scores | Mapping[str, int | None], *,
                 text: Callable[[PhaseType, str], str] | None = None, dilemma_title: str | None = None,
                 parse_method: str = "json", **fields: Any) -> Round:
    """A complete round of the five phases (text `text(phase, model)`, by default "<phase> by <model>")
    judged `scores_a` and `scores_b` (read as `parse_method`); `fields` are further Round fields."""
    say = text or (lambda pt, who: f"{pt.value} by {who}")
    models = seats(team_a, team_b, judge)
    phases = [Phase(phase_type=pt, model_id=models[PHASE_SPEAKER[pt]], response=say(pt, models[PHASE_SPEAKER[pt]]),
                    status=PhaseStatus.COMPLETE) for pt in PHASE_ORDER]
    judgment = Judgment(team_a_scores=_scores(scores_a), team_b_scores=_scores(scores_b), judge_model=judge,
                        parse_method=parse_method)
    return Round(id=rid, dilemma_id=dilemma_id, dilemma_title=dilemma_title or f"Dilemma {dilemma_id}",
                 team_a_model=team_a, team_b_model=team_b, judge_model=judge, phases=phases, judgment=judgment,
                 status=RoundStatus.COMPLETE, **fields)


def _scores(scores: Scores | Mapping[str, int | None]) -> Scores:
    return scores if isinstance(scores, Scores) else Scores(**scores)


TEXTS = {
    "presentation": "## Principle first\n\nThe keeper owes **honesty** to the harbour, but the duty is not absolute."
                    "\n\nPrinciple: keep records true unless truth itself causes grave harm.\n"
                    "Conclusion: keep the log honest and plead for the sailor openly.",
    "response": "Team A's principle is clear. It under-weights the child the sailor saved; a care lens asks "
                "who depends on the keeper's silence.",
    "rebuttal": "The care lens matters, yet a log that lies protects no one next winter.",
    "consistency_test": "The nurse case is parallel: the chart is a shared record, so it stays true.",
    "judgment": '{"team_a": {"scores": {...}}, "overall_analysis": "A close round."}',
}


def fixed_round(*, round_id: str = "r-fixed000001", missing: bool = False, dilemma_index: int = 0,
                status: RoundStatus = RoundStatus.COMPLETE, texts: dict[str, str] | None = None) -> Round:
    """The app tests' round: scripted (Team A) against local, judged by scripted-judge, at FIXED_TIME; with
    `missing` the judge gave no scores."""
    d = make_dilemmas()[dilemma_index]
    texts = {**TEXTS, **(texts or {})}
    phases = played_phases(seats("scripted", "local", "scripted-judge"), lambda pt, _m, _n: texts[pt.value],
                           FIXED_TIME, step=10, duration=8, latency=8.0,
                           usage=lambda n: Usage(input_tokens=400, output_tokens=60 + n, cost_usd=0.0012))
    if missing:
        judgment = Judgment(raw_response=texts["judgment"], needs_review=True, parse_method="none",
                            review_reasons=["no scores found in the judge's reply"], judge_model="scripted-judge",
                            overall_analysis="Both teams engaged thoughtfully.")
    else:
        judgment = Judgment(
            team_a_scores=Scores(**dict(zip(CRITERIA, [8, 7, 6, 7, 8, 9, 7], strict=True))),
            team_b_scores=Scores(**dict(zip(CRITERIA, [6, 7, 9, 6, 7, 8, 9], strict=True))),
            team_a_justification="Clear principle, applied consistently to the nurse case.",
            team_b_justification="Raised the child's interests; engaged generously.",
            overall_analysis="A close round decided by consistency.",
            raw_response=texts["judgment"], parse_method="json", judge_model="scripted-judge",
        )
    return Round(
        id=round_id, dilemma_id=d.id, dilemma_title=d.title, team_a_model="scripted", team_b_model="local",
        judge_model="scripted-judge", phases=phases, judgment=judgment, timestamp=FIXED_TIME,
        finished_at=FIXED_TIME + timedelta(minutes=1), status=status,
    )


# -- the fixed tournament of the tournament screen's tests and snapshots ------------------------------------
SNAP_TID = "t-snapshot0001"


def snapshot_round(i: int, dilemma_index: int, a: str, b: str, judge: str) -> Round:
    """Round `i` of the fixed trio tournament: scores from each model's base level, the second dilemma harder."""
    d = make_dilemmas()[dilemma_index]
    start = FIXED_TIME + timedelta(minutes=i)
    phases = played_phases(seats(a, b, judge), lambda pt, _m, _n: TEXTS[pt.value], start, step=0, duration=5,
                           latency=5.0, usage=lambda _n: Usage(input_tokens=300, output_tokens=80, cost_usd=0.001))
    base = {"alpha": 8, "beta": 6, "gamma": 7}

    def scores(model: str, shift: int) -> Scores:
        return Scores(**{c: max(1, min(10, base[model] + shift + (k + i) % 3 - 1)) for k, c in enumerate(CRITERIA)})

    # the second dilemma is harder for everyone, most of all for the responding team
    judgment = Judgment(team_a_scores=scores(a, -dilemma_index), team_b_scores=scores(b, -2 * dilemma_index),
                        overall_analysis="Fixed.", raw_response="{}", parse_method="json", judge_model=judge)
    return Round(id=f"r-snap{i:04d}", dilemma_id=d.id, dilemma_title=d.title, team_a_model=a, team_b_model=b,
                 judge_model=judge, phases=phases, judgment=judgment, timestamp=start,
                 finished_at=start + timedelta(minutes=1), status=RoundStatus.COMPLETE, tournament_id=SNAP_TID,
                 schedule_key=f"k{i}")


def write_snapshot_tournament(store: ResultsStore) -> None:
    """The fixed trio tournament (alpha, beta, gamma; each pairing judged by the third; two dilemmas), saved."""
    trio = ("alpha", "beta", "gamma")
    i = 0
    for dilemma_index in (0, 1):
        for a in trio:
            for b in trio:
                if a != b:
                    judge = next(m for m in trio if m not in (a, b))
                    store.save_round(snapshot_round(i, dilemma_index, a, b, judge))
                    i += 1
    store.save_tournament(Tournament(id=SNAP_TID, name="fixed trio", created=FIXED_TIME,
                                     finished_at=FIXED_TIME + timedelta(hours=1), status=TournamentStatus.COMPLETE,
                                     models=list(trio), dilemmas=["D1", "D2"], total_rounds=i))


# -- reading rounds back ------------------------------------------------------------------------------------
#: the role a phase's model plays in it
ROLE_OF = {
    PhaseType.PRESENTATION: "presenting",
    PhaseType.REBUTTAL: "presenting",
    PhaseType.CONSISTENCY_TEST: "presenting",
    PhaseType.RESPONSE: "responding",
    PhaseType.JUDGMENT: "judging",
}


def calls_by_role(rounds: Iterable[Round]) -> dict[str, Counter[str]]:
    """Model calls the rounds made, per model and role: phases that ran (complete or failed), not reused copies."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rounds:
        for p in r.phases:
            if p.reused_from is None and p.status in (PhaseStatus.COMPLETE, PhaseStatus.FAILED):
                out[p.model_id][ROLE_OF[p.phase_type]] += 1
    return dict(out)
