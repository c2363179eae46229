"""The one small interface every model provider implements.

Providers speak prompts and completions. They know nothing of dilemmas, rounds or judgments.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Unpack

from pydantic import BaseModel, Field

from ebtui.redact import redact

#: A prompt may open with a stable prefix (the same in many calls) ended by this separator. Providers that
#: cache prompts explicitly put a cache breakpoint there (Anthropic) or key their cache routing on the text
#: before it (OpenAI's prompt_cache_key). It is ordinary text (a Markdown rule) and is sent as it is.
PROMPT_CACHE_BREAK = "\n\n---\n\n"


def split_cacheable(prompt: str) -> tuple[str, str]:
    """(stable prefix, rest) at the first PROMPT_CACHE_BREAK; ("", prompt) when there is none."""
    i = prompt.find(PROMPT_CACHE_BREAK)
    if i <= 0:
        return "", prompt
    return prompt[:i], prompt[i:]


FinishReason = Literal["stop", "length", "refusal", "content_filter", "error", "unknown"]


class Usage(BaseModel):
    """Token usage of one call (or a sum of calls)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # input tokens served from the provider's prompt cache
    cache_write_tokens: int = 0  # input tokens written to the prompt cache (Anthropic bills them extra)
    cost_usd: float | None = None  # None when no price is configured
    batch: bool = False  # answered through the provider's batch API (billed at its batch price)

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=cost,
            batch=self.batch and other.batch,
        )


class Completion(BaseModel):
    """The end of one model call: what came back and what it cost."""

    text: str
    finish_reason: FinishReason = "stop"
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0  # wall time of the successful attempt
    first_token_s: float | None = None
    model: str = ""  # the provider's model name
    attempts: int = 1


ErrorKind = Literal[
    "rate_limit",  # 429
    "server",  # 5xx, 408, 409
    "connection",  # could not connect / connection dropped
    "timeout",  # read timeout
    "stream",  # failure in the middle of a stream: disconnect, corrupted chunk, no finish reason
    "stall",  # no token for the configured stall time
    "empty",  # the model answered nothing
    "refusal",  # the model refused
    "truncated",  # cut off by max tokens
    "auth",  # 401/403
    "bad_request",  # 400/404/422
    "context_overflow",  # prompt too long
    "quota",  # quota exhausted: not retryable
    "config",  # misconfiguration (missing key, unknown model)
    "unavailable",  # a dependency is not installed (e.g. the local model extra)
]

#: the finish reasons that make an answer a failure, and the ProviderError kind each one is
BAD_FINISH: dict[FinishReason, ErrorKind] = {
    "length": "truncated", "refusal": "refusal", "content_filter": "refusal", "error": "stream",
}

#: kinds worth another attempt; an empty answer too (a fresh sample usually answers)
RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "server", "connection", "timeout", "stream", "stall", "empty"}
)


class ProviderError(Exception):
    """A model call that did not produce an answer. Never content: its text is not a model reply."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        partial_text: str = "",
        attempts: int = 1,
    ) -> None:
        message = redact(message)  # servers echo keys back (a 401 body): never stored or shown
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.partial_text = redact(partial_text)  # what streamed before the failure; for the record only
        self.attempts = attempts

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{self.kind}{status}: {self.message}"


@dataclass(frozen=True, slots=True)
class Delta:
    """A piece of streamed text."""

    text: str


@dataclass(frozen=True, slots=True)
class Retrying:
    """The call failed and will be restarted: everything streamed so far is discarded."""

    attempt: int  # the attempt that is about to start (2, 3, ...)
    error: ProviderError
    delay_s: float


StreamItem = Delta | Retrying | Completion


class CallOptions(TypedDict, total=False):
    """The options of one model call, beside its prompt and system prompt. Every client's `stream` takes
    them as `**options: Unpack[CallOptions]`, so a wrapper passes them on as `**options` unchanged."""

    #: ask for output matching this JSON schema (clients with supports_json_schema; others ignore it)
    json_schema: dict[str, Any] | None
    #: the most tokens to generate (None: the model's configured max_tokens)
    max_tokens: int | None


class ModelClient(abc.ABC):
    """One configured model. `name` is the user's name for it (the key in models.toml)."""

    name: str
    provider: str
    model: str
    #: whether this client can be asked for output matching a JSON schema
    supports_json_schema: bool = False

    @abc.abstractmethod
    def stream(
        self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]
    ) -> AsyncIterator[StreamItem]:
        """Yield Delta pieces (and Retrying when a retry restarts the call) and end with one Completion.

        Raises ProviderError when the call fails after its retries: an empty answer, a refusal, a
        max-tokens cut-off, a stream that ends without a finish reason are errors, never a Completion.
        """

    async def generate(self, prompt: str, system_prompt: str, **options: Unpack[CallOptions]) -> Completion:
        completion: Completion | None = None
        async for item in self.stream(prompt, system_prompt, **options):
            if isinstance(item, Completion):
                completion = item
        if completion is None:  # a stream must end with a Completion; anything else is a provider bug
            raise ProviderError("stream", f"{self.name}: stream ended without a completion")
        return completion

    def unlimited(self) -> ModelClient:
        """This client without a concurrency limit of its own, for a caller that limits the model's calls
        itself (a tournament's LimitedClient), so that one layer limits each call, never two. A client
        with no limit of its own is itself."""
        return self

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


class WrappingClient(ModelClient):
    """A client around another one (retries, a tournament's limits, a batch API): the same model under the
    same names; closing it closes the inner client."""

    def __init__(self, inner: ModelClient, *, name: str | None = None, provider: str | None = None) -> None:
        self.inner = inner
        self.name = inner.name if name is None else name
        self.provider = inner.provider if provider is None else provider
        self.model = inner.model
        self.supports_json_schema = inner.supports_json_schema

    async def aclose(self) -> None:
        await self.inner.aclose()
