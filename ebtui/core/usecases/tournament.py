"""Tournaments, for both front ends: read a config (a file, or a saved tournament's), plan and dry-run it, run it
(an async stream of events), list the saved ones, and the set-up's prediction. A problem the user can fix is
one `UsageError` line; nothing here prints."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from ebtui.core.records import Tournament
from ebtui.core.safe_text import strip_control
from ebtui.core.store import StoreError
from ebtui.core.tournament import (
    DryRunEstimate,
    Progress,
    RoundCompleted,
    RoundNotRun,
    ScheduledRound,
    TournamentBusyError,
    TournamentConfig,
    TournamentEvent,
    TournamentFinished,
    TournamentPlan,
    TournamentStarted,
    fmt_duration,
    fmt_tokens,
)
from ebtui.errors import UsageError

if TYPE_CHECKING:  # (`X as X`: the front ends name these types from here)
    from typing import TypeAlias

    from ebtui.core.analysis.variance import VarianceComponents as VarianceComponents
    from ebtui.core.batch import BatchCoordinator as BatchCoordinator
    from ebtui.core.batch.estimate import BatchEstimate as BatchEstimate
    from ebtui.core.store import ResultsStore
    from ebtui.core.tournament import TournamentRunner
    from ebtui.core.tournament.adaptive import AdaptiveMessage as AdaptiveMessage
    from ebtui.core.tournament.adaptive import AdaptiveRunner
    from ebtui.core.usecases.context import AppContext
    from ebtui.providers.base import ModelClient as ModelClient

#: what a run yields: the runner's events, and an adaptive run's wave and stop messages
RunEvent: TypeAlias = "TournamentEvent | AdaptiveMessage"


def __getattr__(name: str) -> object:
    """`AdaptiveMessage` on first use: the adaptive runner (numpy) loads only when a front end looks for it."""
    if name == "AdaptiveMessage":
        from ebtui.core.tournament.adaptive import AdaptiveMessage

        return AdaptiveMessage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "AdaptiveMessage", "DryRun", "batch_rows", "DryRunEstimate", "PlannedTournament", "Prediction", "Progress", "RoundCompleted",
    "RoundNotRun", "RunEvent", "SavedTournament", "SavedTournaments", "ScheduledRound", "StoreError", "TournamentBusyError",
    "TournamentConfig", "TournamentFinished", "TournamentPlan", "TournamentRun", "TournamentStarted",
    "completed_keys", "config_file", "dry_run", "fmt_duration", "fmt_tokens", "list_saved", "parse_config",
    "plan", "plan_file", "predict", "prepare", "read_config", "saved_config", "start", "store_components",
]


# -- the config ---------------------------------------------------------------------------------------------
def config_file(path: str | Path) -> TournamentConfig:
    """A tournament.toml (a bad one: one UsageError line naming file and field)."""
    from ebtui.core.tournament.config import TournamentConfigError, load_tournament_config

    try:
        return load_tournament_config(path)
    except TournamentConfigError as exc:
        raise UsageError(str(exc)) from None


def parse_config(data: Mapping[str, object], source: str | Path | None) -> TournamentConfig:
    """tournament.toml's fields as a config (a bad field: one UsageError line)."""
    from ebtui.core.tournament.config import TournamentConfigError, parse_tournament_config

    try:
        return parse_tournament_config(dict(data), source)
    except TournamentConfigError as exc:
        raise UsageError(str(exc)) from None


def saved_config(store: ResultsStore, tournament_id: str, *, own_source: bool = True) -> TournamentConfig:
    """The config a saved tournament was started with (its file's place kept when `own_source`, so relative
    paths resolve as they did). Raises StoreError when the tournament cannot be read, UsageError for a bad config."""
    t = store.load_tournament(tournament_id)
    data = {k: v for k, v in t.config.items() if k != "source"}
    src = t.config.get("source") if own_source else None
    return parse_config(data, str(src) if src else f"tournament {tournament_id}")


def read_config(config_path: str | None, resume_id: str | None, store: str | None) -> tuple[TournamentConfig, Path]:
    """`ebtui tournament [CONFIG] [--resume ID]`: the config (from CONFIG, or the stored tournament's when only
    --resume is given) and the store directory (--store, else the file's `store`, else the default)."""
    from ebtui.locations import store_dir

    if config_path is not None:
        cfg = config_file(config_path)
        return cfg, Path(store) if store else (cfg.store_path() or store_dir())
    if resume_id is None:
        raise UsageError("give a tournament config (CONFIG), or --resume ID to continue a saved tournament")
    from ebtui.core.store import ResultsStore

    root = Path(store) if store else store_dir()
    try:
        return saved_config(ResultsStore(root), resume_id), root
    except StoreError as exc:
        raise UsageError(f"{exc} (give --store DIR if it lives elsewhere)") from None


