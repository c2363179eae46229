"""Pieces every provider client shares: the end-of-stream checks, cost, timing."""

from __future__ import annotations

import abc
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any, Unpack

from ebtui.config import ModelConfig
from ebtui.providers.base import (
    BAD_FINISH,
    CallOptions,
    Completion,
    Delta,
    FinishReason,
    ModelClient,
    ProviderError,
    StreamItem,
    Usage,
)
from ebtui.providers.errors import classify


def cost_usd(input_tokens: int, output_tokens: int, price_in: float | None, price_out: float | None) -> float | None:
    """The one list-price formula: USD from prices per million tokens (None: the model has no price).
    `with_cost` refines it for cached and cache-written input tokens and batch discounts."""
    if price_in is None and price_out is None:
        return None
    return (input_tokens * (price_in or 0.0) + output_tokens * (price_out or 0.0)) / 1e6


#: what a cached input token costs, as a share of the input price, when models.toml gives no
#: `price_cached_in`: Anthropic cache reads 0.1x; Gemini 2.5 implicit cache 0.25x; OpenAI 0.5x for the
#: gpt-4o family (newer models are cheaper: set price_cached_in). Other providers: full price.
CACHE_READ_SHARE: dict[str, float] = {"anthropic": 0.1, "google": 0.25, "openai": 0.5}
#: Anthropic bills a 5-minute cache write at 1.25x the input price
CACHE_WRITE_SHARE: dict[str, float] = {"anthropic": 1.25}


def with_cost(
    usage: Usage,
    price_in: float | None,
    price_out: float | None,
    *,
    price_cached_in: float | None = None,
    cache_write_share: float = 1.0,
    discount: float = 1.0,
) -> Usage:
    """Cost in USD from prices per million tokens.

    Cached input tokens (`usage.cached_tokens`) are billed at `price_cached_in` (default: the input price),
    tokens written to the cache (`usage.cache_write_tokens`) at `cache_write_share` x the input price, the
    rest of the input at the input price. `discount` scales the whole (0.5: a provider's batch price).
    """
    if price_in is None and price_out is None:
        return usage
    pin = price_in or 0.0
    cached = min(usage.cached_tokens, usage.input_tokens)
    written = min(usage.cache_write_tokens, usage.input_tokens - cached)
    plain = usage.input_tokens - cached - written
    cost = (plain * pin + cached * (pin if price_cached_in is None else price_cached_in)
            + written * pin * cache_write_share + usage.output_tokens * (price_out or 0.0)) / 1e6
    return usage.model_copy(update={"cost_usd": cost * discount})


def cost_for(usage: Usage, cfg: Any, *, discount: float = 1.0, cache_write_share: float | None = None) -> Usage:
    """`with_cost` with a model's configured prices and its provider's cache prices."""
    family = getattr(cfg, "client_type", "")  # which API it speaks (not the model family)
    cached = getattr(cfg, "price_cached_in", None)
    if cached is None and cfg.price_in is not None:
        cached = cfg.price_in * CACHE_READ_SHARE.get(family, 1.0)
    write = CACHE_WRITE_SHARE.get(family, 1.0) if cache_write_share is None else cache_write_share
    return with_cost(usage, cfg.price_in, cfg.price_out, price_cached_in=cached, cache_write_share=write,
                     discount=discount)


def prompt_cache_key(system_prompt: str) -> str:
    """A stable cache-routing key for calls that share a system prompt (OpenAI's prompt_cache_key)."""
    import hashlib

    return "ebtui-" + hashlib.sha256(system_prompt.encode("utf-8")).hexdigest()[:24]


