"""Gemini's batch mode through google-genai (client.aio.batches): inlined requests, polled, inlined responses.

Each inlined request carries its custom id in `metadata.key`; responses are matched by that key, or by
position when a server does not echo metadata (the API returns inlined responses in request order).
Gemini 2.5 models cache long shared prefixes implicitly (also in batch mode); cached tokens are read from
`usage_metadata.cached_content_token_count` and priced as cached.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ebtui.config import ModelConfig
from ebtui.providers.base import ProviderError, Usage
from ebtui.providers.batch.base import BatchClient, BatchRequest, BatchResults, BatchState, BatchStatus
from ebtui.providers.errors import classify, from_status

if TYPE_CHECKING:
    from ebtui.providers.google_client import GoogleClient

_STATE: dict[str, BatchStatus] = {
    "JOB_STATE_QUEUED": "submitted",
    "JOB_STATE_PENDING": "submitted",
    "JOB_STATE_RUNNING": "in_progress",
    "JOB_STATE_UPDATING": "in_progress",
    "JOB_STATE_PAUSED": "in_progress",
    "JOB_STATE_CANCELLING": "in_progress",
    "JOB_STATE_SUCCEEDED": "done",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "done",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}


def _state_name(state: Any) -> str:
    return str(getattr(state, "value", state) or "")


class GoogleBatchClient(BatchClient):
    _chat: GoogleClient
    max_bytes = 16_000_000  # inline requests may total 20 MB

    def __init__(self, cfg: ModelConfig, *, discount: float = BatchClient.discount,
                 http_options: dict[str, Any] | None = None) -> None:
        from ebtui.providers.google_client import GoogleClient

        chat = GoogleClient(cfg, **({"http_options": http_options} if http_options else {}))
        super().__init__(cfg, chat, discount=discount)
        self._client = chat._client
        self._order: dict[str, list[str]] = {}  # batch -> custom ids in request order (this process only)

    def inlined(self, req: BatchRequest) -> dict[str, Any]:
        config, _limit = self._chat._config(req.system_prompt, req.json_schema, req.max_tokens)
        return {
            "contents": [{"role": "user", "parts": [{"text": req.prompt}]}],
            "config": config,
            "metadata": {"key": req.custom_id},
        }

    async def submit(self, requests: list[BatchRequest], *, label: str) -> str:
        try:
            job = await self._client.aio.batches.create(
                model=self.model, src=[self.inlined(r) for r in requests],  # type: ignore[arg-type]
                config={"display_name": label[:120]},
            )
        except Exception as exc:  # noqa: BLE001 - every failure becomes a ProviderError
            raise classify(self.name, exc, streaming=False) from exc
        if not job.name:
            raise ProviderError("server", f"{self.name}: the batch was created without a name")
        self._order[job.name] = [r.custom_id for r in requests]
        return job.name

    async def _get(self, batch_id: str) -> Any:
        try:
            return await self._client.aio.batches.get(name=batch_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc

    async def poll(self, batch_id: str) -> BatchState:
        job = await self._get(batch_id)
        raw = _state_name(job.state)
        stats = job.completion_stats
        done = int(getattr(stats, "successful_count", 0) or 0) if stats else 0
        failed = int(getattr(stats, "failed_count", 0) or 0) if stats else 0
        incomplete = int(getattr(stats, "incomplete_count", 0) or 0) if stats else 0
        return BatchState(id=batch_id, status=_STATE.get(raw, "in_progress"), raw_status=raw,
                          total=done + failed + incomplete, completed=done, failed=failed)

    async def results(self, batch_id: str) -> BatchResults:
        job = await self._get(batch_id)
        res = BatchResults()
        responses = (job.dest.inlined_responses if job.dest is not None else None) or []
        order = self._order.get(batch_id, [])
        for i, r in enumerate(responses):
            key = (r.metadata or {}).get("key") if isinstance(r.metadata, dict) else None
            if key is None and i < len(order):
                key = order[i]
            if key is None:
                continue
            res.items[str(key)] = self.item(r)
        return res

    def item(self, r: Any) -> Any:
        from ebtui.providers.google_client import FINISH_REASONS

        if r.error is not None:
            code = int(getattr(r.error, "code", 0) or 0)
            status = code if 400 <= code < 600 else 500
            return from_status(self.name, status, str(getattr(r.error, "message", "") or "batch item failed"))
        resp = r.response
        if resp is None:
            return ProviderError("empty", f"{self.name}: the batch item has no response")
        feedback = getattr(resp, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None):
            return ProviderError("refusal", f"{self.name}: the prompt was blocked ({feedback.block_reason})")
        meta = resp.usage_metadata
        usage = Usage(batch=True)
        if meta is not None:
            usage = Usage(input_tokens=meta.prompt_token_count or 0,
                          output_tokens=(meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
                          cached_tokens=meta.cached_content_token_count or 0, batch=True)
        parts: list[str] = []
        reason = None
        raw = None
        for candidate in (resp.candidates or ())[:1]:
            content = candidate.content
            for part in (content.parts or ()) if content is not None else ():
                if part.text and not part.thought:
                    parts.append(part.text)
            if candidate.finish_reason:
                raw = _state_name(candidate.finish_reason)
                reason = FINISH_REASONS.get(raw, "unknown")
        return self.answer("".join(parts), reason, usage, raw_reason=raw)

    async def find(self, label: str, *, since: float, count: int, exclude: frozenset[str] = frozenset(),
                   limit: int = 1000) -> str | None:
        async def jobs() -> AsyncIterator[Any]:
            async for job in await self._client.aio.batches.list(config={"page_size": 100}):
                yield job

        def pick(job: Any) -> str | None:
            return str(job.name) if job.name and job.display_name == label[:120] and job.name not in exclude else None

        return await self._first_listed(jobs, pick, limit)

    async def cancel(self, batch_id: str) -> None:
        try:
            await self._client.aio.batches.cancel(name=batch_id)
        except Exception as exc:  # noqa: BLE001
            raise classify(self.name, exc, streaming=False) from exc

    async def aclose(self) -> None:
        await self._chat.aclose()
