"""OpenAI's Batch API (and OpenAI-compatible servers that offer it): the requests as a JSONL file uploaded to
/v1/files, a batch over /v1/chat/completions created at /v1/batches, polled, and its output and error files
read back. Each line's body is exactly what the streaming client would send, without `stream`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ebtui.config import ModelConfig
from ebtui.providers.base import ProviderError, Usage
from ebtui.providers.batch.base import BatchClient, BatchRequest, BatchResults, BatchState, BatchStatus
from ebtui.providers.errors import classify, from_status

if TYPE_CHECKING:
    from ebtui.providers.openai_client import OpenAIClient

ENDPOINT = "/v1/chat/completions"

_STATUS: dict[str, BatchStatus] = {
    "validating": "submitted",
    "in_progress": "in_progress",
    "finalizing": "in_progress",
    "completed": "done",
    "failed": "failed",
    "expired": "expired",
    "cancelling": "in_progress",
    "cancelled": "cancelled",
}


class OpenAIBatchClient(BatchClient):
    _chat: OpenAIClient
    max_bytes = 180_000_000  # the input file may be 200 MB

    def __init__(self, cfg: ModelConfig, *, discount: float = BatchClient.discount) -> None:
        from ebtui.providers.openai_client import OpenAIClient

        chat = OpenAIClient(cfg)  # builds the request bodies; its SDK client reaches files and batches
        super().__init__(cfg, chat, discount=discount)
        self._client = chat._client

    def body(self, req: BatchRequest) -> dict[str, Any]:
        params = self._chat._params(req.prompt, req.system_prompt, req.json_schema, req.max_tokens)
        params.pop("stream", None)
        params.pop("stream_options", None)
        return params

    async def submit(self, requests: list[BatchRequest], *, label: str) -> str:
        lines = [json.dumps({"custom_id": r.custom_id, "method": "POST", "url": ENDPOINT, "body": self.body(r)},
                            ensure_ascii=False) for r in requests]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            upload = await self._client.files.create(file=(f"{label}.jsonl", data), purpose="batch")
            batch = await self._client.batches.create(
                input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h",
                metadata={"ebtui": label[:500]},
            )
        except Exception as exc:  # noqa: BLE001 - every failure becomes a ProviderError
            raise classify(self.name, exc, streaming=False) from exc
        return batch.id

    async def poll(self, batch_id: str) -> BatchState:
        try:
            b = await self._client.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc
        counts = b.request_counts
        return BatchState(
            id=batch_id, status=_STATUS.get(b.status, "in_progress"), raw_status=b.status,
            total=(counts.total if counts else 0) or 0,
            completed=(counts.completed if counts else 0) or 0,
            failed=(counts.failed if counts else 0) or 0,
        )

    async def _lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        try:
            content = await self._client.files.content(file_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc
        out = []
        for line in content.text.splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a broken line: its item is absent and retried
        return out

    async def results(self, batch_id: str) -> BatchResults:
        try:
            b = await self._client.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc
        res = BatchResults()
        for line in [*await self._lines(b.error_file_id), *await self._lines(b.output_file_id)]:
            cid = line.get("custom_id")
            if not isinstance(cid, str):
                continue
            res.items[cid] = self.item(line)
        return res

    def item(self, line: dict[str, Any]) -> Any:
        error = line.get("error")
        response = line.get("response") or {}
        status = int(response.get("status_code") or 0)
        body = response.get("body") or {}
        if error or status != 200:
            err = (body.get("error") if isinstance(body, dict) else None) or error or {}
            text = str(err.get("message") or err.get("code") or f"HTTP {status}")
            return from_status(self.name, status or 500, text, code=str(err.get("code") or ""))
        choices = body.get("choices") or []
        choice = next((c for c in choices if not c.get("index")), None)
        if choice is None:
            return ProviderError("empty", f"{self.name}: the batch item has no choice")
        msg: dict[str, Any] = choice.get("message") or {}
        u = body.get("usage") or {}
        details = u.get("prompt_tokens_details") or {}
        usage = Usage(input_tokens=u.get("prompt_tokens") or 0, output_tokens=u.get("completion_tokens") or 0,
                      cached_tokens=details.get("cached_tokens") or 0, batch=True)
        from ebtui.providers.openai_client import FINISH_REASONS

        raw = choice.get("finish_reason")
        reason = FINISH_REASONS.get(raw, "unknown") if raw else None
        if msg.get("refusal"):
            reason, raw = "refusal", msg["refusal"]
        return self.answer(msg.get("content") or "", reason, usage, raw_reason=raw, model=body.get("model"))

    async def find(self, label: str, *, since: float, count: int, exclude: frozenset[str] = frozenset(),
                   limit: int = 1000) -> str | None:
        def pick(b: Any) -> str | None:
            return str(b.id) if b.id and (b.metadata or {}).get("ebtui") == label[:500] and b.id not in exclude else None

        return await self._first_listed(lambda: self._client.batches.list(limit=100), pick, limit)

    async def cancel(self, batch_id: str) -> None:
        try:
            await self._client.batches.cancel(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc

    async def aclose(self) -> None:
        await self._chat.aclose()