class Timer:
    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.first_token: float | None = None

    def token(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter() - self.start

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start


def finish(
    name: str,
    model: str,
    text: str,
    finish_reason: FinishReason | None,
    usage: Usage,
    timer: Timer,
    *,
    raw_reason: Any = None,
    max_tokens: int | None = None,
) -> Completion:
    """The Completion, or the ProviderError that an unfinished, cut-off, refused or empty answer is."""
    if finish_reason is None:
        raise ProviderError("stream", f"{name}: the stream ended without a finish reason", partial_text=text)
    kind = BAD_FINISH.get(finish_reason)
    if kind is not None:
        why = {"truncated": f"the answer was cut off at max_tokens={max_tokens}",
               "refusal": f"the model refused ({raw_reason or finish_reason})"}.get(
            kind, f"the provider reported an error ({raw_reason})")
        raise ProviderError(kind, f"{name}: {why}", partial_text=text)
    if not text.strip():
        raise ProviderError("empty", f"{name}: the model answered nothing")
    return Completion(
        text=text,
        finish_reason=finish_reason,
        usage=usage,
        latency_s=timer.elapsed,
        first_token_s=timer.first_token,
        model=model,
    )


class ConfiguredClient(ModelClient):
    """A client made from one models.toml entry (its `cfg`); shown without its key."""

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self.name = cfg.name
        self.provider = cfg.provider
        self.model = cfg.model

    def __repr__(self) -> str:
        return safe_repr(self, name=self.name, provider=self.provider, model=self.model,
                         base_url=self.cfg.effective_base_url)

    async def stream(
        self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[StreamItem]:
        """The one shape of an SDK call: `_read` sends the request and reads the SDK's chunks into a
        StreamCall (yielding its text); any failure becomes a ProviderError; the end is checked once."""
        call = StreamCall(self.name, self.model)
        try:
            # closed with this stream, not when collected: the SDK's response is released at once
            async with contextlib.aclosing(self._read(call, prompt, system_prompt, options)) as deltas:
                async for delta in deltas:
                    yield delta
        except Exception as exc:  # noqa: BLE001 - every failure becomes a ProviderError
            raise call.failed(exc) from exc
        yield call.completion(self.cfg)

    @abc.abstractmethod
    def _read(
        self, call: StreamCall, prompt: str, system_prompt: str, options: CallOptions
    ) -> AsyncGenerator[Delta, None]:
        """Send the request (set `call.started` once the provider accepted it) and yield `call.text(...)`
        for each piece of the answer; record the finish reason, usage and max_tokens on `call`."""


def sdk_options(cfg: ModelConfig, timeout: Callable[..., Any]) -> dict[str, Any]:
    """The connection options the OpenAI and Anthropic SDKs share: the base URL, no SDK retries (retries
    happen once, in ebtui.providers.retry), read and connect timeouts, extra headers. `timeout` is the
    SDK's Timeout class."""
    return {
        "base_url": cfg.effective_base_url,
        "max_retries": 0,
        "timeout": timeout(cfg.timeout_s, connect=cfg.connect_timeout_s),
        "default_headers": getattr(cfg.options, "extra_headers", None) or None,
    }


class StreamCall:
    """One streamed call of an SDK client, from request to Completion: the timer, the text so far, the
    finish reason and usage the stream reported, and whether the request was accepted (a failure before
    that is a connection error, after it a stream error). The clients differ only in how they read their
    SDK's chunks; this is what they do with what they read."""

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.model = model
        self.timer = Timer()
        self.parts: list[str] = []
        self.reason: FinishReason | None = None
        self.raw_reason: str | None = None
        self.usage = Usage()
        self.started = False
        self.max_tokens: int | None = None  # the limit the request was sent with (for a cut-off's message)

    def text(self, piece: str) -> Delta:
        """A piece of the answer: timed, kept, and the Delta to yield."""
        self.timer.token()
        self.parts.append(piece)
        return Delta(piece)

    def finished(self, raw_reason: str, reasons: Mapping[str, FinishReason]) -> None:
        """The provider's finish reason, mapped to ours (an unknown one is "unknown")."""
        self.raw_reason = raw_reason
        self.reason = reasons.get(raw_reason, "unknown")

    def failed(self, exc: Exception) -> ProviderError:
        """What an SDK exception means, with the text streamed before it (for the record only)."""
        err = classify(self.name, exc, streaming=self.started)
        err.partial_text = "".join(self.parts)
        return err

    def completion(self, cfg: Any) -> Completion:
        """The Completion with its cost (models.toml prices), or the ProviderError the answer is."""
        return finish(self.name, self.model, "".join(self.parts), self.reason, cost_for(self.usage, cfg),
                      self.timer, raw_reason=self.raw_reason, max_tokens=self.max_tokens)


def safe_repr(obj: Any, **fields: Any) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    return f"{type(obj).__name__}({inner})"
