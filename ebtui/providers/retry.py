"""Retries, in one place, for every client: `RetryingClient` restarts a failed call (rate limits, 5xx,
connection errors, broken or stalled streams, an empty answer) with exponential backoff and jitter, honours
Retry-After, and never retries what would fail again (4xx, context overflow, exhausted quota, a refusal, a
max-tokens cut-off). A `Retrying` item tells the consumer to discard what it streamed.
The policy: docs/PROVIDERS.md, "Failures and retries".
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Unpack

from ebtui.providers.base import (
    RETRYABLE_KINDS,
    CallOptions,
    Completion,
    Delta,
    ModelClient,
    ProviderError,
    Retrying,
    StreamItem,
    WrappingClient,
)

RETRY_KINDS = RETRYABLE_KINDS


class RetryPolicy:
    def __init__(
        self,
        attempts: int = 3,
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        retry_after_max_s: float = 60.0,
        stall_timeout_s: float | None = 60.0,
        rng: random.Random | None = None,
    ) -> None:
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_max_s = retry_after_max_s
        self.stall_timeout_s = stall_timeout_s
        self._rng = rng or random.Random()

    def __repr__(self) -> str:
        return (f"RetryPolicy(attempts={self.attempts}, backoff_s={self.backoff_s}, "
                f"stall_timeout_s={self.stall_timeout_s})")

    def delay(self, failed_attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before the next attempt, or None when the error must not be retried."""
        if error.kind not in RETRY_KINDS or failed_attempt >= self.attempts:
            return None
        if error.retry_after is not None:
            if error.retry_after > self.retry_after_max_s:
                return None
            return max(0.0, error.retry_after)
        base = min(self.backoff_max_s, self.backoff_s * 2.0 ** (failed_attempt - 1))
        return base * (0.75 + 0.25 * self._rng.random())


class RetryingClient(WrappingClient):
    """Wraps any ModelClient: retries by the policy, detects stalls, limits concurrency."""

    def __init__(self, inner: ModelClient, policy: RetryPolicy, *, max_concurrency: int | None = None) -> None:
        super().__init__(inner)
        self.policy = policy
        self.max_concurrency = max_concurrency
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"RetryingClient({self.inner!r}, {self.policy!r})"

    def unlimited(self) -> RetryingClient:
        """The same model, retries and stall guard without this client's per-model semaphore (it shares the
        inner client: closing either closes both)."""
        if not self.max_concurrency:
            return self
        return RetryingClient(self.inner, self.policy)

    def _semaphore(self) -> asyncio.Semaphore | None:
        if not self.max_concurrency:
            return None
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem = asyncio.Semaphore(self.max_concurrency)
            self._sem_loop = loop
        return self._sem

    async def stream(
        self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[StreamItem]:
        attempt = 1
        while True:
            try:
                sem = self._semaphore()
                if sem is not None:
                    await sem.acquire()
                try:
                    # closed here, not whenever it is collected: the inner call ends before its slot is freed
                    attempt_items = self._one_attempt(prompt, system_prompt, options)
                    async with contextlib.aclosing(attempt_items):
                        async for item in attempt_items:
                            if isinstance(item, Completion):
                                yield item.model_copy(update={"attempts": attempt})
                                return
                            yield item
                finally:
                    if sem is not None:
                        sem.release()
                raise ProviderError("stream", f"{self.name}: stream ended without a completion")
            except ProviderError as error:
                error.attempts = attempt
                delay = self.policy.delay(attempt, error)
                if delay is None:
                    if error.retry_after is not None and error.retry_after > self.policy.retry_after_max_s:
                        error.message += (f" (server asked to retry after {error.retry_after:.0f}s, more than "
                                          f"retry_after_max_s={self.policy.retry_after_max_s:.0f}s)")
                    elif error.kind in RETRY_KINDS and attempt > 1:
                        error.message += f" (gave up after {attempt} attempts)"
                    raise
                attempt += 1
                yield Retrying(attempt=attempt, error=error, delay_s=delay)
                if delay:
                    await asyncio.sleep(delay)

    async def _one_attempt(
        self, prompt: str, system_prompt: str, options: CallOptions
    ) -> AsyncGenerator[StreamItem, None]:
        """The inner stream, with a stall guard: no item for `stall_timeout_s` is a `stall` error.

        Only the time spent waiting for the inner stream counts (not the consumer's time between items).
        The guard is one timer per call, not one per item (asyncio.wait_for would start a task per token)."""
        agen = self.inner.stream(prompt, system_prompt, **options)
        stall = self.policy.stall_timeout_s
        partial: list[str] = []
        guard = _StallGuard(stall) if stall else None
        try:
            while True:
                try:
                    if guard is not None:
                        guard.arm()
                        try:
                            item = await anext(agen)
                        finally:
                            guard.deadline = None
                    else:
                        item = await anext(agen)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if guard is None or not guard.expired():
                        raise
                    raise ProviderError(
                        "stall", f"{self.name}: no token for {stall:g}s", partial_text="".join(partial)
                    ) from None
                if isinstance(item, Delta):
                    partial.append(item.text)
                yield item
        finally:
            if guard is not None:
                guard.stop()
            if isinstance(agen, AsyncGenerator):  # every client's stream is one; close it here, not when collected
                await agen.aclose()



class _StallGuard:
    """A deadline for the wait on the next item, checked by one lazily re-armed timer.

    `arm()` before each wait sets the deadline (now + `timeout`); the wait's end clears it. The timer
    fires at the earliest deadline it knows; finding a later one (items kept coming) it re-arms for that,
    finding none (not waiting) it lapses until the next `arm()`; finding it passed, it cancels the waiting
    task, and `expired()` turns that cancellation into a stall (a cancellation from elsewhere stays one).
    """

    __slots__ = ("timeout", "deadline", "loop", "task", "handle", "fired", "cancelling")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.deadline: float | None = None
        self.loop = asyncio.get_running_loop()
        self.task: asyncio.Task[Any] | None = None
        self.handle: asyncio.TimerHandle | None = None
        self.fired = False
        self.cancelling = 0

    def arm(self) -> None:
        self.deadline = self.loop.time() + self.timeout
        self.task = asyncio.current_task()
        if self.handle is None:
            self.handle = self.loop.call_at(self.deadline, self._check)

    def _check(self) -> None:
        self.handle = None
        deadline, task = self.deadline, self.task
        if deadline is None or task is None or task.done():
            return
        if self.loop.time() < deadline:
            self.handle = self.loop.call_at(deadline, self._check)
            return
        self.fired = True
        self.cancelling = task.cancelling()
        task.cancel()

    def expired(self) -> bool:
        """True if the CancelledError being handled is this guard's own (and undo that cancellation)."""
        if not self.fired or self.task is None:
            return False
        self.fired = False
        return self.task.uncancel() <= self.cancelling

    def stop(self) -> None:
        self.deadline = None
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
