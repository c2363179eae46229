"""Anthropic's Message Batches API (/v1/messages/batches): create, retrieve, then the results JSONL.

The results are fetched from `{base_url}/v1/messages/batches/{id}/results` through the SDK's own HTTP client
(auth, version header, timeouts) rather than from the batch's `results_url`: some servers (llmock) return a
relative results_url, which the SDK's `messages.batches.results()` follows to a 404.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ebtui.config import ModelConfig
from ebtui.providers.base import ProviderError, Usage
from ebtui.providers.batch.base import BatchClient, BatchRequest, BatchResults, BatchState
from ebtui.providers.errors import classify, from_status

if TYPE_CHECKING:
    from ebtui.providers.anthropic_client import AnthropicClient

#: a 1-hour cache write costs twice the input price
CACHE_WRITE_1H = 2.0
#: a batch may hold 100,000 requests or 256 MB
MAX_BATCH_BYTES = 200_000_000


class AnthropicBatchClient(BatchClient):
    _chat: AnthropicClient
    max_bytes = MAX_BATCH_BYTES

    def __init__(self, cfg: ModelConfig, *, discount: float = BatchClient.discount) -> None:
        from ebtui.providers.anthropic_client import AnthropicClient

        chat = AnthropicClient(cfg)  # builds the request params (with its cache breakpoints)
        super().__init__(cfg, chat, discount=discount)
        self._client = chat._client

    def params(self, req: BatchRequest) -> dict[str, Any]:
        """The streaming client's params, without `stream`, and with 1-hour cache breakpoints: a batch's
        items are processed over minutes to hours, longer than the default 5-minute cache lives."""
        params = self._chat._params(req.prompt, req.system_prompt, req.json_schema, req.max_tokens)
        params.pop("stream", None)
        blocks = list(params.get("system") or [])
        for message in params.get("messages", []):
            if isinstance(message.get("content"), list):
                blocks += message["content"]
        for block in blocks:
            if "cache_control" in block:
                block["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
        return params

    async def submit(self, requests: list[BatchRequest], *, label: str) -> str:
        payload = [{"custom_id": r.custom_id, "params": self.params(r)} for r in requests]
        try:
            batch = await self._client.messages.batches.create(requests=payload)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - every failure becomes a ProviderError
            raise classify(self.name, exc, streaming=False) from exc
        return batch.id

    async def poll(self, batch_id: str) -> BatchState:
        try:
            b = await self._client.messages.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc
        c = b.request_counts
        failed = (c.errored or 0) + (c.canceled or 0) + (c.expired or 0)
        total = (c.processing or 0) + (c.succeeded or 0) + failed
        if b.processing_status == "ended":
            status = "done"
        elif b.processing_status == "canceling":
            status = "in_progress"
        else:
            status = "in_progress" if (c.succeeded or failed) else "submitted"
        return BatchState(id=batch_id, status=status, raw_status=b.processing_status,  # type: ignore[arg-type]
                          total=total, completed=c.succeeded or 0, failed=failed)

    async def _results_text(self, batch_id: str) -> str:
        import httpx2 as httpx  # the HTTP library this SDK is built on

        try:
            response = await self._client.get(f"/v1/messages/batches/{batch_id}/results", cast_to=httpx.Response)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc
        return response.text

    async def results(self, batch_id: str) -> BatchResults:
        res = BatchResults()
        for line in (await self._results_text(batch_id)).splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a broken line: its item is absent and retried
            cid = row.get("custom_id")
            if isinstance(cid, str):
                res.items[cid] = self.item(row.get("result") or {})
        return res

    def item(self, result: dict[str, Any]) -> Any:
        from ebtui.providers.anthropic_client import ERROR_STATUS, FINISH_REASONS, usage_tokens

        rtype = result.get("type")
        if rtype == "succeeded":
            msg = result.get("message") or {}
            cached, written, total_in = usage_tokens(msg.get("usage") or {})
            usage = Usage(input_tokens=total_in, output_tokens=(msg.get("usage") or {}).get("output_tokens") or 0,
                          cached_tokens=cached, cache_write_tokens=written, batch=True)
            text = "".join(b.get("text") or "" for b in msg.get("content") or [] if b.get("type") == "text")
            raw = msg.get("stop_reason")
            if raw == "model_context_window_exceeded":
                return ProviderError("context_overflow", f"{self.name}: the context window was exceeded")
            reason = FINISH_REASONS.get(raw, "unknown") if raw else None
            return self.answer(text, reason, usage, raw_reason=raw, model=msg.get("model"),
                               cache_write_share=CACHE_WRITE_1H)
        if rtype == "errored":
            error = (result.get("error") or {}).get("error") or result.get("error") or {}
            etype = str(error.get("type", "api_error"))
            return from_status(self.name, ERROR_STATUS.get(etype, 500), str(error.get("message") or etype),
                               code=etype)
        if rtype == "expired":
            return ProviderError("timeout", f"{self.name}: the batch item expired before it was processed")
        return ProviderError("server", f"{self.name}: the batch item was {rtype or 'not processed'}")

    async def find(self, label: str, *, since: float, count: int, exclude: frozenset[str] = frozenset(),
                   limit: int = 1000) -> str | None:
        matches: list[str] = []
        try:
            n = 0
            async for b in self._client.messages.batches.list(limit=100):
                n += 1
                created = b.created_at.timestamp()
                c = b.request_counts
                total = (c.processing or 0) + (c.succeeded or 0) + (c.errored or 0) + (c.canceled or 0) + \
                    (c.expired or 0)
                if b.id not in exclude and since - 5 <= created <= since + 60 and total == count:
                    matches.append(b.id)
                if n >= limit:
                    break
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc
        return matches[0] if len(matches) == 1 else None

    async def cancel(self, batch_id: str) -> None:
        try:
            await self._client.messages.batches.cancel(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc

    async def aclose(self) -> None:
        await self._chat.aclose()
