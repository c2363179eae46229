"""Cost (6): prompt tokens billed per round, with the stable-prefix layout and provider prompt caching vs without.

llmock (the local server speaking the providers' wire formats) counts prompt tokens but does not simulate
prompt caching: its cache fields are always 0 (OpenAI's responses route hard-codes `cached_tokens: 0`,
the chat, Anthropic and Gemini routes send none). So the input tokens and the cache fields are *measured*
through ebtui's real provider clients against llmock, and the cached share is *computed* from the actual
prompts of a tournament and each provider's published caching rules.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import BenchResult, Figure, LatencyScriptedClient
from ebtui.core import prompts
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PhaseType, Round
from ebtui.core.store import ResultsStore
from ebtui.core.tournament import TournamentRunner
from ebtui.core.tournament.config import TournamentConfig


def tokens(text: str) -> int:
    """Characters ÷ 4 — llmock's own estimate (and roughly English text under the providers' tokenisers)."""
    return len(text) // 4


@dataclass(frozen=True)
class CacheRule:
    provider: str
    model: str
    #: "prefix": any prefix seen before is cached (OpenAI, Gemini implicit); "breakpoint": only the prefix up
    #: to a cache_control mark (Anthropic)
    kind: str
    min_tokens: int
    increment: int  # cached length granularity above the minimum (1 = any length)
    read_mult: float  # cached tokens billed at this fraction of the input price
    write_mult: float  # tokens written to the cache billed at this multiple (Anthropic 5-minute cache)
    source: str


RULES = [
    CacheRule("openai", "gpt-5 family", "prefix", 1024, 128, 0.10, 1.0,
              "automatic for prompts ≥ 1,024 tokens, in 128-token steps; cached input at 10% of the price "
              "(gpt-5; older models 25-50%); writes free"),
    CacheRule("anthropic", "claude-sonnet-4-6", "breakpoint", 2048, 1, 0.10, 1.25,
              "only up to a `cache_control` breakpoint — ebtui marks the system prompt; minimum 2,048 "
              "tokens (Sonnet 4.6; 1,024 for Sonnet 4.5/4, 4,096 for Opus 4.5+/Haiku 4.5); reads 0.1×, "
              "5-minute writes 1.25×"),
    CacheRule("google", "gemini-2.5-flash", "prefix", 2048, 1, 0.10, 1.0,
              "implicit caching on Gemini 2.5+ for a shared prefix ≥ 2,048 tokens (2.5 Flash/Pro; 4,096 "
              "for Gemini 3.x); cached input at 10% of the price; best effort"),
]


@dataclass
class Call:
    model: str
    system: str
    prompt: str
    phase: PhaseType
    round_id: str
    order: float


def tournament_calls(quick: bool) -> tuple[list[Call], int]:
    """Every call of a scripted tournament (3 models, rotating judges), in the order they started."""
    models = ["m1", "m2", "m3"]
    dilemmas = load_dilemmas()[: 1 if quick else 8]
    # replies of about 700 tokens, as frontier models write for these phases
    clients = {m: LatencyScriptedClient(m, scale=0.0, seed=3, reply_repeat=3) for m in models}
    with tempfile.TemporaryDirectory(prefix="ebtui-bench-cost-") as tmp:
        store = ResultsStore(Path(tmp) / "store", durable=False)
        config = TournamentConfig(name="cost", models=models, dilemmas=[d.id for d in dilemmas], concurrency=4)
        runner = TournamentRunner(config, clients, store, dilemmas=dilemmas, progress_interval_s=5.0)
        asyncio.run(runner.run_to_end())
        rounds: list[Round] = store.load_rounds(tournament=runner.tournament_id)
        store.close()
    calls = [Call(ph.model_id, ph.system_prompt, ph.prompt, ph.phase_type, r.id, ph.timestamp.timestamp())
             for r in rounds for ph in r.phases]
    calls.sort(key=lambda c: c.order)
    return calls, len(rounds)


def _common_prefix_len(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def cached_tokens(rule: CacheRule, calls: list[Call], *, breakpoint_after_dilemma: bool = False
                  ) -> list[tuple[int, int, int]]:
    """Per call (input tokens, cache-read tokens, cache-write tokens) under the rule, assuming every call is
    within the cache's lifetime (a best case: a tournament calls each model often)."""
    out: list[tuple[int, int, int]] = []
    seen: dict[str, list[str]] = {}
    written: dict[str, set[str]] = {}
    for c in calls:
        full = c.system + "\n" + c.prompt
        total = tokens(full)
        if rule.kind == "prefix":
            best = max((_common_prefix_len(full, p) for p in seen.get(c.model, [])), default=0)
            n = tokens(full[:best])
            if n >= rule.min_tokens:
                cached = rule.min_tokens + (n - rule.min_tokens) // rule.increment * rule.increment
            else:
                cached = 0
            out.append((total, min(cached, total), 0))
            seen.setdefault(c.model, []).append(full)
        else:
            # the cached prefix is the text up to a breakpoint: the system prompt (what ebtui marks), or,
            # with a second breakpoint, the system prompt and the dilemma block every phase opens with
            prefix = c.system
            if breakpoint_after_dilemma:
                prefix = c.system + "\n" + c.prompt.split("\n\n## Team A", 1)[0].split("\n\n# Your task", 1)[0]
            n = tokens(prefix)
            if n < rule.min_tokens:
                out.append((total, 0, 0))
                continue
            have = written.setdefault(c.model, set())
            if prefix in have:
                out.append((total, n, 0))
            else:
                have.add(prefix)
                out.append((total, 0, n))
    return out


