"""Before a tournament runs: checked against models.toml, dilemmas loaded, schedule made once
(`plan_tournament`), and the dry run (`estimate_tournament`: calls, tokens and cost, calling nothing)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from ebtui.core.records import Dilemma, Tournament
from ebtui.core.tournament.config import TournamentConfig
from ebtui.core.tournament.costs import (
    CHARS_PER_TOKEN,
    DEFAULT_OUTPUT_TOKENS,
    ModelInfo,
    estimate_tokens,
    model_infos,
)
from ebtui.core.tournament.schedule import Schedule, ScheduleError, make_schedule
from ebtui.providers.base import ModelClient

__all__ = [
    "DryRunEstimate",
    "TournamentPlan",
    "TournamentSetupError",
    "estimate_tournament",
    "plan_tournament",
]

if TYPE_CHECKING:
    from ebtui.config import ModelsConfig
    from ebtui.core.store import ResultsStore
    from ebtui.core.tournament.runner import RunOptions, TournamentRunner


class TournamentSetupError(Exception):
    """The tournament cannot be set up (unknown model, bad document, no judge, resume mismatch).
    The message is one line naming the file and field where there is one."""


@dataclass
class TournamentPlan:
    """Everything checked and loaded before a tournament runs (or is dry-run) — what the CLI and the
    TUI both need: `plan.estimate()`, then `adaptive.runner_for(plan, clients, store)` (which calls
    `plan.runner` unless the tournament has a target half-width)."""

    config: TournamentConfig
    models_config: ModelsConfig
    dilemmas: list[Dilemma]
    schedule: Schedule
    tournament_id: str
    infos: dict[str, ModelInfo]
    resumed: Tournament | None = None

    def estimate(self) -> DryRunEstimate:
        return estimate_tournament(self.config, self.schedule, self.dilemmas, self.infos,
                                   tournament_id=self.tournament_id)

    def runner(self, clients: Mapping[str, ModelClient], store: ResultsStore,
               **kw: Unpack[RunOptions]) -> TournamentRunner:
        from ebtui.core.tournament.runner import TournamentRunner

        return TournamentRunner(self.config, clients, store, dilemmas=self.dilemmas, schedule=self.schedule,
                                models_config=self.models_config, tournament_id=self.tournament_id, **kw)



def plan_tournament(
    config: TournamentConfig,
    models_config: ModelsConfig,
    store: ResultsStore | None = None,
    *,
    resume_id: str | None = None,
) -> TournamentPlan:
    """Check a tournament against models.toml, load its dilemmas, make its schedule, and (with
    `resume_id`) check that the saved tournament was made from the same schedule fields."""
    import warnings

    from ebtui.core.dilemmas import DocumentError, load_dilemmas

    label = str(config.source) if config.source else "tournament config"
    unknown = [m for m in config.all_model_names() if m not in models_config.models]
    if unknown:
        where = models_config.source or "the built-in models"
        field_ = "models" if unknown[0] in config.models else "judges"
        raise TournamentSetupError(f"{label}: field {field_}: no model named {unknown[0]!r} in {where} "
                                   f"(configured: {', '.join(sorted(models_config.models))})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a missing section warns per dilemma; `ebtui dilemmas` shows them
            dilemmas = load_dilemmas(config.document_path())
    except DocumentError as exc:
        raise TournamentSetupError(f"{label}: field document: {exc}") from None
    try:
        schedule = make_schedule(config, dilemmas)
    except ScheduleError as exc:
        raise TournamentSetupError(str(exc)) from None
    tid = config.tournament_id()
    resumed: Tournament | None = None
    if resume_id is not None:
        from ebtui.core.store import StoreError

        if store is None:
            raise TournamentSetupError(f"cannot resume {resume_id}: no results store given")
        try:
            resumed = store.load_tournament(resume_id)
        except StoreError as exc:
            raise TournamentSetupError(f"cannot resume: {exc}") from None
        differs = [k for k, v in config.schedule_fields().items() if resumed.config.get(k) != v]
        if differs:
            raise TournamentSetupError(
                f"cannot resume {resume_id}: {label} differs from the config it was started with "
                f"(field {differs[0]}); runtime settings (budget, concurrency, limits, store) may change, "
                "the schedule may not"
            )
        tid = resume_id
    infos = model_infos(config.all_model_names(), {}, models_config)
    return TournamentPlan(config, models_config, dilemmas, schedule, tid, infos, resumed)


@dataclass
class DryRunEstimate:
    tournament_id: str
    rounds: int
    exchanges: int
    calls: dict[str, Counter[str]]  # model -> role -> calls
    input_tokens: Counter[str]
    output_tokens: Counter[str]
    cost_usd: dict[str, float | None]  # None: no price configured for the model
    output_tokens_per_call: dict[str, int]
    judge_mode: str
    dilemmas: list[str]

    @property
    def total_calls(self) -> int:
        return sum(sum(c.values()) for c in self.calls.values())

    @property
    def total_cost_usd(self) -> float:
        return sum(c for c in self.cost_usd.values() if c is not None)

    @property
    def unpriced_models(self) -> list[str]:
        return sorted(m for m, c in self.cost_usd.items() if c is None)


def estimate_tournament(
    config: TournamentConfig,
    schedule: Schedule,
    dilemmas: list[Dilemma],
    infos: Mapping[str, ModelInfo],
    *,
    tournament_id: str | None = None,
) -> DryRunEstimate:
    """Calls per model and role, tokens and cost — from the actual prompts, calling nothing.

    Phases 2-5 quote earlier answers; those are stood in for by text of the expected output length
    (`expected_output_tokens`, else max_tokens, else DEFAULT_OUTPUT_TOKENS).
    """
    from ebtui.core import prompts

    by_id = {d.id: d for d in dilemmas}

    def out_tokens(model: str) -> int:
        info = infos.get(model)
        return (config.expected_output_tokens or config.max_tokens or (info.max_tokens if info else None)
                or DEFAULT_OUTPUT_TOKENS)

    sys_tokens = estimate_tokens(prompts.SYSTEM_PROMPT)
    calls: dict[str, Counter[str]] = defaultdict(Counter)
    tin: Counter[str] = Counter()
    tout: Counter[str] = Counter()
    cache: dict[tuple[str, str, str], tuple[int, int, int, int, str, str, str, str]] = {}
    for ex in schedule.exchanges:
        d = by_id[ex.dilemma_id]
        key = (ex.dilemma_id, ex.team_a, ex.team_b)
        if key not in cache:
            fill = {m: "x" * (out_tokens(m) * CHARS_PER_TOKEN) for m in (ex.team_a, ex.team_b)}
            pres, resp = fill[ex.team_a], fill[ex.team_b]
            cache[key] = (
                estimate_tokens(prompts.presentation_prompt(d)),
                estimate_tokens(prompts.response_prompt(d, pres)),
                estimate_tokens(prompts.rebuttal_prompt(d, pres, resp)),
                estimate_tokens(prompts.consistency_prompt(d, pres)),
                pres, resp, pres, pres,
            )
        p_in, r_in, rb_in, c_in, pres, resp, rebut, cons = cache[key]
        a, b = ex.team_a, ex.team_b
        calls[a]["presenting"] += 3
        tin[a] += p_in + rb_in + c_in + 3 * sys_tokens
        tout[a] += 3 * out_tokens(a)
        calls[b]["responding"] += 1
        tin[b] += r_in + sys_tokens
        tout[b] += out_tokens(b)
        j_in = estimate_tokens(
            prompts.judgment_prompt(d, a, pres, b, resp, rebut, cons, blind=config.blind_judge)
        ) + sys_tokens
        for j in ex.judges:
            calls[j]["judging"] += 1
            tin[j] += j_in
            tout[j] += out_tokens(j)
    cost: dict[str, float | None] = {}
    for m in calls:
        info = infos.get(m)
        cost[m] = info.cost(tin[m], tout[m]) if info else None
    return DryRunEstimate(
        tournament_id=tournament_id or config.tournament_id(),
        rounds=len(schedule),
        exchanges=len(schedule.exchanges),
        calls=dict(calls),
        input_tokens=tin,
        output_tokens=tout,
        cost_usd=cost,
        output_tokens_per_call={m: out_tokens(m) for m in calls},
        judge_mode=schedule.judge_mode,
        dilemmas=list(schedule.dilemma_ids),
    )
