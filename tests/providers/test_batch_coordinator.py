"""The batch coordinator with the real SDKs against llmock: waves, the ledger written before polling,
resume without resubmission, per-item retries, errors never content, polling back-off."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from ebtui.config import parse_model
from ebtui.core.batch import BatchCoordinator, BatchLedger, BatchSettings, ledger_path
from ebtui.providers.base import Completion, ProviderError
from ebtui.providers.batch import BatchClient, BatchRequest, BatchResults, BatchState, batch_client
from ebtui.providers.openai_client import OpenAIClient

FAST = BatchSettings(poll_first_s=0.5, poll_max_s=1.0, gather_s=0.3)


@pytest.fixture(autouse=True)
def _quick_llmock_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """llmock's batches are ready 3 s after creation; 0.5 s here (its server runs in this process)."""
    from llmock.routers import batch as llmock_batch

    monkeypatch.setattr(llmock_batch, "_BATCH_DELAY", 0.5)


def _openai_cfg(llmock: Any, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-batch")
    return parse_model("gpt", {"provider": "openai", "model": "gpt-4o-mini", "base_url": llmock.base_url("openai"),
                               "api_key_env": "EBTUI_TEST_KEY", "price_in": 2.0, "price_out": 8.0}, None)


def _creations(llmock: Any) -> int:
    return sum(1 for r in llmock.requests if r.method == "POST" and r.path.endswith("/v1/batches"))


async def test_one_wave_one_batch_and_resume_without_resubmitting(llmock: Any, monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path) -> None:
    cfg = _openai_cfg(llmock, monkeypatch)
    prompts = [f"Question {i}: is the ferry captain right?" for i in range(5)]

    ledger = BatchLedger.open(tmp_path, "T1")
    coord = BatchCoordinator(ledger, {"gpt": batch_client(cfg)}, FAST)
    client = coord.client("gpt", OpenAIClient(cfg))
    tasks = [asyncio.create_task(client.generate(p, "sys")) for p in prompts]
    # the id is on disk before anything is polled: wait for it, then "kill" the run
    for _ in range(100):
        await asyncio.sleep(0.05)
        if ledger_path(tmp_path, "T1").exists() and json.loads(ledger_path(tmp_path, "T1").read_text())["batches"]:
            break
    data = json.loads(ledger_path(tmp_path, "T1").read_text())
    assert len(data["batches"]) == 1 and len(data["batches"][0]["items"]) == 5
    assert not any(r.method == "GET" and "/v1/batches/" in r.path for r in llmock.requests)  # not polled yet
    for t in tasks:
        t.cancel()
    await coord.aclose()

    # a new process: same prompts, a ledger read from disk
    ledger2 = BatchLedger.open(tmp_path, "T1")
    coord2 = BatchCoordinator(ledger2, {"gpt": batch_client(cfg)}, FAST)
    client2 = coord2.client("gpt", OpenAIClient(cfg))
    t0 = time.monotonic()
    answers = await asyncio.gather(*(client2.generate(p, "sys") for p in prompts))
    await coord2.aclose()
    assert _creations(llmock) == 1  # the wave was not submitted twice
    assert all(isinstance(a, Completion) and a.usage.batch for a in answers)
    assert time.monotonic() - t0 < 15
    # each round gets its own item's answer: the same text and tokens a streamed call gives, at half the cost
    stream = OpenAIClient(cfg)
    for p, a in zip(prompts, answers, strict=True):
        s = await stream.generate(p, "sys")
        assert (a.text, a.usage.input_tokens, a.usage.output_tokens) == (s.text, s.usage.input_tokens,
                                                                         s.usage.output_tokens)
        assert a.usage.cost_usd == pytest.approx(s.usage.cost_usd / 2)
    await stream.aclose()
    final = json.loads(ledger_path(tmp_path, "T1").read_text())
    assert {it["state"] for it in final["items"].values()} == {"consumed"}
    assert final["batches"][0]["status"] == "done"


class FlakyBatch(BatchClient):
    """A batch API whose first batch answers item 'bad' with an expiry and item 'refuse' with a refusal."""

    name = provider = model = "flaky"

    def __init__(self) -> None:
        self.batches: dict[str, list[BatchRequest]] = {}
        self.polls: list[float] = []

    async def submit(self, requests: list[BatchRequest], *, label: str) -> str:
        bid = f"b{len(self.batches)}"
        self.batches[bid] = list(requests)
        return bid

    async def poll(self, batch_id: str) -> BatchState:
        self.polls.append(time.monotonic())
        return BatchState(batch_id, "done" if len(self.polls) % 2 == 0 else "in_progress")

    async def results(self, batch_id: str) -> BatchResults:
        out = BatchResults()
        for r in self.batches[batch_id]:
            if "refuse" in r.prompt:
                out.items[r.custom_id] = ProviderError("refusal", "flaky: the model refused", partial_text="no")
            elif "bad" in r.prompt and batch_id == "b0":
                continue  # no result: expired
            else:
                from ebtui.providers.base import Usage

                out.items[r.custom_id] = Completion(text=f"answer to {r.prompt}", usage=Usage(input_tokens=3,
                                                                                               output_tokens=2))
        return out


async def test_failed_items_are_retried_as_items_and_errors_stay_errors(tmp_path) -> None:
    from ebtui.providers.scripted import ScriptedClient

    flaky = FlakyBatch()
    coord = BatchCoordinator(BatchLedger.open(tmp_path, "T2"), {"flaky": flaky},
                             BatchSettings(poll_first_s=0.05, poll_max_s=0.1, gather_s=0.05))
    client = coord.client("flaky", ScriptedClient(name="flaky"))
    good, bad, refuse = await asyncio.gather(client.generate("good", "s"), client.generate("bad", "s"),
                                             client.generate("refuse", "s"), return_exceptions=True)
    await coord.aclose()
    assert isinstance(good, Completion) and good.text == "answer to good"
    assert isinstance(bad, Completion) and bad.text == "answer to bad" and bad.attempts == 2
    assert isinstance(refuse, ProviderError) and refuse.kind == "refusal"  # not retried, not content
    # the retry was one item in a second batch, never the whole first batch again
    assert [len(v) for v in flaky.batches.values()] == [3, 1]
    assert flaky.batches["b1"][0].prompt == "bad"


async def test_polling_starts_soon_and_backs_off_to_the_cap(tmp_path) -> None:
    class Slow(FlakyBatch):
        async def poll(self, batch_id: str) -> BatchState:
            self.polls.append(time.monotonic())
            return BatchState(batch_id, "done" if len(self.polls) >= 6 else "in_progress")

    slow = Slow()
    from ebtui.providers.scripted import ScriptedClient

    coord = BatchCoordinator(BatchLedger.open(tmp_path, "T3"), {"flaky": slow},
                             BatchSettings(poll_first_s=0.1, poll_max_s=0.3, gather_s=0.05))
    t0 = time.monotonic()
    await coord.client("flaky", ScriptedClient(name="flaky")).generate("good", "s")
    await coord.aclose()
    gaps = [b - a for a, b in zip([t0, *slow.polls], slow.polls, strict=False)]
    assert gaps[0] < 1.0  # the first poll soon after submission
    assert all(g < 0.3 + 0.25 for g in gaps[1:])  # never longer than the cap (plus scheduling slack)
    assert gaps[-1] >= 0.25  # and it did back off to the cap


@pytest.mark.parametrize("family", ["openai", "anthropic"])
async def test_a_batch_whose_id_was_never_saved_is_found_and_adopted(family: str, llmock: Any,
                                                                     monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Killed between the provider's answer and the ledger write: the intent names the label, the time and the
    item count; OpenAI's batch metadata (or, for Anthropic, the one batch of that size created then) finds the
    batch, so the wave is not submitted again."""
    from ebtui.core.batch import request_key
    from ebtui.core.batch.ledger import Intent, ItemRecord

    if family == "openai":
        cfg = _openai_cfg(llmock, monkeypatch)
    else:
        monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-batch")
        cfg = parse_model("gpt", {"provider": "anthropic", "model": "claude-sonnet-4-6",
                                  "base_url": llmock.base_url("anthropic"), "api_key_env": "EBTUI_TEST_KEY"}, None)
    prompts = ["Is the lighthouse keeper right?", "Is the ferry captain right?", "Is the archivist right?"]
    bc = batch_client(cfg)
    cids = [f"{request_key('gpt', 'sys', p, None, None)}-0" for p in prompts]
    label = "ebtui-T4-gpt-w1"
    at = time.time()
    await bc.submit([BatchRequest(c, "sys", p) for c, p in zip(cids, prompts, strict=True)], label=label)
    await bc.aclose()
    ledger = BatchLedger.open(tmp_path, "T4")
    ledger.waves["gpt"] = 1
    for c in cids:
        ledger.add_item(c, ItemRecord(key=c[:-2], model="gpt", phase="call"))
    ledger.intents.append(Intent(label=label, model="gpt", items=cids, at=at))
    ledger.save()

    stream = (OpenAIClient if family == "openai" else __import__(
        "ebtui.providers.anthropic_client", fromlist=["AnthropicClient"]).AnthropicClient)(cfg)
    coord = BatchCoordinator(BatchLedger.open(tmp_path, "T4"), {"gpt": batch_client(cfg)}, FAST)
    client = coord.client("gpt", stream)
    answers = await asyncio.gather(*(client.generate(p, "sys") for p in prompts))
    await coord.aclose()
    assert all(a.usage.batch for a in answers)
    created = sum(1 for r in llmock.requests if r.method == "POST" and
                  (r.path.endswith("/v1/batches") or r.path.endswith("/v1/messages/batches")))
    assert created == 1  # adopted, not submitted again
    final = json.loads(ledger_path(tmp_path, "T4").read_text())
    assert final["intents"] == [] and len(final["batches"]) == 1


async def test_a_wave_too_large_for_one_batch_is_split(tmp_path) -> None:
    from ebtui.providers.scripted import ScriptedClient

    flaky = FlakyBatch()
    flaky.max_bytes = 2500  # about two requests (each counted as its text + 1000 bytes of envelope)
    coord = BatchCoordinator(BatchLedger.open(tmp_path, "T5"), {"flaky": flaky},
                             BatchSettings(poll_first_s=0.05, poll_max_s=0.1, gather_s=0.05, max_items=10))
    client = coord.client("flaky", ScriptedClient(name="flaky"))
    answers = await asyncio.gather(*(client.generate(f"good {i}", "s") for i in range(5)))
    await coord.aclose()
    assert [a.text for a in answers] == [f"answer to good {i}" for i in range(5)]
    assert [len(v) for v in flaky.batches.values()] == [2, 2, 1]


def test_anthropic_batches_use_one_hour_cache_breakpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    from ebtui.providers.base import PROMPT_CACHE_BREAK
    from ebtui.providers.batch.anthropic_batch import AnthropicBatchClient

    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-batch")
    cfg = parse_model("a", {"provider": "anthropic", "model": "claude-sonnet-4-6", "api_key_env": "EBTUI_TEST_KEY",
                            "price_in": 3.0, "price_out": 15.0}, None)
    c = AnthropicBatchClient(cfg)
    prompt = "STABLE DILEMMA" + PROMPT_CACHE_BREAK + "the exchange and the task"
    params = c.params(BatchRequest("x-0", "the rules", prompt))
    assert params["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    first, rest = params["messages"][0]["content"]
    assert first == {"type": "text", "text": "STABLE DILEMMA", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    assert first["text"] + rest["text"] == prompt and "cache_control" not in rest
    # the streaming client keeps the default 5-minute breakpoints, at the same place
    streamed = c._chat._params(prompt, "the rules", None, None)
    assert streamed["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    item = c.item({"type": "succeeded", "message": {
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 100, "cache_creation_input_tokens": 1000, "output_tokens": 10}}})
    assert isinstance(item, Completion) and item.usage.cache_write_tokens == 1000
    assert item.usage.cost_usd == pytest.approx((100 * 3.0 + 1000 * 6.0 + 10 * 15.0) / 1e6 * 0.5)


async def test_a_broken_batch_api_fails_the_items_instead_of_hanging(tmp_path) -> None:
    from ebtui.providers.scripted import ScriptedClient

    class Broken(FlakyBatch):
        async def poll(self, batch_id: str) -> BatchState:
            raise RuntimeError("unexpected payload")

    coord = BatchCoordinator(BatchLedger.open(tmp_path, "T6"), {"flaky": Broken()},
                             BatchSettings(poll_first_s=0.05, poll_max_s=0.1, gather_s=0.05))
    client = coord.client("flaky", ScriptedClient(name="flaky"))
    with pytest.raises(ProviderError) as err:
        await asyncio.wait_for(client.generate("good", "s"), 10)
    await coord.aclose()
    assert "unexpected payload" in str(err.value) and err.value.attempts == 3  # retried as items, then failed