def billed(rule: CacheRule, per_call: list[tuple[int, int, int]]) -> float:
    """Input tokens billed, in full-price-token equivalents."""
    return sum(t - r - w + r * rule.read_mult + w * rule.write_mult for t, r, w in per_call)


def measure_llmock(calls: list[Call], n_rounds: int) -> dict[str, tuple[int, int, int]]:
    """Send the first rounds' calls through ebtui's real clients to llmock: per provider (calls, input tokens
    reported, cached tokens reported)."""
    from llmock.testing import LLMockServer

    from ebtui.config import parse_model
    from ebtui.core.judgment import JUDGMENT_SCHEMA
    from ebtui.providers.base import Completion
    from ebtui.providers.registry import build_raw_client

    families = {"openai": ("openai", "openai", "gpt-4o-mini"), "anthropic": ("anthropic", "anthropic",
                "claude-sonnet-4-6"), "google": ("google", "gemini", "gemini-2.5-flash")}
    round_ids: list[str] = []
    for c in calls:
        if c.round_id not in round_ids:
            round_ids.append(c.round_id)
    chosen = set(round_ids[:n_rounds])
    sample = [c for c in calls if c.round_id in chosen]
    out: dict[str, tuple[int, int, int]] = {}
    os.environ.setdefault("EBTUI_BENCH_KEY", "llmock-bench-key")
    with LLMockServer() as server:
        for fam, (provider, route, model) in families.items():
            cfg = parse_model(f"{fam}-mock", {"provider": provider, "model": model,
                                              "base_url": server.base_url(route),
                                              "api_key_env": "EBTUI_BENCH_KEY"}, None)
            client = build_raw_client(cfg)

            async def go(client: Any = client) -> tuple[int, int, int]:
                n = tin = cached = 0
                for c in sample:
                    schema = JUDGMENT_SCHEMA if c.phase == PhaseType.JUDGMENT else None
                    async for item in client.stream(c.prompt, c.system, json_schema=schema, max_tokens=64):
                        if isinstance(item, Completion):
                            n += 1
                            tin += item.usage.input_tokens
                            cached += item.usage.cached_tokens
                await client.aclose()
                return n, tin, cached

            out[fam] = asyncio.run(go())
    return out


