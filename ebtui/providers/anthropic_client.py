"""Anthropic Messages API over the raw event stream (AsyncAnthropic). The current API version has no sampling
settings, so this client sends none (config rejects `temperature` for this provider). The system prompt and
the end of the prompt's stable prefix carry `cache_control` breakpoints; cache reads and writes are reported
and priced as such (docs/BATCH.md, "Prompt caching").
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from ebtui.config import AnthropicOptions, ModelConfig
from ebtui.providers.base import (
    CallOptions,
    Delta,
    FinishReason,
    ProviderError,
    Usage,
    split_cacheable,
)
from ebtui.providers.common import ConfiguredClient, StreamCall, sdk_options
from ebtui.providers.errors import from_status

DEFAULT_MAX_TOKENS = 4096

FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "refusal": "refusal",
    "pause_turn": "unknown",
}


ERROR_STATUS = {
    "overloaded_error": 529,
    "api_error": 500,
    "rate_limit_error": 429,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
}


def _stream_error(name: str, error: dict[str, Any]) -> ProviderError:
    """An `error` event inside a stream (e.g. overloaded_error), as the status it stands for."""
    etype = str(error.get("type", "api_error"))
    err = from_status(name, ERROR_STATUS.get(etype, 500), str(error.get("message", etype)), code=etype)
    if err.retryable:
        err.kind = "stream"  # it happened mid-stream: restart the call
    return err


def usage_tokens(u: dict[str, Any]) -> tuple[int, int, int]:
    """(cache reads, cache writes, all input tokens) of a Messages API `usage`: its input_tokens excludes
    cache reads and writes; the total is what was sent."""
    cached = u.get("cache_read_input_tokens") or 0
    written = u.get("cache_creation_input_tokens") or 0
    return cached, written, (u.get("input_tokens") or 0) + cached + written


class AnthropicClient(ConfiguredClient):
    supports_json_schema = True

    def __init__(self, cfg: ModelConfig) -> None:
        from anthropic import AsyncAnthropic, Timeout

        super().__init__(cfg)
        self.cache_system = cfg.options_as(AnthropicOptions).cache_system
        self._client = AsyncAnthropic(api_key=cfg.api_key(), **sdk_options(cfg, Timeout))

    def _content(self, prompt: str) -> str | list[dict[str, Any]]:
        """The user message: with a cache breakpoint after the prompt's stable prefix (rules, rubric and
        dilemma in ebtui's prompts), so every phase of every round on that dilemma reads it from the cache."""
        prefix, rest = split_cacheable(prompt)
        if not prefix or not self.cache_system:
            return prompt
        return [{"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": rest}]

    def _params(self, prompt: str, system_prompt: str, json_schema: dict[str, Any] | None,
                max_tokens: int | None) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.cfg.model,
            "max_tokens": max_tokens or self.cfg.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": [{"role": "user", "content": self._content(prompt)}],
            "stream": True,
        }
        if system_prompt:
            block: dict[str, Any] = {"type": "text", "text": system_prompt}
            if self.cache_system:
                block["cache_control"] = {"type": "ephemeral"}
            params["system"] = [block]
        if json_schema is not None:
            from anthropic import transform_schema

            params["output_config"] = {"format": {"type": "json_schema", "schema": transform_schema(json_schema)}}
        return params

    async def _read(
        self, call: StreamCall, prompt: str, system_prompt: str, options: CallOptions
    ) -> AsyncGenerator[Delta, None]:
        from anthropic import AsyncStream

        params = self._params(prompt, system_prompt, options.get("json_schema"), options.get("max_tokens"))
        call.max_tokens = params["max_tokens"]
        stopped = False
        input_tokens = output_tokens = cached = written = 0
        stream = await self._client.messages.create(**params)
        call.started = True
        async with stream:
            # The raw events, each decoded here: the SDK skips some events (ping) unparsed, and a
            # corrupted chunk anywhere means the stream cannot be trusted.
            async for sse in AsyncStream.raw_events(stream.response):
                if not sse.data:
                    continue
                event = json.loads(sse.data)
                etype = event.get("type") or sse.event
                if etype == "message_start":
                    u = event["message"].get("usage") or {}
                    cached, written, input_tokens = usage_tokens(u)
                    output_tokens = u.get("output_tokens") or 0
                elif etype == "content_block_delta":
                    delta = event.get("delta") or {}
                    if delta.get("type") == "text_delta" and delta.get("text"):
                        yield call.text(delta["text"])
                elif etype == "message_delta":
                    stop_reason = (event.get("delta") or {}).get("stop_reason")
                    if stop_reason == "model_context_window_exceeded":
                        raise ProviderError("context_overflow", f"{self.name}: the context window was exceeded")
                    if stop_reason:
                        call.finished(stop_reason, FINISH_REASONS)
                    usage = event.get("usage") or {}
                    if usage.get("output_tokens") is not None:
                        output_tokens = usage["output_tokens"]
                elif etype == "message_stop":
                    stopped = True
                elif etype == "error":
                    raise _stream_error(self.name, event.get("error") or {})
        if not stopped:
            call.reason = None  # no message_stop: the stream was cut short, whatever it said before
        call.usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, cached_tokens=cached,
                           cache_write_tokens=written)

    async def aclose(self) -> None:
        await self._client.close()
