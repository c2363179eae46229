"""Precision planning (`ebtui plan`): how big a tournament must be to tell models apart. Variance components
from saved tournaments or the documented defaults; models, judges, document and prices from a tournament
config, a saved tournament's config, or placeholder models. Calls nothing, prints nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.errors import UsageError

if TYPE_CHECKING:  # (`X as X`: the front ends name these types from here)
    from ebtui.core.analysis.variance import VarianceComponents as VarianceComponents
    from ebtui.core.records import Round
    from ebtui.core.tournament import TournamentConfig
    from ebtui.core.tournament.planner import PlanResult as PlanResult
    from ebtui.core.usecases.context import AppContext

__all__ = ["PrecisionPlan", "plan_config", "precision_plan"]


@dataclass(frozen=True)
class PrecisionPlan:
    result: PlanResult
    components: VarianceComponents

    def json(self) -> object:
        """The plan as `ebtui plan --json` prints it (no NaN or infinity: null)."""
        from ebtui.core.analysis.compare import finite

        return finite(self.result.json())


def plan_config(ctx: AppContext, config_path: str | None, from_ids: Sequence[str],
                document: str | None) -> TournamentConfig | None:
    """The config to plan for: the file (a bad one: UsageError), else the first saved tournament's (None when it
    cannot be read), else None; `document` (given before the subcommand) fills a config without one."""
    from ebtui.core.usecases.tournament import StoreError, config_file, saved_config

    if config_path is not None:
        cfg = config_file(config_path)
    elif from_ids:
        try:
            if not ctx.store_root.is_dir():
                return None
            cfg = saved_config(ctx.store, from_ids[0], own_source=False)
        except (StoreError, UsageError):
            return None
    else:
        return None
    if cfg.document is None and document:
        cfg.document = str(Path(document).resolve())
    return cfg


def _rounds(ctx: AppContext, from_ids: Sequence[str]) -> list[Round]:
    from ebtui.core.store import StoreError

    root = ctx.store_root
    if not root.is_dir():
        raise UsageError(f"no results store at {root} (give --store DIR)")
    rounds: list[Round] = []
    for tid in from_ids:
        try:
            got = ctx.store.load_rounds(tournament=tid)
        except (StoreError, ValueError) as exc:
            raise UsageError(f"{root}: {exc}") from None
        if not got:
            raise UsageError(f"--from {tid}: no rounds of that tournament in {root}")
        rounds += got
    return rounds


def precision_plan(ctx: AppContext, cfg: TournamentConfig | None, *, from_ids: Sequence[str], config_given: bool,
                   delta: float | None, half_width: float | None, n_models: int | None, document: str | None,
                   document_dilemmas: Callable[[str | None], int]) -> PrecisionPlan:
    """Candidate designs with their predicted half-width, detectable gap, calls and cost (`document_dilemmas`:
    how many dilemmas a document holds, the front end's reading of it)."""
    from threadpoolctl import threadpool_limits

    # every matrix of a plan is small (a design's few dozen columns, ~60 designs): BLAS threads only spin against
    # each other and the machine's other work (measured on 2 busy cores: 2.6-5.9 s of CPU for `plan --config`
    # against 1.3 s on one thread, the same bytes out); as `ebtui report` (ebtui/cli/report.py) does by env
    with threadpool_limits(limits=1, user_api="blas"):
        return _precision_plan(ctx, cfg, from_ids=from_ids, config_given=config_given, delta=delta,
                               half_width=half_width, n_models=n_models, document=document,
                               document_dilemmas=document_dilemmas)


def _precision_plan(ctx: AppContext, cfg: TournamentConfig | None, *, from_ids: Sequence[str], config_given: bool,
                    delta: float | None, half_width: float | None, n_models: int | None, document: str | None,
                    document_dilemmas: Callable[[str | None], int]) -> PrecisionPlan:
    from ebtui.core.analysis.variance import default_components, variance_components
    from ebtui.core.families import family_function
    from ebtui.core.tournament.planner import Pricing, make_plan

    rounds = _rounds(ctx, from_ids) if from_ids else []
    vc = variance_components(rounds, family_function(None)) if rounds else default_components(
        "no --from tournament given")
    pricing: Pricing | None = None
    notes: list[str] = []
    if cfg is not None and n_models is None:
        from ebtui.config import ConfigError
        from ebtui.core.tournament import TournamentSetupError, plan_tournament
        from ebtui.core.tournament.planner import pricing_for

        models = list(cfg.models)
        judges = list(cfg.judges) if isinstance(cfg.judges, list) else None
        self_debates = cfg.self_debates
        try:
            tplan = plan_tournament(cfg, ctx.models)
        except (ConfigError, TournamentSetupError) as exc:
            if config_given:
                raise UsageError(str(exc)) from None
            # the saved tournament's models are not in this models.toml: plan its design without prices
            notes.append(f"no prices: {exc} (give --models-file / --config for costs)")
            doc_dilemmas = document_dilemmas(cfg.document or document)
        else:
            doc_dilemmas = len(tplan.dilemmas)
            pricing = pricing_for(tplan, ("rotate", "panel"))
            if pricing and pricing.unpriced:
                notes.append(f"no price configured for {', '.join(pricing.unpriced)} (counted as $0)")
    else:
        models = [f"model-{i + 1}" for i in range(n_models or 4)]
        judges = None
        self_debates = False
        doc_dilemmas = document_dilemmas(document)
        notes.append("placeholder models, no prices: give --config tournament.toml for costs")
    result = make_plan(models, vc.values(), judges=judges, document_dilemmas=doc_dilemmas, delta=delta,
                       self_debates=self_debates, pricing=pricing, components_json=vc.json(), half_width=half_width)
    result.notes += notes
    return PrecisionPlan(result, vc)
