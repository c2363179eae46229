"""The batch clients with the real SDKs over HTTP against llmock 0.2.2 (OpenAI files+batches, Anthropic
message batches); Gemini's batch mode against a recorded exchange (llmock's Gemini route expects another
body than google-genai sends)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ebtui.config import parse_model
from ebtui.providers.base import Completion, ProviderError
from ebtui.providers.batch import BatchRequest, batch_client, supports_batch
from ebtui.providers.batch.anthropic_batch import AnthropicBatchClient
from ebtui.providers.batch.openai_batch import OpenAIBatchClient
from tests.support.paths import DATA


@pytest.fixture(autouse=True)
def _quick_llmock_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """llmock's batches are ready 3 s after creation; 0.5 s here (its server runs in this process)."""
    from llmock.routers import batch as llmock_batch

    monkeypatch.setattr(llmock_batch, "_BATCH_DELAY", 0.5)


FAMILIES = {
    "openai": ("openai", "openai", "gpt-4o-mini"),
    "anthropic": ("anthropic", "anthropic", "claude-sonnet-4-6"),
}

REQS = [
    BatchRequest("item-1", "You are terse.", "First question about the ferry dilemma?", max_tokens=400),
    BatchRequest("item-2", "You are terse.", "Second, different question about lighthouses?", max_tokens=400),
]


def _cfg(llmock: Any, family: str, monkeypatch: pytest.MonkeyPatch, **extra: Any):
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-batch")
    provider, route, model = FAMILIES[family]
    return parse_model(f"{family}-b", {"provider": provider, "model": model, "base_url": llmock.base_url(route),
                                       "api_key_env": "EBTUI_TEST_KEY", "price_in": 2.0, "price_out": 8.0,
                                       **extra}, None)


async def _run(client, reqs=REQS):
    bid = await client.submit(reqs, label="test-wave")
    first = await client.poll(bid)
    state = first
    for _ in range(40):
        if state.ended:
            break
        await asyncio.sleep(0.25)
        state = await client.poll(bid)
    assert state.ended and state.status == "done", state
    return bid, first, state, await client.results(bid)


