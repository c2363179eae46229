"""Tournament concurrency, in one place: the adaptive per-provider and per-model limiters, and the client
wrapper that holds them per call (with the budget check); `build_limited_clients` makes them. Inside a
tournament the model's limit is taken over from the provider layer (the wrapper wraps the client's
`unlimited()` twin), so a call is limited in one layer only (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Unpack

from ebtui.core.tournament.config import TournamentConfig
from ebtui.core.tournament.costs import DEFAULT_OUTPUT_TOKENS, Budget, ModelInfo, estimate_tokens
from ebtui.core.views import numbers as num
from ebtui.providers.base import (
    CallOptions,
    Completion,
    ModelClient,
    ProviderError,
    Retrying,
    StreamItem,
    WrappingClient,
)

__all__ = [
    "AdaptiveLimiter",
    "BUDGET_ERROR_PREFIX",
    "CallStats",
    "LimitedClient",
]

BUDGET_ERROR_PREFIX = "not started: tournament budget"


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
class CallStats:
    in_flight: int = 0
    calls: Counter[str] = field(default_factory=Counter)  # started calls per model
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    refused_for_budget: int = 0


class LimitedClient(WrappingClient):
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
        halted: Callable[[], str | None] | None = None,
    ) -> None:
        super().__init__(inner, provider=info.provider)
        #: asked before each call: a reason not to start it (the store failed a save)
        self.halted = halted
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
        self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[StreamItem]:
        held: list[AdaptiveLimiter] = []
        ok = False
        estimate = 0.0
        reserved = False
        try:
            for lim in self.limiters:
                await lim.acquire()
                held.append(lim)
            if self.halted is not None and (why := self.halted()):
                raise ProviderError("unavailable", f"not started: {why}")
            estimate = self.estimate_cost(prompt, system_prompt, options.get("max_tokens"))
            if not self.budget.try_reserve(estimate):
                self.stats.refused_for_budget += 1
                raise ProviderError(
                    "quota",
                    f"{BUDGET_ERROR_PREFIX} of ${num.fixed(self.budget.limit_usd)} reached "
                    f"(spent ${num.fixed(self.budget.spent_usd, 4)})",
                )
            reserved = True
            self.stats.in_flight += 1
            self.stats.calls[self.name] += 1
            self._on_change()
            actual: float | None = None
            try:
                agen = self.inner.stream(prompt, system_prompt, **options)
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
                    close = getattr(agen, "aclose", None)  # an async generator: end it now
                    if close is not None:
                        await close()
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



@dataclass
class LimitedClients:
    """The limiters of one tournament run and its wrapped clients."""

    clients: dict[str, ModelClient]
    provider_limiters: dict[str, AdaptiveLimiter]
    model_limiters: dict[str, AdaptiveLimiter]


def build_limited_clients(
    config: TournamentConfig,
    clients: Mapping[str, ModelClient],
    infos: Mapping[str, ModelInfo],
    *,
    budget: Budget,
    stats: CallStats,
    on_change: Callable[[], None] | None = None,
    halted: Callable[[], str | None] | None = None,
) -> LimitedClients:
    """Every model's client wrapped with its model limit (the smaller of the tournament's and
    models.toml's) and its provider's shared limit."""
    out = LimitedClients({}, {}, {})
    for name in config.all_model_names():
        info = infos[name]
        prov = out.provider_limiters.get(info.provider)
        if prov is None:
            prov = AdaptiveLimiter(f"provider:{info.provider}", config.limits.providers.get(info.provider))
            out.provider_limiters[info.provider] = prov
        lims: list[AdaptiveLimiter] = []
        # the model's own limit is taken here too, before the provider's slot: a call waiting for its
        # model inside the client would otherwise hold a provider slot other models could use
        own = [n for n in (config.limits.models.get(name), info.max_concurrency) if n]
        if own:
            out.model_limiters[name] = AdaptiveLimiter(f"model:{name}", min(own))
            lims.append(out.model_limiters[name])
        lims.append(prov)
        out.clients[name] = LimitedClient(
            clients[name].unlimited(), info=info, limiters=lims, provider_limiter=prov, budget=budget,
            stats=stats, expected_output_tokens=config.expected_output_tokens, on_change=on_change,
            halted=halted,
        )
    return out
