"""Pieces every provider client shares: the end-of-stream checks, cost, timing."""

from __future__ import annotations

import time
from typing import Any

from ebtui.providers.base import Completion, FinishReason, ProviderError, Usage


def cost_usd(input_tokens: int, output_tokens: int, price_in: float | None, price_out: float | None) -> float | None:
    """The one cost formula: USD from prices per million tokens (None: the model has no price)."""
    if price_in is None and price_out is None:
        return None
    return (input_tokens * (price_in or 0.0) + output_tokens * (price_out or 0.0)) / 1e6


def with_cost(usage: Usage, price_in: float | None, price_out: float | None) -> Usage:
    """Cost in USD from prices per million tokens (cached input tokens billed at the input price)."""
    cost = cost_usd(usage.input_tokens, usage.output_tokens, price_in, price_out)
    if cost is None:
        return usage
    return usage.model_copy(update={"cost_usd": cost})


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
    if finish_reason == "length":
        raise ProviderError("truncated", f"{name}: the answer was cut off at max_tokens={max_tokens}",
                            partial_text=text)
    if finish_reason in ("refusal", "content_filter"):
        raise ProviderError("refusal", f"{name}: the model refused ({raw_reason or finish_reason})",
                            partial_text=text)
    if finish_reason == "error":
        raise ProviderError("stream", f"{name}: the provider reported an error ({raw_reason})", partial_text=text)
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


def safe_repr(obj: Any, **fields: Any) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    return f"{type(obj).__name__}({inner})"
