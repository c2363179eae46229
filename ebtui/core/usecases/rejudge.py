"""Re-judging saved rounds (`ebtui rejudge`): which rounds the targets name, the planned judgments (other judges,
repeats, the other reading order), their cost, the judges' own views; then only judge calls, each judgment
saved as it arrives (ebtui.core.rejudge). Resumable. Never prints: progress lines go to callbacks."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ebtui.errors import UsageError

if TYPE_CHECKING:  # (`X as X`: the front ends name these types from here)
    from ebtui.core.batch.coordinator import BatchCoordinator
    from ebtui.core.records import Round
    from ebtui.core.rejudge import PlannedJudgment as PlannedJudgment
    from ebtui.core.rejudge import RejudgePlan as RejudgePlan
    from ebtui.core.rejudge import RejudgeResult as RejudgeResult
    from ebtui.core.tournament.costs import ModelInfo
    from ebtui.core.usecases.context import AppContext
    from ebtui.providers.base import ModelClient

__all__ = ["PreparedRejudge", "RejudgeOutcome", "RejudgeRequest", "batch_clients", "judge_clients", "plan_json",
           "prepare", "run"]


@dataclass(frozen=True)
class RejudgeRequest:
    targets: Sequence[str]  # a tournament (id or name), or round ids
    judges: list[str] | None = None  # None: each round's own judge
    repeats: int = 1
    order: str = "same"  # same | swapped | balanced
    allow_own: bool = False
    views: bool = False  # also the judges' own blind views and the teams' conclusions
    only_views: bool = False


@dataclass
class PreparedRejudge:
    """What a re-judgment would ask: the rounds, the plan, the judges needed, the estimate, the view calls."""

    request: RejudgeRequest
    rounds: list[Round]
    label: str
    plan: RejudgePlan
    needed: list[str]
    infos: dict[str, ModelInfo]
    estimate: dict[str, Any]  # ebtui.core.rejudge.estimate_cost's figures
    view_calls: dict[str, int] | None  # None: no --views
    views: bool

    @property
    def nothing_to_ask(self) -> bool:
        return not self.plan.calls and not (self.view_calls and any(self.view_calls.values()))

    @property
    def run_id(self) -> str:
        """The batch ledger's id of this re-judgment (the same targets and options: the same id)."""
        r = self.request
        blob = json.dumps([self.label, r.judges, r.repeats, r.order, r.allow_own]).encode()
        return "rejudge-" + hashlib.sha256(blob).hexdigest()[:12]


def _rounds(ctx: AppContext, targets: Sequence[str]) -> tuple[list[Round], str]:
    """The rounds the targets name: a tournament (id or name) or round ids; (rounds, label)."""
    from ebtui.core.store import StoreError

    results = ctx.store
    tournaments = results.list_tournaments()
    if len(targets) == 1:
        t = targets[0]
        hits = [x for x in tournaments if t in (x.id, x.name)]
        if len(hits) > 1:
            raise UsageError(f"{t!r} names {len(hits)} tournaments ({', '.join(x.id for x in hits)}): give the id")
        if hits:
            rounds = results.load_rounds(tournament=hits[0].id)
            if not rounds:
                raise UsageError(f"tournament {t!r} has no rounds in {results.root}")
            return rounds, hits[0].id
    out = []
    for rid in targets:
        try:
            out.append(results.load_round(rid))
        except (StoreError, ValueError):
            raise UsageError(f"{rid!r} is neither a tournament (id or name) nor a round id in {results.root}") from None
    return out, ",".join(sorted(targets))


def prepare(ctx: AppContext, req: RejudgeRequest) -> PreparedRejudge:
    """The plan of a re-judgment (a missing store, unknown targets or judges: one UsageError line)."""
    from ebtui.config import ConfigError
    from ebtui.core.judge_views import needed, plan_views
    from ebtui.core.rejudge import estimate_cost, plan_rejudge
    from ebtui.core.tournament.costs import model_infos
    from ebtui.core.usecases.report import existing_root

    root = existing_root(ctx)
    rounds, label = _rounds(ctx, req.targets)
    try:
        models = ctx.models
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    plan = plan_rejudge(rounds, judges=req.judges, repeats=req.repeats, order=req.order, allow_own=req.allow_own)
    views = req.views
    if req.only_views:
        plan.calls, views = [], True
    view_judges = sorted({j for (j, _d) in needed(rounds, req.judges)}) if views else []
    wanted = sorted({c.judge for c in plan.calls} | set(view_judges))
    unknown = [j for j in wanted if j not in models.models]
    if unknown:
        raise UsageError(f"judge(s) not in models.toml: {', '.join(unknown)}")
    infos = model_infos(wanted, {}, models)
    view_calls = plan_views(root, rounds, req.judges) if views else None
    return PreparedRejudge(req, rounds, label, plan, wanted, infos, estimate_cost(plan, infos), view_calls, views)


