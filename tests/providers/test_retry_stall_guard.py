"""The retry wrapper's stall guard: one timer per call; only the wait for the next item counts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ebtui.providers.base import Completion, Delta, ModelClient, ProviderError, StreamItem, Usage
from ebtui.providers.retry import RetryingClient, RetryPolicy


class Paced(ModelClient):
    """Yields `pieces` with `gaps[i]` seconds of silence before piece i (then the completion)."""

    provider = "test"
    supports_json_schema = False

    def __init__(self, pieces: list[str], gaps: list[float]) -> None:
        self.name = self.model = "paced"
        self.pieces, self.gaps = pieces, gaps
        self.calls = 0

    async def stream(self, prompt: str, system_prompt: str, **kw: Any) -> AsyncIterator[StreamItem]:
        self.calls += 1
        for piece, gap in zip(self.pieces, self.gaps, strict=True):
            if gap:
                await asyncio.sleep(gap)
            yield Delta(piece)
        yield Completion(text="".join(self.pieces), finish_reason="stop", usage=Usage())


def _client(inner: ModelClient, stall: float) -> RetryingClient:
    return RetryingClient(inner, RetryPolicy(attempts=1, stall_timeout_s=stall, backoff_s=0.0))


async def test_steady_items_each_within_the_timeout_never_stall() -> None:
    # 12 gaps of 0.03 s under a 0.2 s timeout: 0.36 s in all, well past one timeout — the timer re-arms
    inner = Paced([f"w{i} " for i in range(12)], [0.03] * 12)
    out = await _client(inner, 0.2).generate("p", "s")
    assert out.text == "".join(f"w{i} " for i in range(12)) and inner.calls == 1


async def test_a_slow_consumer_is_not_a_stalled_model() -> None:
    inner = Paced(["a ", "b ", "c"], [0.0, 0.0, 0.0])
    got: list[str] = []
    async for item in _client(inner, 0.1).stream("p", "s"):
        if isinstance(item, Delta):
            got.append(item.text)
            await asyncio.sleep(0.25)  # the consumer is slow: not counted against the model
    assert got == ["a ", "b ", "c"]


async def test_silence_mid_stream_is_a_stall_with_the_partial_text() -> None:
    inner = Paced(["one ", "two ", "three"], [0.0, 0.0, 0.5])
    with pytest.raises(ProviderError) as info:
        await _client(inner, 0.08).generate("p", "s")
    assert info.value.kind == "stall" and info.value.partial_text == "one two "


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    inner = Paced(["one ", "two"], [0.0, 5.0])
    client = _client(inner, 10.0)
    task = asyncio.create_task(client.generate("p", "s"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_no_timer_is_left_behind() -> None:
    loop = asyncio.get_running_loop()
    before = len(loop._scheduled)  # type: ignore[attr-defined]
    inner = Paced(["a ", "b"], [0.0, 0.01])
    await _client(inner, 30.0).generate("p", "s")
    live = [h for h in loop._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
    assert len(live) <= before
