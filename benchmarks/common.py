"""Shared pieces of the benchmarks: result records, timing helpers, a latency-sampling scripted model."""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import statistics
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ebtui.providers.base import Completion, Delta, StreamItem, Usage
from ebtui.providers.scripted import _TOKEN, ScriptedClient, count_tokens


@dataclass
class Figure:
    """One measured (or computed) number, its target and whether it met it (None: no target)."""

    name: str
    value: float | None
    unit: str
    target: str = ""
    passed: bool | None = None
    note: str = ""

    def value_text(self) -> str:
        if self.value is None:
            return "—"
        v = self.value
        if abs(v) >= 100:
            return f"{v:,.0f} {self.unit}".strip()
        if abs(v) >= 10:
            return f"{v:.1f} {self.unit}".strip()
        return f"{v:.3g} {self.unit}".strip()

    def verdict(self) -> str:
        return "" if self.passed is None else ("PASS" if self.passed else "MISS")


@dataclass
class BenchResult:
    name: str
    title: str
    figures: list[Figure] = field(default_factory=list)
    method: str = ""  # how it was measured (Markdown)
    details: list[str] = field(default_factory=list)  # extra lines (Markdown)
    seconds: float = 0.0  # how long the benchmark itself took
    max_rss_mb: float | None = None
    error: str | None = None
    started: str = ""  # when the benchmark ran (UTC, set by the harness)
    load: str = ""  # load average (1/5/15 min) when it started and ended (set by the harness)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "figures": [f.__dict__ for f in self.figures],
            "method": self.method,
            "details": self.details,
            "seconds": self.seconds,
            "max_rss_mb": self.max_rss_mb,
            "error": self.error,
            "started": self.started,
            "load": self.load,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BenchResult:
        r = cls(d["name"], d["title"], method=d.get("method", ""), details=list(d.get("details", [])),
                seconds=d.get("seconds", 0.0), max_rss_mb=d.get("max_rss_mb"), error=d.get("error"),
                started=d.get("started", ""), load=d.get("load", ""))
        r.figures = [Figure(**f) for f in d.get("figures", [])]
        return r


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))
    return s[k]


# ---------------------------------------------------------------------------------------------------------
# a scripted model with randomised, realistic per-call latency
# ---------------------------------------------------------------------------------------------------------
#: median seconds to the first token and median generation time per phase kind, before scaling. Roughly what
#: a frontier model takes for ebtui's phases (600-900 output tokens at 40-80 tokens/s).
PHASE_TIMES = {
    "presentation": (1.5, 14.0),
    "response": (1.5, 12.0),
    "rebuttal": (1.5, 11.0),
    "consistency": (1.2, 8.0),
    "judgment": (2.0, 16.0),
}


def phase_kind(prompt: str, json_schema: dict[str, Any] | None) -> str:
    """Which phase a prompt is, from the task heading ebtui.core.prompts writes (the model is told its task)."""
    if json_schema is not None or "# Your task: the judgment" in prompt:
        return "judgment"
    for key, heading in (("presentation", "presentation\n"), ("response", "response\n"),
                         ("rebuttal", "rebuttal\n"), ("consistency", "consistency test\n")):
        if f"# Your task: Team {'B' if key == 'response' else 'A'}'s {heading}" in prompt:
            return key
    return "presentation"


class LatencyScriptedClient(ScriptedClient):
    """ScriptedClient whose every call takes a randomised time: a log-normal time to first token, then the
    reply streamed token by token over a log-normal generation time. Deadlines are absolute (no drift from
    many small sleeps), so a call ends at its sampled duration plus at most one timer slip.

    The sampled duration is what the call *should* take; it is reported as `Completion.latency_s` (so the
    round engine stores it as the phase's latency) and kept in `self.samples`. Replies carry a per-call
    nonce, so no two calls write the same text (real models do not either).
    """

    def __init__(self, name: str, *, scale: float, seed: int = 0, sigma: float = 0.35, wakeups: int = 24,
                 reply_repeat: int = 1) -> None:
        super().__init__(name, seed=name)
        self.scale = scale
        self.sigma = sigma
        self.wakeups = wakeups
        self.reply_repeat = reply_repeat
        self.rng = random.Random(int(hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12], 16))
        self.samples: list[tuple[str, float]] = []  # (phase kind, sampled seconds)

    def sample(self, kind: str) -> tuple[float, float]:
        ttft, gen = PHASE_TIMES[kind]
        return (ttft * self.scale * self.rng.lognormvariate(0.0, self.sigma),
                gen * self.scale * self.rng.lognormvariate(0.0, self.sigma))

    def _generic_reply(self, prompt: str) -> str:
        base = super()._generic_reply(prompt)
        nonce = f"(Draft {self.calls}-{self.rng.randrange(10**9)} by {self.name}.)"
        body = "\n\n".join([base.split("\n\nPrinciple:")[0]] * self.reply_repeat)
        return f"{nonce} {body}\n\nPrinciple:{base.split('Principle:', 1)[1]}"

    async def stream(self, prompt: str, system_prompt: str, *, json_schema: dict[str, Any] | None = None,
                     max_tokens: int | None = None) -> AsyncIterator[StreamItem]:
        self.calls += 1
        kind = phase_kind(prompt, json_schema)
        ttft, gen = self.sample(kind)
        self.samples.append((kind, ttft + gen))
        loop = asyncio.get_running_loop()
        start = loop.time()
        text = self.reply_for(prompt, system_prompt, json_schema)
        tokens = _TOKEN.findall(text)
        n = len(tokens)
        per_wake = max(1, math.ceil(n / self.wakeups))
        first: float | None = None
        i = 0
        while i < n:
            # the k-th wake-up is due at start + ttft + gen * (k/wakeups)
            k = i // per_wake
            due = start + ttft + gen * (k / max(1, math.ceil(n / per_wake) - 1 or 1))
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if first is None:
                first = loop.time() - start
            for tok in tokens[i:i + per_wake]:
                yield Delta(tok)
            i += per_wake
        usage = Usage(input_tokens=count_tokens(system_prompt) + count_tokens(prompt), output_tokens=n)
        yield Completion(text=text, finish_reason="stop", usage=usage, latency_s=ttft + gen,
                         first_token_s=first, model=self.model)


def now() -> float:
    return time.perf_counter()
