"""The retry wrapper on its own, driven by the scripted model (no network)."""

from __future__ import annotations

import random

import pytest

from ebtui.config import parse_model
from ebtui.providers.base import Completion, Delta, ProviderError, Retrying
from ebtui.providers.errors import from_status, parse_retry_after
from ebtui.providers.registry import build_client
from ebtui.providers.retry import RetryingClient, RetryPolicy
from ebtui.providers.scripted import ScriptedClient, ScriptedFault


def wrap(inner: ScriptedClient, **kw: float) -> RetryingClient:
    return RetryingClient(inner, RetryPolicy(**{"backoff_s": 0.01, **kw}))


async def items_of(client: RetryingClient, prompt: str = "p", **kw: object) -> list[object]:
    return [i async for i in client.stream(prompt, "s", **kw)]


def test_backoff_grows_with_jitter() -> None:
    policy = RetryPolicy(attempts=5, backoff_s=1.0, backoff_max_s=30, rng=random.Random(1))
    err = ProviderError("server", "x")
    delays = [policy.delay(n, err) for n in (1, 2, 3, 4)]
    assert all(d is not None for d in delays)
    assert 0.75 <= delays[0] <= 1.0 and 1.5 <= delays[1] <= 2.0 and 3.0 <= delays[2] <= 4.0
    assert all(b > a * 1.1 for a, b in zip(delays, delays[1:], strict=False))  # never looks like a constant interval
    assert policy.delay(5, err) is None  # out of attempts


@pytest.mark.parametrize("kind", ["auth", "bad_request", "context_overflow", "quota", "refusal", "truncated",
                                  "config", "unavailable"])
def test_never_retried(kind: str) -> None:
    assert RetryPolicy().delay(1, ProviderError(kind, "x")) is None  # type: ignore[arg-type]


def test_retry_after_honoured_and_capped() -> None:
    policy = RetryPolicy(retry_after_max_s=10)
    assert policy.delay(1, ProviderError("rate_limit", "x", retry_after=4.0)) == 4.0
    assert policy.delay(1, ProviderError("rate_limit", "x", retry_after=11.0)) is None


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "1"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [(429, "Rate limit exceeded.", "rate_limit"), (429, "insufficient_quota", "quota"),
     (408, "", "server"), (409, "", "server"), (500, "", "server"), (529, "", "server"),
     (401, "", "auth"), (403, "", "auth"), (404, "", "bad_request"), (422, "", "bad_request"),
     (400, "prompt is too long: 210000 tokens > 200000 maximum", "context_overflow"), (413, "", "context_overflow")],
)
def test_status_classification(status: int, message: str, kind: str) -> None:
    assert from_status("m", status, message).kind == kind


async def test_mid_stream_failure_restarts_and_discards_partial_text() -> None:
    inner = ScriptedClient("s", faults=[ScriptedFault(kind="stream", after_tokens=3)])
    items = await items_of(wrap(inner))
    retry = next(i for i in items if isinstance(i, Retrying))
    assert retry.attempt == 2 and retry.error.partial_text
    first_deltas = items[: items.index(retry)]
    assert len(first_deltas) == 3 and all(isinstance(d, Delta) for d in first_deltas)
    done = items[-1]
    assert isinstance(done, Completion) and done.attempts == 2
    assert done.text == "".join(i.text for i in items[items.index(retry) + 1:] if isinstance(i, Delta))


async def test_gives_up_after_three_attempts() -> None:
    inner = ScriptedClient("s", faults=[ScriptedFault(kind="server", times=10)])
    with pytest.raises(ProviderError) as info:
        await wrap(inner).generate("p", "s")
    assert info.value.attempts == 3 and inner.calls == 3 and "gave up after 3 attempts" in str(info.value)


async def test_truncation_is_an_error_and_not_retried() -> None:
    inner = ScriptedClient("s")
    with pytest.raises(ProviderError) as info:
        await wrap(inner).generate("p", "s", max_tokens=5)
    assert info.value.kind == "truncated" and inner.calls == 1 and info.value.partial_text


async def test_stall_is_detected_and_retried() -> None:
    inner = ScriptedClient("s", latency_s=0.3)
    client = wrap(inner, stall_timeout_s=0.05, attempts=2)
    with pytest.raises(ProviderError) as info:
        await client.generate("p", "s")
    assert info.value.kind == "stall" and inner.calls == 2


async def test_concurrency_limit(tmp_path: object) -> None:
    import asyncio

    cfg = parse_model("s", {"provider": "scripted", "latency_s": 0.05, "max_concurrency": 2}, None)
    client = build_client(cfg)
    inner = client.inner  # type: ignore[attr-defined]
    running = peak = 0
    original = inner.stream

    async def counting(*a: object, **k: object):  # type: ignore[no-untyped-def]
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        try:
            async for item in original(*a, **k):
                yield item
        finally:
            running -= 1

    inner.stream = counting
    await asyncio.gather(*(client.generate(f"p{i}", "s") for i in range(6)))
    assert peak == 2