def judge_clients(ctx: AppContext, prep: PreparedRejudge) -> dict[str, ModelClient]:
    from ebtui.config import ConfigError

    try:
        return ctx.clients(prep.needed)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def batch_clients(ctx: AppContext, prep: PreparedRejudge, clients: Mapping[str, ModelClient]
                  ) -> tuple[dict[str, ModelClient], BatchCoordinator | None]:
    """Judges whose provider has a batch API ask through it (one wave; resumable); None: no judge has one."""
    from ebtui.core.batch import BatchSettings, LedgerError
    from ebtui.core.batch.coordinator import BatchCoordinator
    from ebtui.core.batch.ledger import BatchLedger
    from ebtui.core.batch.setup import batch_model_names
    from ebtui.core.safe_text import strip_control
    from ebtui.providers.batch import batch_client

    models = ctx.models
    names = batch_model_names(list(clients), models)
    if not names:
        return dict(clients), None
    try:
        ledger = BatchLedger.open(ctx.store_root, prep.run_id)
    except LedgerError as exc:
        raise UsageError(strip_control(str(exc))) from None
    bclients = {n: c for n in names if (c := batch_client(models.models[n])) is not None}
    coord = BatchCoordinator(ledger, bclients, BatchSettings())
    out = dict(clients)
    for n in bclients:
        out[n] = coord.client(n, clients[n])
    return out, coord


@dataclass
class RejudgeOutcome:
    result: RejudgeResult
    #: with views: own views asked, team conclusions classified, failed, unreadable
    view_counts: dict[str, int] = field(default_factory=dict)

    @property
    def incomplete(self) -> bool:
        return bool(self.result.failed or self.result.over_budget or self.view_counts.get("failed"))


async def run(ctx: AppContext, prep: PreparedRejudge, clients: Mapping[str, ModelClient], *,
              coordinator: BatchCoordinator | None = None, concurrency: int = 8, budget: float | None = None,
              on_done: Callable[[PlannedJudgment, str], None] | None = None,
              on_view: Callable[[str], None] | None = None) -> RejudgeOutcome:
    """Ask the planned judgments (each saved as it arrives), then the views; the clients are closed after."""
    from ebtui.core.rejudge import call_cost, run_rejudge
    from ebtui.core.tournament.costs import Budget

    store = ctx.store
    try:
        res = await run_rejudge(prep.plan, store, clients, concurrency=concurrency, on_done=on_done,
                                budget=Budget(budget) if budget is not None else None,
                                cost_of=lambda pj: call_cost(pj, prep.infos))
        outcome = RejudgeOutcome(res)
        if prep.views:
            from ebtui.core.judge_views import gather_views
            from ebtui.core.rejudge import round_dilemma

            fresh = [store.load_round(r.id) for r in prep.rounds]
            outcome.view_counts = await gather_views(ctx.store_root, fresh, clients, round_dilemma,
                                                     judges=prep.request.judges, concurrency=concurrency,
                                                     on_done=on_view)
        return outcome
    finally:
        if coordinator is not None:
            await coordinator.aclose()
        for c in clients.values():
            await c.aclose()


def plan_json(prep: PreparedRejudge) -> dict[str, object]:
    """What `ebtui rejudge --dry-run --json` prints."""
    plan = prep.plan
    return {
        "calls": [{"round": c.round_id, "judge": c.judge, "order": c.order, "repeat": c.repeat, "key": c.key}
                  for c in plan.calls],
        "already_saved": len(plan.done), "rounds": plan.targets,
        "skipped": [{"round": r, "reason": why} for r, why in plan.skipped],
        "estimate": prep.estimate, "team_calls": 0, "view_calls": prep.view_calls,
    }
