"""Google Gemini through google-genai's async streaming (client.aio.models.generate_content_stream).

google-genai does no HTTP retries unless asked; none are asked for here, so ebtui.providers.retry is the
only retry loop. A custom base URL needs api_version="v1beta" (the streaming route lives there).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ebtui.config import GoogleOptions, ModelConfig
from ebtui.providers.base import CallOptions, Delta, FinishReason, Usage
from ebtui.providers.common import ConfiguredClient, StreamCall

FINISH_REASONS: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "BLOCKLIST": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "SPII": "refusal",
    "LANGUAGE": "refusal",
    "OTHER": "unknown",
    "MALFORMED_RESPONSE": "error",
    "FINISH_REASON_UNSPECIFIED": "unknown",
}


class GoogleClient(ConfiguredClient):
    supports_json_schema = True

    def __init__(self, cfg: ModelConfig, *, http_options: dict[str, Any] | None = None) -> None:
        from google import genai
        from google.genai import types

        super().__init__(cfg)
        options: dict[str, Any] = {"timeout": int(cfg.timeout_s * 1000)}  # milliseconds; the httpx read timeout
        if cfg.effective_base_url:
            options.update(base_url=cfg.effective_base_url, api_version="v1beta")
        self.options = cfg.options_as(GoogleOptions)
        options.update(http_options or {})  # e.g. async_client_args={"transport": ...} in tests
        self._types = types
        self._client = genai.Client(api_key=cfg.api_key(), http_options=types.HttpOptions(**options))

    def _config(self, system_prompt: str, json_schema: dict[str, Any] | None, max_tokens: int | None) -> Any:
        cfg = self.cfg
        kwargs: dict[str, Any] = {}
        if system_prompt:
            kwargs["system_instruction"] = system_prompt
        limit = max_tokens or cfg.max_tokens
        if limit:
            kwargs["max_output_tokens"] = limit
        if cfg.temperature is not None:
            kwargs["temperature"] = cfg.temperature
        for key, value in (("top_p", self.options.top_p), ("seed", self.options.seed)):
            if value is not None:
                kwargs[key] = value
        if json_schema is not None:
            kwargs["response_mime_type"] = "application/json"
            kwargs["response_json_schema"] = json_schema
        return self._types.GenerateContentConfig(**kwargs), limit

    async def _read(
        self, call: StreamCall, prompt: str, system_prompt: str, options: CallOptions
    ) -> AsyncGenerator[Delta, None]:
        json_schema, max_tokens = options.get("json_schema"), options.get("max_tokens")
        config, call.max_tokens = self._config(system_prompt, json_schema, max_tokens)
        stream = await self._client.aio.models.generate_content_stream(
            model=self.cfg.model, contents=prompt, config=config
        )
        call.started = True
        async for chunk in stream:
            feedback = getattr(chunk, "prompt_feedback", None)
            if feedback is not None and getattr(feedback, "block_reason", None):
                call.reason, call.raw_reason = "refusal", f"prompt blocked: {feedback.block_reason}"
            meta = chunk.usage_metadata
            if meta is not None:
                call.usage = Usage(
                    input_tokens=meta.prompt_token_count or 0,
                    output_tokens=(meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
                    cached_tokens=meta.cached_content_token_count or 0,
                )
            for candidate in (chunk.candidates or ())[:1]:
                content = candidate.content
                for part in (content.parts or ()) if content is not None else ():
                    if part.text and not part.thought:
                        yield call.text(part.text)
                if candidate.finish_reason:
                    raw = getattr(candidate.finish_reason, "value", candidate.finish_reason)
                    call.finished(str(raw), FINISH_REASONS)

    async def aclose(self) -> None:
        await self._client.aio.aclose()
