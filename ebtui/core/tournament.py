"""Tournaments: the concurrent runner over the schedule, with limits, budget, resume, dry run and summary.

- Many exchanges in flight (the global `concurrency`), and per-provider / per-model limits acquired per
  *call*, so a slow or rate-limited provider never holds back the others. A provider that answers 429 gets
  fewer slots and a short pause (an adaptive limiter) on top of the providers' own retries.
- Round ids derive from the tournament id and the schedule key, so a re-run (or `--resume ID`) skips
  complete rounds, continues the others from their first missing phase, and never duplicates one — also
  after `kill -9`, when a round file was left "running".
- Budget: before every call, if what was spent plus what is reserved by calls in flight plus this call's
  estimate would exceed `budget_usd`, the call is not started (the phase fails as "budget"), no new
  exchange starts, calls in flight finish, everything is saved and the tournament is STOPPED_BUDGET.
- A failed round never stops the tournament: it is saved incomplete and the rest go on.

The front ends use `TournamentRunner(...).run()` (an async iterator of progress events) and `cancel()`.
Nothing here prints.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ebtui.core.events import PhaseFinished, RoundFinished
from ebtui.core.records import (
    CRITERIA,
    PHASE_ORDER,
    Dilemma,
    PhaseStatus,
    PhaseType,
    Round,
    RoundStatus,
    Tournament,
    TournamentStatus,
    utcnow,
)
from ebtui.core.schedule import Exchange, Schedule, ScheduledRound, ScheduleError, build_schedule
from ebtui.core.tournament_config import TournamentConfig
from ebtui.providers.base import Completion, ModelClient, ProviderError, Retrying, StreamItem

if TYPE_CHECKING:
    from ebtui.config import ModelsConfig
    from ebtui.core.store import ResultsStore

log = logging.getLogger(__name__)

__all__ = [
    "AdaptiveLimiter",
    "Budget",
    "DryRunEstimate",
    "LimitedClient",
    "Progress",
    "ScheduleError",
    "TournamentBusyError",
    "TournamentPlan",
    "TournamentRunner",
    "TournamentSetupError",
    "plan_tournament",
    "tournament_is_running",
    "TournamentSummary",
    "estimate_tournament",
    "make_schedule",
    "summarize_rounds",
]

#: output tokens assumed per call when neither the tournament nor the model sets max_tokens
DEFAULT_OUTPUT_TOKENS = 1024
#: characters per token, for estimates
CHARS_PER_TOKEN = 4

BUDGET_ERROR_PREFIX = "not started: tournament budget"


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


# ---------------------------------------------------------------------------------------------------------
# schedule from a config
# ---------------------------------------------------------------------------------------------------------
def make_schedule(config: TournamentConfig, dilemmas: list[Dilemma]) -> Schedule:
    """The config's schedule over the loaded dilemmas. Raises ScheduleError naming what is wrong."""
    known = [d.id for d in dilemmas]
    if config.dilemmas == "all":
        chosen = known
    else:
        unknown = [d for d in config.dilemmas if d not in known]
        if unknown:
            where = f"{config.source}: " if config.source else ""
            raise ScheduleError(
                f"{where}field dilemmas: unknown dilemma id(s) {', '.join(unknown)} (the document has: "
                f"{', '.join(known) or 'none'})"
            )
        chosen = list(config.dilemmas)
    try:
        return build_schedule(
            config.models,
            chosen,
            judges=config.judges,
            self_debates=config.self_debates,
            rounds_per_pairing=config.rounds_per_pairing,
            seed=config.seed,
        )
    except ScheduleError as exc:
        where = f"{config.source}: " if config.source else ""
        raise ScheduleError(f"{where}{exc}") from None


class TournamentBusyError(Exception):
    """Another process is running this tournament right now (two runs would play the same rounds)."""


