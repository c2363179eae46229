"""The one small interface every provider's batch API is reached through.

A batch client takes a list of requests — (custom_id, system_prompt, prompt, params) — submits them as one
batch, reports the batch's state, and returns per-item results: a Completion, or the ProviderError the item
is. Like the streaming clients, it knows nothing of rounds or judgments; an item that failed, was refused,
cut off, expired or answered nothing is an error, never a Completion.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ebtui.config import ModelConfig
from ebtui.providers.base import Completion, FinishReason, ModelClient, ProviderError, Usage
from ebtui.providers.common import Timer, cost_for, finish, safe_repr
from ebtui.providers.errors import classify

#: the batch price as a share of the list price (OpenAI, Anthropic, Gemini, Together and DashScope: half)
DEFAULT_BATCH_DISCOUNT = 0.5

BatchStatus = Literal["submitted", "in_progress", "done", "failed", "expired", "cancelled"]
#: a batch in one of these states will not change any more
ENDED: frozenset[str] = frozenset({"done", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class BatchRequest:
    """One call of a batch. `custom_id` is the caller's key for the item (letters, digits, -, _; <= 64)."""

    custom_id: str
    system_prompt: str
    prompt: str
    json_schema: dict[str, Any] | None = None
    max_tokens: int | None = None


@dataclass
class BatchState:
    """Where a submitted batch stands."""

    id: str
    status: BatchStatus
    total: int = 0
    completed: int = 0
    failed: int = 0
    raw_status: str = ""

    @property
    def ended(self) -> bool:
        return self.status in ENDED


@dataclass
class BatchResults:
    """Per-item outcome of an ended batch: a Completion or the ProviderError of the item. Items the
    provider returned nothing for (an expired or cancelled batch) are absent; the caller retries them."""

    items: dict[str, Completion | ProviderError] = field(default_factory=dict)


class BatchClient(abc.ABC):
    """One configured model's batch API."""

    name: str
    provider: str
    model: str
    discount: float = DEFAULT_BATCH_DISCOUNT
    #: the most request text one batch may carry (a batch is split before it)
    max_bytes: int = 100_000_000
    _chat: ModelClient

    def __init__(self, cfg: ModelConfig, chat: ModelClient, *, discount: float = DEFAULT_BATCH_DISCOUNT) -> None:
        """`chat`: the model's streaming client, which builds the request bodies the batch carries."""
        self.cfg = cfg
        self.name = cfg.name
        self.provider = cfg.provider
        self.model = cfg.model
        self.discount = discount
        self._chat = chat

    def __repr__(self) -> str:
        return safe_repr(self, name=self.name, provider=self.provider, model=self.model,
                         base_url=self.cfg.effective_base_url)

    def answer(self, text: str, reason: FinishReason | None, usage: Usage, *, raw_reason: Any = None,
               model: str | None = None, cache_write_share: float | None = None) -> Completion | ProviderError:
        """One item's Completion, priced at this batch's discount, or the ProviderError its answer is."""
        usage = cost_for(usage, self.cfg, discount=self.discount, cache_write_share=cache_write_share)
        return item_completion(self.name, model or self.model, text, reason, usage, raw_reason=raw_reason,
                               max_tokens=self.cfg.max_tokens)

    async def _first_listed(self, jobs: Callable[[], AsyncIterable[Any]], pick: Callable[[Any], str | None],
                            limit: int) -> str | None:
        """The id `pick` gives for the first of the provider's listed batches it recognises (None: not this
        one), looking at `limit` batches at most; an SDK failure is the ProviderError it means."""
        try:
            n = 0
            async for job in jobs():
                found = pick(job)
                if found is not None:
                    return found
                n += 1
                if n >= limit:
                    break
        except Exception as exc:  # noqa: BLE001 - every failure becomes a ProviderError
            raise classify(self.name, exc, streaming=False) from exc
        return None

    @abc.abstractmethod
    async def submit(self, requests: list[BatchRequest], *, label: str) -> str:
        """Submit the requests as one batch and return its id. Raises ProviderError."""

    @abc.abstractmethod
    async def poll(self, batch_id: str) -> BatchState:
        """The batch's current state. Raises ProviderError."""

    @abc.abstractmethod
    async def results(self, batch_id: str) -> BatchResults:
        """Per-item results of an ended batch. Raises ProviderError."""

    async def find(self, label: str, *, since: float, count: int, exclude: frozenset[str] = frozenset()
                   ) -> str | None:
        """The id of a batch this process's predecessor submitted — with this label (OpenAI metadata, Gemini
        display name), or (Anthropic, whose batches carry no label) the one batch of `count` requests created
        within a minute after `since` (unix time) — not in `exclude`; None when there is none. A wrong match
        costs nothing but a wait: its results lack the caller's custom ids, whose items are then retried."""
        return None

    async def cancel(self, batch_id: str) -> None:  # noqa: B027 - optional
        """Ask the provider to cancel the batch."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


def item_completion(
    name: str,
    model: str,
    text: str,
    finish_reason: FinishReason | None,
    usage: Usage,
    *,
    raw_reason: Any = None,
    max_tokens: int | None = None,
) -> Completion | ProviderError:
    """The Completion of one batch item, or the ProviderError a cut-off, refused or empty answer is —
    the same checks as a streamed answer (ebtui.providers.common.finish)."""
    try:
        return finish(name, model, text, finish_reason, usage, Timer(), raw_reason=raw_reason,
                      max_tokens=max_tokens)
    except ProviderError as exc:
        return exc