@pytest.mark.parametrize("family", ["openai", "anthropic"])
async def test_batch_round_trip(family: str, llmock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _cfg(llmock, family, monkeypatch)
    client = batch_client(cfg)
    assert isinstance(client, OpenAIBatchClient if family == "openai" else AnthropicBatchClient)
    try:
        bid, first, state, res = await _run(client)
    finally:
        await client.aclose()
    assert not first.ended  # llmock makes every batch wait 3 s
    assert set(res.items) == {"item-1", "item-2"}
    texts = set()
    for _cid, item in res.items.items():
        assert isinstance(item, Completion), item
        assert item.text.strip()
        texts.add(item.text)
        u = item.usage
        assert u.batch and u.input_tokens > 0 and u.output_tokens > 0
        # half the list price, computed from the item's own tokens
        assert u.cost_usd == pytest.approx((u.input_tokens * 2.0 + u.output_tokens * 8.0) / 1e6 * 0.5)
    assert len(texts) == 2  # each item its own answer
    paths = [r.path for r in llmock.requests]
    if family == "openai":
        assert any(p.endswith("/v1/files") for p in paths) and any(p.endswith("/v1/batches") for p in paths)
        # the uploaded JSONL carries what the streaming client would send, without stream
        upload = next(r for r in llmock.requests if r.path.endswith("/v1/files"))
        assert upload is not None
    else:
        assert any(p.endswith("/v1/messages/batches") for p in paths)
        assert any(p.endswith(f"/v1/messages/batches/{bid}/results") for p in paths)
    assert not any(p.endswith("/chat/completions") or p.endswith("/v1/messages") for p in paths)


def test_openai_line_errors_are_errors_never_content(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-batch")
    cfg = parse_model("o", {"provider": "openai", "model": "gpt-4o-mini", "api_key_env": "EBTUI_TEST_KEY",
                            "base_url": "http://127.0.0.1:9/v1"}, None)
    c = OpenAIBatchClient(cfg)
    ok = {"custom_id": "a", "response": {"status_code": 200, "body": {"choices": [
        {"index": 0, "message": {"content": "fine answer"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 64}}}}}
    cut = json.loads(json.dumps(ok))
    cut["response"]["body"]["choices"][0]["finish_reason"] = "length"
    empty = json.loads(json.dumps(ok))
    empty["response"]["body"]["choices"][0]["message"]["content"] = "  "
    limited = {"custom_id": "d", "response": {"status_code": 429, "body": {"error": {"message": "slow down"}}}}
    refused = json.loads(json.dumps(ok))
    refused["response"]["body"]["choices"][0]["message"] = {"content": None, "refusal": "I can't"}
    good = c.item(ok)
    assert isinstance(good, Completion) and good.usage.cached_tokens == 64
    kinds = [c.item(x).kind for x in (cut, empty, limited, refused)]
    assert kinds == ["truncated", "empty", "rate_limit", "refusal"]


def test_anthropic_item_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-batch")
    cfg = parse_model("a", {"provider": "anthropic", "model": "claude-sonnet-4-6", "api_key_env": "EBTUI_TEST_KEY",
                            "price_in": 3.0, "price_out": 15.0}, None)
    c = AnthropicBatchClient(cfg)
    ok = c.item({"type": "succeeded", "message": {"content": [{"type": "text", "text": "an answer"}],
                                                  "stop_reason": "end_turn",
                                                  "usage": {"input_tokens": 50, "cache_read_input_tokens": 1000,
                                                            "cache_creation_input_tokens": 0, "output_tokens": 10}}})
    assert isinstance(ok, Completion)
    assert (ok.usage.input_tokens, ok.usage.cached_tokens) == (1050, 1000)
    # cache reads at a tenth of the input price, then the batch's half
    assert ok.usage.cost_usd == pytest.approx((50 * 3.0 + 1000 * 0.3 + 10 * 15.0) / 1e6 * 0.5)
    assert c.item({"type": "expired"}).kind == "timeout"
    assert c.item({"type": "canceled"}).retryable
    err = c.item({"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error",
                                                                         "message": "bad"}}})
    assert isinstance(err, ProviderError) and err.kind == "bad_request" and not err.retryable
    cut = c.item({"type": "succeeded", "message": {"content": [{"type": "text", "text": "half"}],
                                                   "stop_reason": "max_tokens", "usage": {}}})
    assert isinstance(cut, ProviderError) and cut.kind == "truncated"


def test_which_models_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    def cfg(provider: str, **kw: Any):
        return parse_model("m", {"provider": provider, "model": "x", **kw}, None)

    assert supports_batch(cfg("openai")) and supports_batch(cfg("anthropic")) and supports_batch(cfg("google"))
    assert supports_batch(cfg("together"))
    assert not supports_batch(cfg("ollama")) and not supports_batch(cfg("openrouter"))
    assert supports_batch(cfg("vllm", batch=True))
    assert not supports_batch(cfg("openai", batch=False))
    assert not supports_batch(parse_model("scripted", {}, None))


async def test_gemini_batch_mode_against_a_recorded_exchange(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    from ebtui.providers.batch.google_batch import GoogleBatchClient

    exchange = json.loads((DATA / "gemini_batch_exchange.json").read_text())
    seen: list[httpx.Request] = []
    polls = iter([exchange["running"], exchange["succeeded"], exchange["succeeded"]])

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "POST" and request.url.path.endswith("models/gemini-2.5-flash:batchGenerateContent"):
            return httpx.Response(200, json=exchange["create"])
        if request.method == "GET" and request.url.path.endswith("batches/ebtui-test-123"):
            return httpx.Response(200, json=next(polls))
        return httpx.Response(404, json={"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}})

    monkeypatch.setenv("EBTUI_TEST_KEY", "gm-test-batch")
    cfg = parse_model("gem", {"provider": "google", "model": "gemini-2.5-flash", "api_key_env": "EBTUI_TEST_KEY",
                              "price_in": 0.3, "price_out": 2.5, "max_tokens": 400}, None)
    client = GoogleBatchClient(cfg, http_options={
        "httpx_async_client": httpx.AsyncClient(transport=httpx.MockTransport(handler))})
    reqs = [BatchRequest("item-1", "Be careful.", "Question one?", max_tokens=400),
            BatchRequest("item-2", "Be careful.", "Question two?", max_tokens=400),
            BatchRequest("item-3", "Be careful.", "Question three?", max_tokens=400)]
    bid = await client.submit(reqs, label="ebtui-T-gem-w1")
    assert bid == "batches/ebtui-test-123"
    body = json.loads(seen[0].content)
    inlined = body["batch"]["inputConfig"]["requests"]["requests"]
    assert [r["metadata"]["key"] for r in inlined] == ["item-1", "item-2", "item-3"]
    assert inlined[0]["request"]["contents"][0]["parts"][0]["text"] == "Question one?"
    assert inlined[0]["request"]["systemInstruction"]["parts"][0]["text"] == "Be careful."
    assert inlined[0]["request"]["generationConfig"]["maxOutputTokens"] == 400
    assert (await client.poll(bid)).status == "in_progress"
    state = await client.poll(bid)
    assert state.status == "done" and state.ended
    res = await client.results(bid)
    ok, cut, failed = res.items["item-1"], res.items["item-2"], res.items["item-3"]
    assert isinstance(ok, Completion) and ok.text == "A considered answer."
    assert (ok.usage.input_tokens, ok.usage.cached_tokens, ok.usage.output_tokens) == (2400, 2048, 120)
    # cached input at a quarter of the input price (Gemini's implicit cache), then the batch's half
    assert ok.usage.cost_usd == pytest.approx((352 * 0.3 + 2048 * 0.075 + 120 * 2.5) / 1e6 * 0.5)
    assert isinstance(cut, ProviderError) and cut.kind == "truncated"  # matched by key, not by position
    assert isinstance(failed, ProviderError) and failed.kind == "server" and failed.retryable


def test_minimum_cacheable_prefix_per_model() -> None:
    from ebtui.core.batch.estimate import min_cacheable_tokens

    assert min_cacheable_tokens("openai", "gpt-5-mini") == 1024
    assert min_cacheable_tokens("anthropic", "claude-sonnet-4-5") == 1024
    assert min_cacheable_tokens("anthropic", "claude-sonnet-4-6") == 2048
    assert min_cacheable_tokens("anthropic", "claude-haiku-4-5") == 4096
    assert min_cacheable_tokens("google", "gemini-2.5-flash") == 2048
    assert min_cacheable_tokens("google", "gemini-3-pro") == 4096
