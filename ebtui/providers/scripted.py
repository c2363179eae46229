"""A deterministic offline model for tests and demos.

It knows nothing of rounds: it answers from its script (first rule whose `match` appears in the prompt),
else with generic reasoning text that ends with labelled "Principle:" and "Conclusion:" lines. Asked for a
JSON schema (as a judge is), it fills the schema with deterministic values — or, on request, answers
malformed JSON or prose with no scores, so the parser's review path can be exercised.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Unpack

from ebtui.config import ModelConfig, ScriptedOptions
from ebtui.providers.base import CallOptions, Completion, Delta, ModelClient, ProviderError, StreamItem, Usage
from ebtui.providers.common import with_cost

JudgeMode = Literal["valid", "malformed", "prose", "out_of_range"]

_TOKEN = re.compile(r"\S+\s*|\s+")


def _h(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


class _PathHash:
    """`_h(seed, prompt, path)` for many paths of one prompt, hashing the (long) prompt once."""

    __slots__ = ("prefix",)

    def __init__(self, seed: str, prompt: str) -> None:
        self.prefix = hashlib.sha256(f"{seed}\x1f{prompt}\x1f".encode())

    def __call__(self, path: str) -> int:
        h = self.prefix.copy()
        h.update(path.encode())
        return int.from_bytes(h.digest()[:8], "big")


def count_tokens(text: str) -> int:
    """A rough, deterministic token count (about 4 characters a token)."""
    return max(1, (len(text) + 3) // 4) if text else 0


@dataclass
class ScriptRule:
    match: str | tuple[str, ...]  # a substring of the prompt ("" matches everything), or several: all must occur
    reply: str

    def matches(self, prompt: str) -> bool:
        return all(m in prompt for m in ((self.match,) if isinstance(self.match, str) else self.match))


@dataclass
class ScriptedFault:
    """Fail calls whose prompt contains `match` ("" = every call), `times` times, with this error kind."""

    kind: str = "server"
    match: str = ""
    times: int = 1
    message: str = "scripted fault"
    after_tokens: int = 0  # >0: fail mid-stream after this many tokens
    used: int = field(default=0, init=False)


GENERIC_OPENINGS = (
    "The central tension here is between respecting the interests of those who can speak for themselves "
    "and protecting those whose standing depends on choices others make.",
    "Two values pull in opposite directions: the autonomy of the people deciding now, and the welfare of "
    "those who will live with the decision but cannot take part in it.",
    "What makes this case hard is that the usual markers of moral status are themselves under someone's "
    "control, so any principle that keys on them can be gamed.",
)


class ScriptedClient(ModelClient):
    provider = "scripted"
    supports_json_schema = True

    def __init__(
        self,
        name: str = "scripted",
        *,
        rules: list[ScriptRule] | None = None,
        latency_s: float = 0.0,
        tokens_per_second: float | None = None,
        judge_mode: JudgeMode = "valid",
        faults: list[ScriptedFault] | None = None,
        seed: str = "",
        price_in: float | None = None,
        price_out: float | None = None,
    ) -> None:
        self.name = name
        self.model = "scripted"
        self.rules = rules or []
        self.latency_s = latency_s
        self.tokens_per_second = tokens_per_second
        self.judge_mode: JudgeMode = judge_mode
        self.faults = faults or []
        self.seed = seed or name
        self.price_in = price_in
        self.price_out = price_out
        self.calls = 0

    # -- what it says ---------------------------------------------------------------------------
    def reply_for(self, prompt: str, system_prompt: str, json_schema: dict[str, Any] | None) -> str:
        for rule in self.rules:
            if rule.matches(prompt):
                return rule.reply
        if json_schema is not None:
            return self._judge_reply(prompt, json_schema)
        return self._generic_reply(prompt)

    def _generic_reply(self, prompt: str) -> str:
        h = _h(self.seed, prompt)
        opening = GENERIC_OPENINGS[h % len(GENERIC_OPENINGS)]
        confidence = 55 + h % 30
        return (
            f"{opening}\n\n"
            "Stakeholders include the people making the decision, those directly affected, and those whose "
            "interests are represented only by proxy. A consequentialist reading weighs expected welfare; a "
            "deontological reading asks whether anyone is used merely as a means; a care perspective asks who "
            "is vulnerable and dependent.\n\n"
            f"I hold this view with about {confidence}% confidence. I would change my mind if it turned out "
            "that the affected parties could later endorse the alternative, or that the harm is reversible.\n\n"
            "Principle: Do not let a being's moral standing depend on a setting that an interested party "
            "controls; where standing is uncertain, give weight in proportion to the uncertainty.\n"
            "Conclusion: Act to preserve the option that keeps the most parties' interests protected, and "
            "revisit the decision as evidence about their standing improves."
        )

    def _judge_reply(self, prompt: str, schema: dict[str, Any]) -> str:
        if self.judge_mode == "prose":
            return (
                "Both teams engaged thoughtfully. Team A articulated a clear principle; Team B raised "
                "stakeholders Team A had missed. Overall a strong exchange."
            )
        value = self._instance(schema, prompt, "$", _PathHash(self.seed, prompt))
        if self.judge_mode == "out_of_range":
            _poke_first_int(value, 11)
        text = json.dumps(value, indent=2)
        if self.judge_mode == "malformed":
            # cut off mid-object, as a max-tokens stop would leave it
            return text[: int(len(text) * 0.6)]
        return text

    def _instance(self, schema: dict[str, Any], prompt: str, path: str, h: _PathHash | None = None) -> Any:
        h = h or _PathHash(self.seed, prompt)
        t = schema.get("type")
        if "enum" in schema:
            return schema["enum"][h(path) % len(schema["enum"])]
        if t == "object" or "properties" in schema:
            props = schema.get("properties", {})
            return {k: self._instance(v, prompt, f"{path}.{k}", h) for k, v in props.items()}
        if t == "array":
            return [self._instance(schema.get("items", {}), prompt, f"{path}[0]", h)]
        if t == "integer" or t == "number":
            lo = int(schema.get("minimum", 1))
            hi = int(schema.get("maximum", 10))
            # judges differ from each other but stay in a plausible band
            band_lo = lo + (hi - lo) * 3 // 9
            return band_lo + h(path) % (hi - band_lo + 1)
        if t == "boolean":
            return bool(h(path) % 2)
        leaf = path.rsplit(".", 1)[-1].replace("_", " ")
        return f"Scripted assessment of {leaf}: the reasoning was explicit and acknowledged uncertainty."

    # -- how it says it --------------------------------------------------------------------------
    def _fault_for(self, prompt: str) -> ScriptedFault | None:
        for f in self.faults:
            if f.used < f.times and f.match in prompt:
                f.used += 1
                return f
        return None

    async def stream(
        self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[StreamItem]:
        self.calls += 1
        start = time.perf_counter()
        fault = self._fault_for(prompt)
        if fault and not fault.after_tokens:
            raise ProviderError(fault.kind, f"{self.name}: {fault.message}")  # type: ignore[arg-type]
        max_tokens = options.get("max_tokens")
        text = self.reply_for(prompt, system_prompt, options.get("json_schema"))
        tokens = _TOKEN.findall(text)
        finish: str = "stop"
        if max_tokens is not None and len(tokens) > max_tokens:
            tokens = tokens[:max_tokens]
            finish = "length"
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        first_token: float | None = None
        delay = 1.0 / self.tokens_per_second if self.tokens_per_second else 0.0
        out: list[str] = []
        if not delay and not (fault and fault.after_tokens):  # the zero-latency path: nothing per token but the yield
            first_token = time.perf_counter() - start if tokens else None
            for i, tok in enumerate(tokens):
                if i & 63 == 63:
                    await asyncio.sleep(0)  # stay cooperative even at infinite speed
                yield Delta(tok)
            out = tokens
        else:
            for i, tok in enumerate(tokens):
                if fault and fault.after_tokens and i >= fault.after_tokens:
                    raise ProviderError(
                        fault.kind, f"{self.name}: {fault.message}", partial_text="".join(out)  # type: ignore[arg-type]
                    )
                if delay:
                    await asyncio.sleep(delay)
                elif i % 64 == 63:
                    await asyncio.sleep(0)  # stay cooperative even at infinite speed
                if first_token is None:
                    first_token = time.perf_counter() - start
                out.append(tok)
                yield Delta(tok)
        full = "".join(out)
        if finish == "length":
            raise ProviderError("truncated", f"{self.name}: cut off at max_tokens={max_tokens}", partial_text=full)
        if not full.strip():
            raise ProviderError("empty", f"{self.name}: empty answer")
        usage = Usage(input_tokens=count_tokens(system_prompt) + count_tokens(prompt), output_tokens=len(tokens))
        usage = with_cost(usage, self.price_in, self.price_out)
        yield Completion(
            text=full,
            finish_reason="stop",
            usage=usage,
            latency_s=time.perf_counter() - start,
            first_token_s=first_token,
            model=self.model,
        )


def _poke_first_int(value: Any, new: int) -> bool:
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, int) and not isinstance(v, bool):
                value[k] = new
                return True
            if _poke_first_int(v, new):
                return True
    elif isinstance(value, list):
        return any(_poke_first_int(v, new) for v in value)
    return False


def scripted_from_config(cfg: ModelConfig) -> ScriptedClient:
    """A ScriptedClient from a `provider = "scripted"` ModelConfig (latency_s, tokens_per_second, judge_mode,
    seed, rules = [{match, reply}], faults = [{kind, match, times, after_tokens, message}])."""
    ex = cfg.options_as(ScriptedOptions)
    rules = [ScriptRule(match=tuple(r.match) if isinstance(r.match, list) else r.match, reply=r.reply)
             for r in ex.rules]
    faults = [
        ScriptedFault(
            kind=str(f.get("kind", "server")),
            match=str(f.get("match", "")),
            times=int(f.get("times", 1)),
            message=str(f.get("message", "scripted fault")),
            after_tokens=int(f.get("after_tokens", 0)),
        )
        for f in ex.faults
    ]
    return ScriptedClient(
        cfg.name,
        rules=rules,
        latency_s=ex.latency_s or 0.0,
        tokens_per_second=ex.tokens_per_second or None,
        judge_mode=ex.judge_mode or "valid",
        faults=faults,
        seed=str(ex.seed if ex.seed is not None else ""),
        price_in=cfg.price_in,
        price_out=cfg.price_out,
    )