# -- the plan and the dry run ---------------------------------------------------------------------------------
def plan(ctx: AppContext, config: TournamentConfig, *, resume_id: str | None = None,
         with_store: bool = True) -> TournamentPlan:
    """The tournament checked against the context's models.toml, its dilemmas loaded and schedule made once
    (`with_store`: against the context's store, which a resume needs)."""
    from ebtui.config import ConfigError
    from ebtui.core.tournament import TournamentSetupError, plan_tournament

    try:
        return plan_tournament(config, ctx.models, ctx.store if with_store else None, resume_id=resume_id)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    except TournamentSetupError as exc:
        raise UsageError(strip_control(str(exc))) from None


def prepare(ctx: AppContext, config: TournamentConfig, *, resume_id: str | None = None,
            check_writable: bool = True) -> TournamentPlan:
    """The CLI's order of checks before a run or a dry run: models.toml, a store that can be written (before
    any model call: a tournament whose rounds cannot be saved is not paid for), the store, the plan."""
    from ebtui.config import ConfigError

    try:
        ctx.models  # noqa: B018 - read now: a bad models.toml is the first thing said
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if check_writable:
        from ebtui.core.preflight import PreflightError, check_store_writable

        try:
            check_store_writable(ctx.store_root)
        except PreflightError as exc:
            raise UsageError(strip_control(str(exc))) from None
    try:
        ctx.store  # noqa: B018
    except StoreError as exc:
        raise UsageError(f"results store {ctx.store_root}: {strip_control(str(exc))}") from None
    return plan(ctx, config, resume_id=resume_id)


@dataclass(frozen=True)
class DryRun:
    """Calls, tokens and cost of a plan (nothing called), the disk its rounds need, and with batch mode the
    batch prices (ebtui.core.batch.estimate)."""

    estimate: DryRunEstimate
    disk_bytes: int
    batch: BatchEstimate | None = None  # batch_estimate's figures


def dry_run(tplan: TournamentPlan, *, batch: bool = False) -> DryRun:
    from ebtui.core.preflight import store_bytes_needed

    est = tplan.estimate()
    tokens = sum(est.input_tokens.values()) + sum(est.output_tokens.values())
    prices = None
    if batch:
        from ebtui.core.batch.estimate import batch_estimate

        prices = batch_estimate(tplan, est)
    return DryRun(est, store_bytes_needed(est.rounds, tokens), prices)


def check_space(ctx: AppContext, tplan: TournamentPlan) -> None:
    """Before any call: the store's disk must hold the rounds still to play (an estimate from the plan's
    tokens: see ebtui.core.preflight.store_bytes_needed)."""
    from ebtui.core.preflight import PreflightError, check_free_space, store_bytes_needed

    est = tplan.estimate()
    try:
        done = len(ctx.store.query(tournament=tplan.tournament_id, status="complete"))
    except Exception:  # noqa: BLE001 - an unreadable index: count nothing as done
        done = 0
    left = max(0, est.rounds - done)
    if not left or not est.rounds:
        return
    tokens = (sum(est.input_tokens.values()) + sum(est.output_tokens.values())) * left // est.rounds
    try:
        check_free_space(ctx.store_root, store_bytes_needed(left, tokens), f"the {left} round(s) still to play")
    except PreflightError as exc:
        raise UsageError(strip_control(str(exc))) from None


@dataclass(frozen=True)
class PlannedTournament:
    """A plan read from a file, its dry run, and the saved tournament it would resume (None: never run)."""

    path: str
    plan: TournamentPlan
    estimate: DryRunEstimate
    saved: Tournament | None


