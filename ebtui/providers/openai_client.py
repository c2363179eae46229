"""OpenAI chat completions, and every OpenAI-compatible endpoint (xAI, Qwen, OpenRouter, Together, Ollama,
vLLM, llama.cpp server, any base_url): async streaming with usage in the last chunk."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ebtui.config import ModelConfig
from ebtui.providers.base import CallOptions, Delta, FinishReason, Usage, split_cacheable
from ebtui.providers.common import ConfiguredClient, StreamCall, prompt_cache_key, sdk_options

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "stop",
    "function_call": "stop",
    "end_turn": "stop",
    "eos": "stop",
}


class OpenAIClient(ConfiguredClient):
    def __init__(self, cfg: ModelConfig) -> None:
        from openai import AsyncOpenAI, Timeout

        super().__init__(cfg)
        self.supports_json_schema = bool(cfg.extras.get("json_schema", True))
        key = cfg.api_key() or "no-key"  # keyless local servers still need a non-empty string
        self._client = AsyncOpenAI(api_key=key, **sdk_options(cfg, Timeout))

    def _params(self, prompt: str, system_prompt: str, json_schema: dict[str, Any] | None,
                max_tokens: int | None) -> dict[str, Any]:
        cfg = self.cfg
        messages = []
        if system_prompt:
            messages.append({"role": "system", "content": system_prompt})
        messages.append({"role": "user", "content": prompt})
        params: dict[str, Any] = {
            "model": cfg.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        limit = max_tokens or cfg.max_tokens
        if limit:
            # OpenAI's own reasoning models reject max_tokens; compatible servers mostly know only max_tokens
            params["max_completion_tokens" if cfg.provider == "openai" else "max_tokens"] = limit
        if cfg.temperature is not None:
            params["temperature"] = cfg.temperature
        for key in ("top_p", "seed", "reasoning_effort"):
            if key in cfg.extras:
                params[key] = cfg.extras[key]
        cache_key: str | None = cfg.extras.get("prompt_cache_key")
        if cache_key is None and cfg.provider == "openai":  # compatible servers may reject the unknown field
            cache_key = prompt_cache_key(system_prompt + split_cacheable(prompt)[0])
        if cache_key:
            # routes calls sharing the system prompt and the prompt's stable prefix to the same cache
            params["prompt_cache_key"] = cache_key
        if json_schema is not None and self.supports_json_schema:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": json_schema, "strict": False},
            }
        return params

    async def _read(
        self, call: StreamCall, prompt: str, system_prompt: str, options: CallOptions
    ) -> AsyncGenerator[Delta, None]:
        params = self._params(prompt, system_prompt, options.get("json_schema"), options.get("max_tokens"))
        call.max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
        refusal: list[str] = []
        stream = await self._client.chat.completions.create(**params)
        call.started = True
        async with stream:
            async for chunk in stream:
                if chunk.usage is not None:
                    details = getattr(chunk.usage, "prompt_tokens_details", None)
                    call.usage = Usage(
                        input_tokens=chunk.usage.prompt_tokens or 0,
                        output_tokens=chunk.usage.completion_tokens or 0,
                        cached_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
                    )
                for choice in chunk.choices or ():
                    if choice.index:
                        continue
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            yield call.text(delta.content)
                        if getattr(delta, "refusal", None):
                            refusal.append(delta.refusal)
                    if choice.finish_reason:
                        call.finished(choice.finish_reason, _FINISH)
        if refusal:
            call.reason, call.raw_reason = "refusal", "".join(refusal)

    async def aclose(self) -> None:
        await self._client.close()