class _TournamentLock:
    """An flock held while a tournament runs; the OS drops it when the process dies (even kill -9)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl
        import os

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            tid = self.path.name.removeprefix(".").removesuffix(".lock")
            raise TournamentBusyError(
                f"tournament {tid} is already running in another process (lock {self.path})"
            ) from None
        self._fd = fd

    def release(self) -> None:
        import os

        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def tournament_is_running(store: ResultsStore, tournament_id: str) -> bool:
    """Whether some process is running this tournament now (its lock is held). A tournament saved as
    "running" that is not running was interrupted (killed): run it again to resume it."""
    import fcntl
    import os

    path = store.root / "tournaments" / f".{tournament_id}.lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


class TournamentSetupError(Exception):
    """The tournament cannot be set up (unknown model, bad document, no judge, resume mismatch).
    The message is one line naming the file and field where there is one."""


@dataclass
class TournamentPlan:
    """Everything checked and loaded before a tournament runs (or is dry-run) — what the CLI and the
    TUI both need: `plan.estimate()`, then `plan.runner(clients, store)`."""

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

    def runner(self, clients: Mapping[str, ModelClient], store: ResultsStore, **kw: Any) -> TournamentRunner:
        return TournamentRunner(self.config, clients, store, dilemmas=self.dilemmas,
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


# ---------------------------------------------------------------------------------------------------------
# limits
# ---------------------------------------------------------------------------------------------------------
class AdaptiveLimiter:
    """A semaphore whose size shrinks when the provider rate-limits us, and grows back as calls succeed.

    `limit=None` means unlimited (until a 429 is seen). `backoff(delay)` halves the current limit (at
    least 1) and pauses new acquisitions for `delay` seconds; every `limit` successes in a row give one
    slot back, up to the configured limit.
    """

    def __init__(self, name: str, limit: int | None = None) -> None:
        self.name = name
        self.max_limit = limit
        self.limit = limit
        self.in_use = 0
        self.max_in_use = 0  # the most calls ever in flight at once (tests and benchmarks read it)
        self.paused_until = 0.0
        self.backoffs = 0
        self._restore_to: int | None = None  # for an unlimited limiter: the level seen before a backoff
        self._streak = 0
        self._waiters: list[asyncio.Future[None]] = []

    def _free(self) -> bool:
        return self.limit is None or self.in_use < self.limit

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            wait = self.paused_until - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            if self._free() and not self._waiters:
                break
            fut: asyncio.Future[None] = loop.create_future()
            self._waiters.append(fut)
            try:
                await fut
            finally:
                if fut in self._waiters:
                    self._waiters.remove(fut)
            if self.paused_until <= time.monotonic() and self._free():
                break
        self.in_use += 1
        self.max_in_use = max(self.max_in_use, self.in_use)

    def _wake(self) -> None:
        free = (len(self._waiters) if self.limit is None else max(0, self.limit - self.in_use))
        for fut in list(self._waiters):
            if free <= 0:
                break
            if not fut.done():
                self._waiters.remove(fut)
                fut.set_result(None)
                free -= 1

    def release(self, *, ok: bool = True) -> None:
        self.in_use -= 1
        if ok and self.limit is not None:
            self._streak += 1
            ceiling = self.max_limit if self.max_limit is not None else self._restore_to
            if ceiling is not None and self.limit < ceiling and self._streak >= self.limit:
                self.limit += 1
                self._streak = 0
                if self.max_limit is None and self.limit >= ceiling:
                    self.limit = None  # back to unlimited
                    self._restore_to = None
        self._wake()

    def backoff(self, delay_s: float | None) -> None:
        """The provider said 429: fewer calls at once, and none new for a moment."""
        self.backoffs += 1
        self._streak = 0
        if self.limit is None:
            self._restore_to = max(2, self.in_use)
            self.limit = max(1, self.in_use // 2)
        else:
            self.limit = max(1, self.limit // 2)
        pause = 1.0 if delay_s is None else min(max(delay_s, 0.0), 60.0)
        self.paused_until = max(self.paused_until, time.monotonic() + pause)

    async def __aenter__(self) -> AdaptiveLimiter:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release(ok=exc[0] is None)


@dataclass
class Budget:
    """Money spent and reserved; refuses a call that would push past the limit."""

    limit_usd: float | None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    stopped: bool = False

    def try_reserve(self, estimate_usd: float) -> bool:
        if self.limit_usd is None:
            self.reserved_usd += estimate_usd
            return True
        if self.stopped or self.spent_usd + self.reserved_usd + estimate_usd > self.limit_usd:
            self.stopped = True
            return False
        self.reserved_usd += estimate_usd
        return True

    def settle(self, estimate_usd: float, actual_usd: float | None) -> None:
        self.reserved_usd = max(0.0, self.reserved_usd - estimate_usd)
        self.spent_usd += actual_usd or 0.0


@dataclass(frozen=True)
class ModelInfo:
    """What the runner needs to know about a model beyond its client."""

    provider: str
    price_in: float | None = None  # USD per million tokens
    price_out: float | None = None
    max_tokens: int | None = None
    #: the model's own concurrency limit (models.toml max_concurrency)
    max_concurrency: int | None = None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.price_in is None and self.price_out is None:
            return None
        return (input_tokens * (self.price_in or 0.0) + output_tokens * (self.price_out or 0.0)) / 1e6


@dataclass
class CallStats:
    in_flight: int = 0
    calls: Counter[str] = field(default_factory=Counter)  # started calls per model
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    refused_for_budget: int = 0


class LimitedClient(ModelClient):
    """Wraps a model's client: model and provider limits held per call, budget check before each call."""

    def __init__(
        self,
        inner: ModelClient,
        *,
        info: ModelInfo,
        limiters: list[AdaptiveLimiter],
        provider_limiter: AdaptiveLimiter | None,
        budget: Budget,
        stats: CallStats,
        expected_output_tokens: int | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.provider = info.provider
        self.model = inner.model
        self.supports_json_schema = inner.supports_json_schema
        self.info = info
        self.limiters = limiters  # acquired in order; the provider's last, so it is held the shortest
        self.provider_limiter = provider_limiter
        self.budget = budget
        self.stats = stats
        self.expected_output_tokens = expected_output_tokens
        self._on_change = on_change or (lambda: None)

    def estimate_cost(self, prompt: str, system_prompt: str, max_tokens: int | None) -> float:
        out = self.expected_output_tokens or max_tokens or self.info.max_tokens or DEFAULT_OUTPUT_TOKENS
        return self.info.cost(estimate_tokens(system_prompt) + estimate_tokens(prompt), out) or 0.0

    async def stream(
        self,
        prompt: str,
        system_prompt: str,
        *,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamItem]:
        held: list[AdaptiveLimiter] = []
        ok = False
        estimate = 0.0
        reserved = False
        try:
            for lim in self.limiters:
                await lim.acquire()
                held.append(lim)
            estimate = self.estimate_cost(prompt, system_prompt, max_tokens)
            if not self.budget.try_reserve(estimate):
                self.stats.refused_for_budget += 1
                raise ProviderError(
                    "quota",
                    f"{BUDGET_ERROR_PREFIX} of ${self.budget.limit_usd:.2f} reached "
                    f"(spent ${self.budget.spent_usd:.4f})",
                )
            reserved = True
            self.stats.in_flight += 1
            self.stats.calls[self.name] += 1
            self._on_change()
            actual: float | None = None
            try:
                agen = self.inner.stream(prompt, system_prompt, json_schema=json_schema, max_tokens=max_tokens)
                try:
                    async for item in agen:
                        if isinstance(item, Retrying) and item.error.kind == "rate_limit" and self.provider_limiter:
                            self.provider_limiter.backoff(item.error.retry_after or item.delay_s)
                        elif isinstance(item, Completion):
                            usage = item.usage
                            actual = usage.cost_usd
                            if actual is None:
                                actual = self.info.cost(usage.input_tokens, usage.output_tokens)
                            self.stats.input_tokens += usage.input_tokens
                            self.stats.output_tokens += usage.output_tokens
                            self.stats.cost_usd += actual or 0.0
                        yield item
                finally:
                    await agen.aclose()
                ok = True
            except ProviderError as exc:
                if exc.kind == "rate_limit" and self.provider_limiter:
                    self.provider_limiter.backoff(exc.retry_after)
                raise
            finally:
                self.budget.settle(estimate, actual)
                reserved = False
                self.stats.in_flight -= 1
                self._on_change()
        finally:
            if reserved:
                self.budget.settle(estimate, None)
            for lim in reversed(held):
                lim.release(ok=ok)

    async def aclose(self) -> None:
        await self.inner.aclose()


def model_infos(
    names: Iterable[str], clients: Mapping[str, ModelClient], models_config: ModelsConfig | None
) -> dict[str, ModelInfo]:
    """Provider and prices per model: from models.toml when given, else from the clients' attributes."""
    out: dict[str, ModelInfo] = {}
    for name in names:
        cfg = models_config.models.get(name) if models_config is not None else None
        if cfg is not None:
            out[name] = ModelInfo(cfg.provider, cfg.price_in, cfg.price_out, cfg.max_tokens, cfg.max_concurrency)
            continue
        client = clients.get(name)
        inner = getattr(client, "inner", client)
        out[name] = ModelInfo(
            getattr(client, "provider", "unknown"),
            getattr(inner, "price_in", None),
            getattr(inner, "price_out", None),
            getattr(inner, "max_tokens", None),
            getattr(client, "max_concurrency", None),
        )
    return out


# ---------------------------------------------------------------------------------------------------------
# dry run
# ---------------------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------
# summary (simple means; ebtui.core.analysis has the full statistics)
# ---------------------------------------------------------------------------------------------------------
def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


@dataclass
class TournamentSummary:
    """Mean scores (1-10, the seven criteria averaged; human overrides applied) and how many went in."""

    rounds: int
    scored_rounds: int
    missing_scores: int
    by_model: dict[str, tuple[float | None, int]]
    by_model_criterion: dict[str, dict[str, float | None]]
    by_model_role: dict[tuple[str, str], tuple[float | None, int]]
    by_dilemma: dict[str, tuple[float | None, int]]
    #: (team A model, team B model) -> (A's mean, B's mean, rounds)
    matrix: dict[tuple[str, str], tuple[float | None, float | None, int]]
    #: judge -> mean score it gave
    by_judge: dict[str, tuple[float | None, int]]

    def format(self) -> str:
        def f(x: float | None) -> str:
            return "  -  " if x is None else f"{x:5.2f}"

        models = sorted(self.by_model)
        lines = [
            f"Tournament summary: {self.rounds} rounds, {self.scored_rounds} with a judgment; "
            f"{self.missing_scores} score(s) missing (left out, never defaulted). Means of the seven criteria, "
            "1-10, human overrides applied.",
            "",
            "By model (both roles):",
        ]
        w = max([len(m) for m in models] + [8])
        for m in sorted(models, key=lambda m: -(self.by_model[m][0] or 0)):
            mean, n = self.by_model[m]
            lines.append(f"  {m:<{w}}  {f(mean)}  (n={n})")
        lines += ["", "By model and role:", f"  {'model':<{w}}  presenting  responding"]
        for m in models:
            pa = self.by_model_role.get((m, "presenting"), (None, 0))
            rb = self.by_model_role.get((m, "responding"), (None, 0))
            lines.append(f"  {m:<{w}}  {f(pa[0])} n={pa[1]:<3} {f(rb[0])} n={rb[1]}")
        lines += ["", "By criterion:", "  " + " " * w + "  " + " ".join(c[:6].rjust(6) for c in CRITERIA)]
        for m in models:
            row = self.by_model_criterion.get(m, {})
            lines.append(f"  {m:<{w}}  " + " ".join(f(row.get(c)).rjust(6) for c in CRITERIA))
        lines += ["", "By dilemma:"]
        dw = max([len(d) for d in self.by_dilemma] + [8])
        for d in sorted(self.by_dilemma, key=lambda d: self.by_dilemma[d][0] or 0):
            mean, n = self.by_dilemma[d]
            lines.append(f"  {d:<{dw}}  {f(mean)}  (n={n})")
        if self.by_judge:
            lines += ["", "Mean score given, by judge:"]
            for j in sorted(self.by_judge):
                mean, n = self.by_judge[j]
                lines.append(f"  {j:<{w}}  {f(mean)}  (n={n})")
        lines += ["", "Cross-model matrix (row = Team A, column = Team B; cell = A's mean / B's mean):"]
        cw = max(w, 13)
        lines.append("  " + " " * w + "  " + " ".join(m[:cw].rjust(cw) for m in models))
        for a in models:
            cells = []
            for b in models:
                sa, sb, n = self.matrix.get((a, b), (None, None, 0))
                cells.append(("-" if not n else f"{f(sa).strip()}/{f(sb).strip()}").rjust(cw))
            lines.append(f"  {a:<{w}}  " + " ".join(cells))
        return "\n".join(lines)


def summarize_rounds(rounds: Iterable[Round]) -> TournamentSummary:
    rounds = list(rounds)
    by_model: dict[str, list[float]] = defaultdict(list)
    by_crit: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    by_role: dict[tuple[str, str], list[float]] = defaultdict(list)
    by_dilemma: dict[str, list[float]] = defaultdict(list)
    by_judge: dict[str, list[float]] = defaultdict(list)
    pair: dict[tuple[str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    counted: set[tuple[str, str]] = set()
    scored = 0
    missing = 0
    for r in rounds:
        j = r.judgment
        if j is None:
            continue
        scored += 1
        for team, model, role in (("a", r.team_a_model, "presenting"), ("b", r.team_b_model, "responding")):
            s = j.effective_scores(team)  # type: ignore[arg-type]
            missing += len(s.missing())
            mean = s.mean()
            for c, v in s.as_dict().items():
                if v is not None:
                    by_crit[model][c].append(v)
            if mean is None:
                continue
            by_model[model].append(mean)
            by_role[(model, role)].append(mean)
            by_dilemma[r.dilemma_id].append(mean)
            by_judge[r.judge_model].append(mean)
            pair[(r.team_a_model, r.team_b_model)][0 if team == "a" else 1].append(mean)
        counted.add((r.team_a_model, r.team_b_model))
    return TournamentSummary(
        rounds=len(rounds),
        scored_rounds=scored,
        missing_scores=missing,
        by_model={m: (_mean(v), len(v)) for m, v in by_model.items()},
        by_model_criterion={m: {c: _mean([float(x) for x in v]) for c, v in cs.items()} for m, cs in by_crit.items()},
        by_model_role={k: (_mean(v), len(v)) for k, v in by_role.items()},
        by_dilemma={d: (_mean(v), len(v)) for d, v in by_dilemma.items()},
        matrix={k: (_mean(a), _mean(b), max(len(a), len(b))) for k, (a, b) in pair.items()},
        by_judge={k: (_mean(v), len(v)) for k, v in by_judge.items()},
    )


# ---------------------------------------------------------------------------------------------------------
# progress events
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Progress:
    total: int  # rounds in the schedule
    done: int  # rounds complete (including those complete before this run)
    incomplete: int  # rounds that ended incomplete or failed in this run
    already_done: int  # complete before this run started (skipped)
    rounds_in_flight: int
    calls_in_flight: int
    input_tokens: int  # this run
    output_tokens: int
    cost_usd: float  # spent in the whole tournament (earlier runs included)
    elapsed_s: float
    eta_s: float | None
    budget_usd: float | None
    budget_stopped: bool

    @property
    def finished(self) -> int:
        return self.done + self.incomplete

    def describe(self) -> str:
        """One line for a progress display (the CLI's stderr line, the app's tournament screen)."""
        budget = f" of ${self.budget_usd:.2f}" if self.budget_usd is not None else ""
        failed = f" · {self.incomplete} not complete" if self.incomplete else ""
        earlier = f" ({self.already_done} from before)" if self.already_done else ""
        stop = " · budget reached: finishing calls in flight" if self.budget_stopped else ""
        return (
            f"{self.finished}/{self.total} rounds · {self.done} complete{earlier}{failed}"
            f" · {self.calls_in_flight} calls in flight"
            f" · {fmt_tokens(self.input_tokens)} in / {fmt_tokens(self.output_tokens)} out tokens"
            f" · ${self.cost_usd:.4f}{budget} · {fmt_duration(self.elapsed_s)} elapsed"
            f" · ETA {fmt_duration(self.eta_s)}{stop}"
        )


def fmt_duration(s: float | None) -> str:
    """12s, 3m05s, 1h02m; "?" when unknown."""
    if s is None:
        return "?"
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def fmt_tokens(n: int) -> str:
    """678, 12k, 1.2M."""
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{n / 1e3:.0f}k"
    return str(n)


@dataclass(frozen=True)
class TournamentStarted:
    tournament: Tournament
    progress: Progress


@dataclass(frozen=True)
class RoundCompleted:
    """A scheduled round ended this run (complete or not) and is saved."""

    round: Round
    scheduled: ScheduledRound
    progress: Progress


@dataclass(frozen=True)
class RoundNotRun:
    """A scheduled round could not run (e.g. its exchange's phases 1-4 did not complete); nothing saved."""

    scheduled: ScheduledRound
    reason: str
    progress: Progress


@dataclass(frozen=True)
class ProgressUpdated:
    progress: Progress


@dataclass(frozen=True)
class TournamentFinished:
    tournament: Tournament
    progress: Progress
    summary: TournamentSummary


TournamentEvent = TournamentStarted | RoundCompleted | RoundNotRun | ProgressUpdated | TournamentFinished


# ---------------------------------------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------------------------------------
class TournamentRunner:
    """Runs (or resumes) a tournament. `async for event in runner.run(): ...`; `runner.cancel()` stops it."""

    def __init__(
        self,
        config: TournamentConfig,
        clients: Mapping[str, ModelClient],
        store: ResultsStore,
        *,
        dilemmas: list[Dilemma],
        models_config: ModelsConfig | None = None,
        tournament_id: str | None = None,
        budget_usd: float | None = None,
        progress_interval_s: float = 0.5,
        write_behind: bool = True,
    ) -> None:
        self.config = config
        self.store = store
        #: where the round engine saves: the store itself, or a write-behind thread in front of it
        self.saver: Any = store
        self._write_behind = write_behind
        self.dilemmas = {d.id: d for d in dilemmas}
        self.schedule = make_schedule(config, dilemmas)
        self.tournament_id = tournament_id or config.tournament_id()
        names = config.all_model_names()
        missing = [n for n in names if n not in clients]
        if missing:
            raise ScheduleError(f"no client for model(s): {', '.join(missing)}")
        self.infos = model_infos(names, clients, models_config)
        self.budget = Budget(budget_usd if budget_usd is not None else config.budget_usd)
        self.stats = CallStats()
        self.progress_interval_s = progress_interval_s
        self.provider_limiters: dict[str, AdaptiveLimiter] = {}
        self.model_limiters: dict[str, AdaptiveLimiter] = {}
        self.clients: dict[str, ModelClient] = {}
        for name in names:
            info = self.infos[name]
            prov = self.provider_limiters.get(info.provider)
            if prov is None:
                prov = AdaptiveLimiter(f"provider:{info.provider}", config.limits.providers.get(info.provider))
                self.provider_limiters[info.provider] = prov
            lims: list[AdaptiveLimiter] = []
            # the model's own limit is taken here too, before the provider's slot: a call waiting for its
            # model inside the client would otherwise hold a provider slot other models could use
            own = [n for n in (config.limits.models.get(name), info.max_concurrency) if n]
            if own:
                self.model_limiters[name] = AdaptiveLimiter(f"model:{name}", min(own))
                lims.append(self.model_limiters[name])
            lims.append(prov)
            self.clients[name] = LimitedClient(
                clients[name], info=info, limiters=lims, provider_limiter=prov, budget=self.budget,
                stats=self.stats, expected_output_tokens=config.expected_output_tokens,
                on_change=self._changed,
            )
        self.tournament: Tournament | None = None
        self._cancelled = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._queue: asyncio.Queue[Any] | None = None
        self._start = 0.0
        self._done = 0
        self._incomplete = 0
        self._already = 0
        self._ran = 0
        self._rounds_in_flight = 0
        self._dirty = False

    # -- progress -----------------------------------------------------------------------------------
    def _changed(self) -> None:
        self._dirty = True

    def progress(self) -> Progress:
        elapsed = time.monotonic() - self._start if self._start else 0.0
        total = len(self.schedule)
        remaining = total - self._done - self._incomplete
        eta = None
        if self._ran and remaining > 0:
            eta = elapsed / self._ran * remaining
        elif remaining <= 0:
            eta = 0.0
        return Progress(
            total=total, done=self._done, incomplete=self._incomplete, already_done=self._already,
            rounds_in_flight=self._rounds_in_flight, calls_in_flight=self.stats.in_flight,
            input_tokens=self.stats.input_tokens, output_tokens=self.stats.output_tokens,
            cost_usd=self.budget.spent_usd, elapsed_s=elapsed, eta_s=eta,
            budget_usd=self.budget.limit_usd, budget_stopped=self.budget.stopped,
        )

    def _emit(self, event: Any) -> None:
        if self._queue is not None:
            self._queue.put_nowait(event)

    # -- control ------------------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop: no new call starts, rounds in flight are cancelled and saved as they stand."""
        self._cancelled = True
        for t in list(self._tasks):
            t.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def resume_hint(self, config_path: str | None = None, budget: float | None = None) -> str:
        cfg = config_path or (str(self.config.source) if self.config.source else "CONFIG")
        extra = f" --budget {budget:g}" if budget is not None else ""
        return f"ebtui tournament {cfg} --resume {self.tournament_id}{extra}"

    async def run(self) -> AsyncIterator[TournamentEvent]:
        self._queue = asyncio.Queue()
        done_marker = object()
        main = asyncio.create_task(self._run_all())
        main.add_done_callback(lambda _t: self._queue.put_nowait(done_marker) if self._queue else None)
        try:
            while True:
                try:
                    ev = await asyncio.wait_for(self._queue.get(), self.progress_interval_s)
                except TimeoutError:
                    yield ProgressUpdated(self.progress())
                    continue
                if ev is done_marker:
                    break
                yield ev
            main.result()  # re-raise a crash of the runner itself
        finally:
            if not main.done():  # the consumer stopped early: stop the rounds, let the runner save
                self.cancel()
                try:
                    await asyncio.wait_for(asyncio.shield(main), 30)
                except BaseException:  # noqa: BLE001 - already stopping; cut it short
                    main.cancel()

    async def run_to_end(self, on_event: Callable[[TournamentEvent], None] | None = None) -> Tournament:
        async for ev in self.run():
            if on_event is not None:
                on_event(ev)
        assert self.tournament is not None
        return self.tournament

    # -- internals -----------------------------------------------------------------------------------
    def _existing(self, rid: str) -> Round | None:
        from ebtui.core.store import StoreError

        try:
            if not self.store.round_path(rid).exists():
                return None
            return self.store.load_round(rid)
        except StoreError as exc:  # unreadable: run it again, overwriting the file
            log.warning("round %s: unreadable, running it again: %s", rid, exc)
            return None

    def _tournament_record(self) -> Tournament:
        from ebtui.core.store import StoreError

        prior: Tournament | None = None
        try:
            prior = next((t for t in self.store.list_tournaments() if t.id == self.tournament_id), None)
        except StoreError:
            prior = None
        cfg = self.config.model_dump(mode="json")
        cfg["source"] = str(self.config.source) if self.config.source else None
        t = Tournament(
            id=self.tournament_id,
            name=self.config.display_name(),
            models=self.config.all_model_names(),
            dilemmas=list(self.schedule.dilemma_ids),
            document=str(self.config.document_path() or ""),
            config=cfg,
            total_rounds=len(self.schedule),
        )
        if prior is not None:
            t.created = prior.created
        return t

    async def _run_all(self) -> None:
        lock = _TournamentLock(self.store.root / "tournaments" / f".{self.tournament_id}.lock")
        lock.acquire()  # raises TournamentBusyError when another process runs this tournament
        try:
            await self._run_locked()
        finally:
            lock.release()

    async def _run_locked(self) -> None:
        self._start = time.monotonic()
        self.tournament = self._tournament_record()
        self.tournament.status = TournamentStatus.RUNNING
        self.store.save_tournament(self.tournament)

        work: list[tuple[Exchange, dict[str, Round | None]]] = []
        spent = 0.0
        for ex in self.schedule.exchanges:
            existing: dict[str, Round | None] = {}
            for sr in ex.rounds:
                r = self._existing(sr.round_id(self.tournament_id))
                existing[sr.schedule_key] = r
                if r is not None:
                    spent += _cost(r)
                    if r.status == RoundStatus.COMPLETE:
                        self._done += 1
                        self._already += 1
            if any(r is None or r.status != RoundStatus.COMPLETE for r in existing.values()):
                work.append((ex, existing))
        self.budget.spent_usd = spent
        self._emit(TournamentStarted(self.tournament, self.progress()))

        sem = asyncio.Semaphore(self.config.concurrency)
        # the store's own writer thread (ebtui.core.store.BackgroundSaver): handed to the engine as the saver,
        # so a round's end does not wait for its write either; flushed below
        writer = self.store.background_saver() if self._write_behind and work else None
        errors_before = len(writer.errors) if writer is not None else 0
        self.saver = writer or self.store
        try:
            for ex, existing in work:
                task = asyncio.create_task(self._exchange(ex, existing, sem))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            if self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
        finally:
            if writer is not None:
                await asyncio.shield(asyncio.to_thread(writer.flush))
                self.saver = self.store
        failed = writer.errors[errors_before:] if writer is not None else []
        if failed:
            log.error("%d round save(s) failed; first: %s", len(failed), failed[0])

        rounds = [r for r in (self._existing(sr.round_id(self.tournament_id)) for sr in self.schedule.rounds) if r]
        complete = sum(1 for r in rounds if r.status == RoundStatus.COMPLETE)
        if self.budget.stopped:
            status = TournamentStatus.STOPPED_BUDGET
            self.tournament.note = (f"stopped at the budget of ${self.budget.limit_usd:.2f} "
                                    f"(spent ${self.budget.spent_usd:.4f}); resume with a larger --budget")
        elif complete == len(self.schedule):
            status = TournamentStatus.COMPLETE
            self.tournament.note = ""
        else:
            status = TournamentStatus.INCOMPLETE
            self.tournament.note = (f"{len(self.schedule) - complete} of {len(self.schedule)} rounds not complete"
                                    + (" (cancelled)" if self._cancelled else ""))
        self.tournament.status = status
        self.tournament.finished_at = utcnow()
        self.store.save_tournament(self.tournament)
        self._emit(TournamentFinished(self.tournament, self.progress(), summarize_rounds(rounds)))

    def _spec(self, sr: ScheduledRound) -> Any:
        from ebtui.core.round import RoundSpec

        doc = self.config.document_path()
        return RoundSpec(
            dilemma=self.dilemmas[sr.dilemma_id],
            team_a=sr.team_a,
            team_b=sr.team_b,
            judge=sr.judge,
            blind_judge=self.config.blind_judge,
            tournament_id=self.tournament_id,
            schedule_key=sr.schedule_key,
            round_id=sr.round_id(self.tournament_id),
            max_tokens=self.config.max_tokens,
            document=str(doc) if doc else "",
        )

    def _finished_round(self, sr: ScheduledRound, r: Round) -> None:
        self._ran += 1
        if r.status == RoundStatus.COMPLETE:
            self._done += 1
        else:
            self._incomplete += 1
        self._emit(RoundCompleted(r, sr, self.progress()))

    def _not_run(self, sr: ScheduledRound, reason: str) -> None:
        self._ran += 1
        self._incomplete += 1
        self._emit(RoundNotRun(sr, reason, self.progress()))

    def _stopping(self) -> bool:
        return self._cancelled or self.budget.stopped

    async def _exchange(self, ex: Exchange, existing: dict[str, Round | None], sem: asyncio.Semaphore) -> None:
        async with sem:
            if self._stopping():
                return
            self._rounds_in_flight += 1
            try:
                await self._play_exchange(ex, existing)
            finally:
                self._rounds_in_flight -= 1

    async def _play_exchange(self, ex: Exchange, existing: dict[str, Round | None]) -> None:
        """The primary round (phases 1-4 and its judge); a panel's other judges start as soon as
        phases 1-4 are in, alongside the primary judgment, so a panel adds one call to the critical path."""
        from ebtui.core.round import run_round

        primary, *panel = ex.rounds
        todo = [sr for sr in panel
                if (existing.get(sr.schedule_key) or _NOT_COMPLETE).status != RoundStatus.COMPLETE]
        judges: list[asyncio.Task[None]] = []

        def launch(source: Round) -> None:
            judges.extend(asyncio.create_task(self._panel_judge(source, sr)) for sr in todo)

        source = existing.get(primary.schedule_key)
        try:
            if source is None or source.status != RoundStatus.COMPLETE:
                result: Round | None = None
                spec = self._spec(primary)
                seen: dict[PhaseType, Any] = {}
                try:
                    async for ev in run_round(spec, self.clients, self.saver, resume=source):
                        if isinstance(ev, RoundFinished):
                            result = ev.round
                        elif todo and not judges and isinstance(ev, PhaseFinished):
                            seen[ev.phase.phase_type] = ev.phase
                            if all(pt in seen for pt in _EXCHANGE_PHASES):
                                launch(self._exchange_snapshot(spec, ev.round_id, seen))
                    if result is None:
                        self._not_run(primary, "the round engine ended without a result")
                    else:
                        self._finished_round(primary, result)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a bug or a store error in one round never stops the tournament
                    log.exception("round %s failed", primary.schedule_key)
                    self._not_run(primary, f"error: {exc}")
                    result = None
                source = result
            if todo and not judges:
                if source is not None and _exchange_ready(source):
                    launch(source)
                else:
                    for sr in todo:
                        self._not_run(sr, "phases 1-4 of its exchange did not complete")
            if judges:
                await asyncio.gather(*judges)
        finally:
            for t in judges:
                if not t.done():
                    t.cancel()

    def _exchange_snapshot(self, spec: Any, round_id: str, phases: dict[PhaseType, Any]) -> Round:
        """The exchange so far (phases 1-4), as judge_exchange needs it, before the primary round ends."""
        from ebtui.core.round import new_round

        snapshot = new_round(spec)
        snapshot.id = snapshot.exchange_id = round_id
        snapshot.tournament_id = self.tournament_id
        snapshot.phases = [phases[pt].model_copy(deep=True) for pt in _EXCHANGE_PHASES]
        return snapshot

    async def _panel_judge(self, source: Round, sr: ScheduledRound) -> None:
        import inspect

        from ebtui.core.round import judge_exchange

        if self._stopping():
            return
        rid = sr.round_id(self.tournament_id)
        kwargs: dict[str, Any] = {
            "blind_judge": self.config.blind_judge,
            "tournament_id": self.tournament_id,
            "schedule_key": sr.schedule_key,
            "dilemma": self.dilemmas[sr.dilemma_id],
        }
        saver: Any = self.saver
        if "round_id" in inspect.signature(judge_exchange).parameters:
            kwargs["round_id"] = rid
        else:  # pin the deterministic id, so a re-run overwrites this judgment instead of duplicating it
            saver = _IdPinningSaver(self.saver, rid)
        result: Round | None = None
        try:
            async for ev in judge_exchange(source, sr.judge, self.clients[sr.judge], saver, **kwargs):
                if isinstance(ev, RoundFinished):
                    result = ev.round
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("panel judgment %s failed", sr.schedule_key)
            self._not_run(sr, f"error: {exc}")
            return
        if result is None:
            self._not_run(sr, "the round engine ended without a result")
            return
        result.id = rid
        self._finished_round(sr, result)


class _IdPinningSaver:
    """Saves a round under a fixed id (the schedule's), whatever id the engine gave it."""

    def __init__(self, store: Any, round_id: str) -> None:
        self.store = store
        self.round_id = round_id

    def save_round(self, round_: Round) -> Any:
        round_.id = self.round_id
        return self.store.save_round(round_)


class _NotComplete:
    status = RoundStatus.INCOMPLETE


_NOT_COMPLETE = _NotComplete()


_EXCHANGE_PHASES = tuple(pt for pt in PHASE_ORDER if pt != PhaseType.JUDGMENT)


def _exchange_ready(r: Round) -> bool:
    """Phases 1-4 complete: a panel judge can score the exchange."""
    for pt in PHASE_ORDER:
        if pt == PhaseType.JUDGMENT:
            continue
        p = r.phase(pt)
        if p is None or p.status != PhaseStatus.COMPLETE:
            return False
    return True


def _cost(r: Round) -> float:
    return r.total_usage().cost_usd or 0.0