def bench_cost(quick: bool = False) -> BenchResult:
    res = BenchResult("cost", "6. Cost: prompt tokens billed per round, with and without prompt caching")
    calls, n_rounds = tournament_calls(quick)
    measured = measure_llmock(calls, 2 if quick else 6)
    per_round_in = sum(tokens(c.system + "\n" + c.prompt) for c in calls) / n_rounds
    lines = []
    for rule in RULES:
        per_call = cached_tokens(rule, calls)
        with_cache = billed(rule, per_call) / n_rounds
        saved = 1 - with_cache / per_round_in
        n, tin, cached = measured[rule.provider]
        res.figures.append(Figure(f"{rule.provider} ({rule.model}): billed prompt tokens per round with caching "
                                  f"(computed) vs {per_round_in:,.0f} without", with_cache, "tokens", "", None,
                                  f"{saved:.0%} saved"))
        lines.append(f"- {rule.provider}: llmock reported {tin / n * 5:,.0f} input tokens per round "
                     f"({n} calls measured) and {cached} cached tokens (llmock does not simulate caching); "
                     f"computed: {sum(r for _, r, _ in per_call) / n_rounds:,.0f} cache-read and "
                     f"{sum(w for _, _, w in per_call) / n_rounds:,.0f} cache-write tokens per round → "
                     f"{with_cache:,.0f} full-price-equivalent tokens ({saved:.1%} less). Rule: {rule.source}.")
    anth = RULES[1]
    alt = cached_tokens(anth, calls, breakpoint_after_dilemma=True)
    alt_billed = billed(anth, alt) / n_rounds
    alt_1024 = CacheRule(**{**anth.__dict__, "model": "claude-sonnet-4-5", "min_tokens": 1024})
    alt2 = billed(alt_1024, cached_tokens(alt_1024, calls, breakpoint_after_dilemma=True)) / n_rounds
    sys_tokens = tokens(prompts.SYSTEM_PROMPT)
    dil = [tokens(prompts.dilemma_block(d)) for d in load_dilemmas()]
    lines += [
        f"- the system prompt is {sys_tokens} tokens and the dilemma blocks {min(dil)}-{max(dil)}, so the "
        f"prefix every call of a model on a dilemma shares (system + dilemma) is {sys_tokens + min(dil)}-"
        f"{sys_tokens + max(dil)} tokens: under OpenAI's 1,024 and Gemini's 2,048 minimum for most dilemmas. "
        "Caching pays where a longer prefix repeats: a model's own presentation prompt is identical every "
        "time it presents the same dilemma, and a judge's or a rebuttal's prompt shares the dilemma and the "
        "exchange so far with nothing else the same model sent.",
        f"- Anthropic with a second `cache_control` breakpoint after the dilemma block (computed): "
        f"{alt_billed:,.0f} tokens per round on Sonnet 4.6 (2,048 minimum), {alt2:,.0f} on Sonnet 4.5 "
        f"(1,024 minimum) — against {per_round_in:,.0f} without caching.",
    ]
    res.details = lines
    res.method = (
        f"The prompts are the real ones: a {n_rounds}-round scripted tournament (3 models, rotating judges, "
        f"{'1 dilemma' if quick else 'the 8 built-in dilemmas'}), replies of about 700 tokens with a per-call "
        "nonce (no two model replies alike, as with real models), every call's system prompt and prompt read "
        "back from the saved rounds in the order the calls started. Measured: the calls of the first rounds "
        "sent through ebtui's OpenAI, Anthropic and Google clients (the real SDKs over HTTP, Anthropic with "
        "its `cache_control` system block) to an in-process llmock server, reading `input_tokens` and "
        "`cached_tokens` from the usage the clients return. Computed: for every call of the tournament, "
        "the longest prefix it shares with an earlier call *to the same model* (caches are per model), cut "
        "to each provider's rule below, in characters ÷ 4 tokens (llmock's estimate), assuming every call "
        "falls within the cache lifetime (a best case; real hit rates are lower, especially Gemini's "
        "best-effort implicit cache). Billed tokens are full-price equivalents: uncached + read × "
        "read-multiplier + write × write-multiplier. “Without” is every prompt token at full price."
    )
    return res
