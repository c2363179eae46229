"""The fault matrix: every SDK family, every fault, over real HTTP against llmock.

Each fault ends either in a correct answer after retries or in a ProviderError of the right kind, and
llmock's verdict on the client's behaviour is clean even in strict mode (warnings fail too).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from llmock.scenarios import Reply

from ebtui.providers.base import Completion, Delta, ProviderError, Retrying
from ebtui.providers.registry import build_client

FAMILY_NAMES = ["openai", "anthropic", "google"]


async def collect(client: Any, prompt: str = "Say something about fairness.", **kw: Any) -> list[Any]:
    return [item async for item in client.stream(prompt, "You are terse.", **kw)]


def final_text(items: list[Any]) -> str:
    """What a consumer that honours Retrying ends up with: the text after the last restart."""
    text: list[str] = []
    for item in items:
        if isinstance(item, Retrying):
            text.clear()
        elif isinstance(item, Delta):
            text.append(item.text)
    return "".join(text)


# fault name -> (script it on the llmock handle, expected attempts[, config overrides])
RECOVERING: dict[str, tuple[Any, ...]] = {
    "rate_limit_retry_after": (lambda m: m.rate_limit(times=2, retry_after=0.3), 3),
    "fail_500": (lambda m: m.fail(500, times=1), 2),
    "fail_503": (lambda m: m.fail(503, times=2, retry_after=0.1), 3),
    "disconnect_mid_stream": (lambda m: m.disconnect(after_chunks=2), 2),
    "truncated_stream": (lambda m: m.truncate(after_chunks=2), 2),
    # paced like a real model: llmock keeps streaming after the corrupted chunk, and if it had sent every
    # chunk before we hung up it would count the attempt as a success and our retry as a new call
    "corrupt_chunk": (lambda m: m.corrupt(after_chunks=2).pace(40), 2),
    "stall": (lambda m: m.stall(after_chunks=2, seconds=4.0), 2),
    "slow_first_token": (lambda m: m.slow_first_token(0.5), 1),
    "empty_answer": (lambda m: m.reply("", times=1), 2),
}


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("fault", list(RECOVERING))
async def test_fault_recovers(family: str, fault: str, llmock: Any, make_cfg: Any) -> None:
    script, attempts, *overrides = RECOVERING[fault]
    client = build_client(make_cfg(family, **(overrides[0] if overrides else {})))
    script(llmock)
    started = time.perf_counter()
    items = await collect(client)
    elapsed = time.perf_counter() - started
    completion = items[-1]
    assert isinstance(completion, Completion)
    assert completion.attempts == attempts
    assert completion.text.strip()
    assert completion.text == final_text(items)  # partial text of failed attempts is discarded
    assert completion.usage.input_tokens > 0 and completion.usage.output_tokens > 0
    retries = [i for i in items if isinstance(i, Retrying)]
    assert [r.attempt for r in retries] == list(range(2, attempts + 1))
    if fault == "rate_limit_retry_after":
        assert all(r.error.kind == "rate_limit" and r.delay_s >= 0.3 for r in retries)
    if fault == "stall":
        assert retries[0].error.kind == "stall"
    if fault in ("truncated_stream", "corrupt_chunk", "disconnect_mid_stream"):
        assert retries[0].error.kind == "stream"
    if fault == "empty_answer":
        assert retries[0].error.kind == "empty"
    if fault == "slow_first_token":
        assert completion.first_token_s is not None and completion.first_token_s >= 0.5
    assert elapsed < 10
    await client.aclose()
    llmock.assert_resilient(strict=True)


# fault name -> (script, expected error kind, expected attempts)
FAILING: dict[str, tuple[Any, str, int]] = {
    "outage": (lambda m: m.fail(503, times=None, retry_after=0.1), "server", 3),
    "context_overflow": (lambda m: m.context_overflow(), "context_overflow", 1),
    "unauthorized_401": (lambda m: m.fail(401), "auth", 1),
    "forbidden_403": (lambda m: m.fail(403), "auth", 1),
    "bad_request_400": (lambda m: m.fail(400, message="Invalid parameter 'foo'."), "bad_request", 1),
    "not_found_404": (lambda m: m.fail(404), "bad_request", 1),
    "unprocessable_422": (lambda m: m.fail(422), "bad_request", 1),
    "quota_exhausted": (lambda m: m.fail(429, code="insufficient_quota",
                                         message="You exceeded your current quota, please check your plan "
                                                 "and billing details."), "quota", 1),
    "max_tokens_cutoff": (lambda m: m.add(Reply(text="A long answer that was cut", finish_reason="length")),
                          "truncated", 1),
    "refusal": (lambda m: m.add(Reply(text="I can't help with that.", finish_reason="content_filter")),
                "refusal", 1),
    "empty_every_time": (lambda m: m.reply("", times=None), "empty", 3),
}


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("fault", list(FAILING))
async def test_fault_fails_clearly(family: str, fault: str, llmock: Any, make_cfg: Any) -> None:
    script, kind, attempts = FAILING[fault]
    client = build_client(make_cfg(family))
    script(llmock)
    items: list[Any] = []
    with pytest.raises(ProviderError) as info:
        async for item in client.stream("Say something about fairness.", "You are terse."):
            items.append(item)
    err = info.value
    assert err.kind == kind, str(err)
    assert err.attempts == attempts
    assert not any(isinstance(i, Completion) for i in items)  # never an answer
    assert err.message.startswith(f"{family}-mock:")
    assert len(llmock.requests) == attempts
    await client.aclose()
    if kind == "quota":
        # llmock cannot tell an exhausted quota from a rate limit; not retrying it is the point
        assert {f.code for f in llmock.verdict().findings} == {"gave_up"}
    else:
        llmock.assert_resilient(strict=True)


@pytest.mark.parametrize("family", FAMILY_NAMES)
async def test_retry_after_beyond_cap_fails_at_once(family: str, llmock: Any, make_cfg: Any) -> None:
    client = build_client(make_cfg(family, retry_after_max_s=1.0))
    llmock.rate_limit(times=1, retry_after=30)
    started = time.perf_counter()
    with pytest.raises(ProviderError) as info:
        await client.generate("hello", "sys")
    assert time.perf_counter() - started < 2
    assert info.value.kind == "rate_limit" and "retry after 30s" in info.value.message
    # llmock would rather we had waited 30 s: its only remark is that we gave up, which is the point here
    assert {f.code for f in llmock.verdict().findings} <= {"gave_up"}


@pytest.mark.parametrize("family", FAMILY_NAMES)
async def test_structured_output_and_usage(family: str, llmock: Any, make_cfg: Any) -> None:
    client = build_client(make_cfg(family, price_in=2.0, price_out=10.0))
    schema = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 10},
                                               "why": {"type": "string"}}, "required": ["score", "why"]}
    completion = await client.generate("Score it.", "You are a judge.", json_schema=schema)
    assert client.supports_json_schema
    body = llmock.last_request.body if hasattr(llmock.last_request, "body") else None
    if family != "anthropic":  # llmock answers JSON for OpenAI's response_format and Gemini's schema
        import json

        value = json.loads(completion.text)
        assert isinstance(value["score"], int) and isinstance(value["why"], str)
    u = completion.usage
    assert u.cost_usd == pytest.approx((u.input_tokens * 2.0 + u.output_tokens * 10.0) / 1e6)
    assert completion.latency_s > 0 and completion.first_token_s is not None
    del body
    llmock.assert_resilient(strict=True)