def plan_file(ctx: AppContext, path: str) -> PlannedTournament:
    """The app's plan of a tournament.toml against its own store (UsageError: a bad file, model or key)."""
    from ebtui.config import ConfigError
    from ebtui.core.tournament import TournamentSetupError, plan_tournament

    try:
        tplan = plan_tournament(config_file(path), ctx.models, ctx.store)
    except (TournamentSetupError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    estimate = tplan.estimate()
    try:
        saved: Tournament | None = ctx.store.load_tournament(tplan.tournament_id)
    except (StoreError, OSError):
        saved = None  # never run before
    return PlannedTournament(path, tplan, estimate, saved)


# -- running ----------------------------------------------------------------------------------------------------
class TournamentRun:
    """One run of a plan: `events()` streams what the runner (plain or adaptive) yields; `cancel()` stops it
    with rounds in flight saved; `aclose()` collects the batches and closes the clients."""

    def __init__(self, runner: TournamentRunner | AdaptiveRunner, clients: Mapping[str, ModelClient],
                 coordinator: BatchCoordinator | None = None) -> None:
        self.runner = runner
        self.clients = clients
        self.coordinator = coordinator

    def events(self) -> AsyncIterator[RunEvent]:
        return self.runner.run()

    def cancel(self) -> None:
        self.runner.cancel()

    @property
    def cancelled(self) -> bool:
        return self.runner.cancelled

    @property
    def budget_limit(self) -> float:
        return float(self.runner.budget.limit_usd or 0.0)

    def resume_hint(self, config_label: str, budget: float | None = None) -> str:
        return self.runner.resume_hint(config_label, budget)

    async def aclose(self) -> None:
        if self.coordinator is not None:
            await self.coordinator.aclose()
        for client in self.clients.values():
            try:
                await client.aclose()
            except Exception:  # noqa: BLE001, S110 - closing connections once done
                pass


def clients_for(ctx: AppContext, tplan: TournamentPlan) -> dict[str, ModelClient]:
    """Every model's client (names and keys checked: a problem is one UsageError line)."""
    from ebtui.config import ConfigError

    try:
        return ctx.clients(tplan.config.all_model_names())
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def use_batch(ctx: AppContext, tplan: TournamentPlan, clients: Mapping[str, ModelClient],
              poll_max_s: float) -> tuple[dict[str, ModelClient], BatchCoordinator | None]:
    """Clients whose calls go through their provider's batch API where there is one (None: no model has one)."""
    from ebtui.config import ConfigError
    from ebtui.core.batch import BatchSettings, LedgerError
    from ebtui.core.batch.setup import prepare_batch

    try:
        return prepare_batch(tplan, clients, ctx.store_root,
                             BatchSettings(poll_max_s=poll_max_s, poll_first_s=min(2.0, poll_max_s)))
    except (LedgerError, ConfigError) as exc:
        raise UsageError(strip_control(str(exc))) from None


def start(ctx: AppContext, tplan: TournamentPlan, clients: Mapping[str, ModelClient], *,
          budget: float | None = None, progress_interval_s: float = 0.25,
          coordinator: BatchCoordinator | None = None) -> TournamentRun:
    """The run of a plan over the context's store: waves until the target half-width when the tournament has one,
    else the plain runner."""
    from ebtui.core.tournament.adaptive import runner_for

    runner = runner_for(tplan, clients, ctx.store, budget_usd=budget, progress_interval_s=progress_interval_s)
    return TournamentRun(runner, clients, coordinator)


def resume_command(resume_line: str, options: Sequence[tuple[str, object]], document: str | None = None) -> str:
    """The resume line with every option that was given, so it can be pasted as is (`tournament` has no
    --document: a document given before the subcommand goes there)."""
    from ebtui.core.preflight import command_hint

    extra = command_hint([], options)
    line = f"{resume_line} {extra}" if extra else resume_line
    if document is not None:
        line = line.replace("ebtui tournament ", f"{command_hint(['ebtui'], [('--document', document)])} "
                                                "tournament ", 1)
    return line


def completed_keys(ctx: AppContext, tournament_id: str) -> set[str]:
    """The schedule keys of the tournament's complete rounds (an unreadable index: none)."""
    try:
        return {doc["schedule_key"] for doc in ctx.store.query(tournament=tournament_id, status="complete")
                if doc.get("schedule_key")}
    except Exception:  # noqa: BLE001 - an unreadable index only loses the resume's head start
        return set()


# -- saved tournaments ----------------------------------------------------------------------------------------
class SavedTournament(NamedTuple):
    tournament: Tournament
    done: int  # rounds complete
    status: str  # the saved status; "interrupted" when saved as running but held by no process


@dataclass(frozen=True)
class SavedTournaments:
    rows: list[SavedTournament]
    #: (path, reason) of tournament files and round files that could not be read (with `problems=True`)
    unreadable_tournaments: list[tuple[str, str]]
    unreadable_rounds: list[tuple[str, str]]


def list_saved(ctx: AppContext, *, problems: bool = False) -> SavedTournaments:
    """The store's tournaments, oldest first, with their complete rounds (raises StoreError)."""
    from ebtui.core.tournament import tournament_is_running

    rs = ctx.store
    ts = rs.list_tournaments()
    bad_rounds = rs.unreadable() if problems else []
    counts: dict[str, int] = {}
    for e in rs.query(status="complete"):
        counts[e.get("tournament_id") or ""] = counts.get(e.get("tournament_id") or "", 0) + 1
    rows = []
    for t in ts:
        status = t.status.value
        if status == "running" and not tournament_is_running(rs, t.id):
            status = "interrupted"  # saved as running, but no process holds it: killed; re-run to resume
        rows.append(SavedTournament(t, counts.get(t.id, 0), status))
    bad_tournaments = [(p, r) for p, r in rs.problems if "/tournaments/" in p] if problems else []
    return SavedTournaments(rows, bad_tournaments, list(bad_rounds))


# -- the set-up's prediction ------------------------------------------------------------------------------------
class Prediction(TypedDict):
    """What a set-up would run and how precise it would be (the set-up screen shows it)."""

    dilemmas: int
    pairings: int
    repeats: int
    judge_mode: str | list[str]
    rounds: int
    calls: int
    cost_usd: float
    batch_cost_usd: float | None
    half_width: float | None
    detectable_gap: float | None
    components: str
    target: float | None
    note: str
    config: TournamentConfig


def model_names(ctx: AppContext) -> list[str]:
    """The context's models, sorted (none when models.toml cannot be read)."""
    from ebtui.config import ConfigError

    try:
        return sorted(ctx.models.models)
    except ConfigError:
        return []


def store_components(ctx: AppContext) -> VarianceComponents:
    """The variance components of the store's rounds (an unreadable or empty store: the documented defaults)."""
    from ebtui.core.analysis.variance import default_components, variance_components
    from ebtui.core.families import family_function

    try:
        rounds = ctx.store.load_rounds()
    except Exception:  # noqa: BLE001 - an unreadable store: plan with the defaults
        rounds = []
    return variance_components(rounds, family_function(None), replicates=0) if rounds else \
        default_components("no saved rounds in the store")


def predict(ctx: AppContext, data: Mapping[str, object], components: VarianceComponents | None) -> Prediction:
    """The set-up's rounds, calls, cost (list and batch) and predicted pairwise half-width and detectable gap
    (ebtui.core.tournament.planner.evaluate on the design's real schedule). Raises on a bad set-up."""
    from ebtui.core.analysis.variance import default_components
    from ebtui.core.batch.estimate import batch_estimate
    from ebtui.core.tournament import plan_tournament
    from ebtui.core.tournament.planner import evaluate

    cfg = parse_config(data, "the set-up")
    tplan = plan_tournament(cfg, ctx.models)
    est = tplan.estimate()
    batch = batch_estimate(tplan, est)
    vc = components or default_components("still reading the store")
    design = evaluate(cfg.models, vc.values(), len(tplan.schedule.dilemma_ids),
                      "panel" if cfg.judges == "panel" else "rotate", cfg.rounds_per_pairing,
                      judges=cfg.judges if isinstance(cfg.judges, list) else None, seed=cfg.seed)
    comps = ("defaults (no saved rounds)" if vc.source == "defaults" else
             f"estimated from {vc.n_rows} saved scores on {vc.dilemmas} dilemmas")
    batch_price = batch["batch_price_usd"]
    return Prediction(
        dilemmas=len(tplan.schedule.dilemma_ids), pairings=len(cfg.models) * (len(cfg.models) - 1),
        repeats=cfg.rounds_per_pairing, judge_mode=cfg.judges, rounds=est.rounds, calls=est.total_calls,
        cost_usd=est.total_cost_usd, batch_cost_usd=float(batch_price) if batch_price is not None else None,
        half_width=design.half_width, detectable_gap=design.detectable_gap, components=comps,
        target=cfg.target_half_width,
        note=("No price configured for: " + ", ".join(est.unpriced_models) + " (counted as $0)")
        if est.unpriced_models else "", config=cfg)


def planned(ctx: AppContext, config: TournamentConfig, label: str) -> PlannedTournament:
    """A config set up in the app, planned against its store (never run before)."""
    from ebtui.core.tournament import plan_tournament

    tplan = plan_tournament(config, ctx.models, ctx.store)
    return PlannedTournament(label, tplan, tplan.estimate(), None)


def schedule_rounds(tplan: TournamentPlan) -> Iterable[ScheduledRound]:
    return tplan.schedule.rounds


def batch_rows(store_root: str | Path, tournament_id: str) -> list[dict[str, Any]]:
    """Each provider batch of a tournament and its state, read from its ledger (`<store>/batches/<id>.json`):
    the same after the app is reopened, and while another process owns the batches."""
    from ebtui.core.batch import batch_views, read_ledger

    return batch_views(read_ledger(store_root, tournament_id))
