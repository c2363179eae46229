"""Provider-side batch APIs: submit many calls at once, at about half the price, and read per-item results.

`batch_client(cfg)` gives the batch client of a configured model, or None when its provider has no batch
API (the model then runs as usual, streamed). OpenAI-compatible presets whose servers offer /v1/batches
(Together, DashScope) have one; any other OpenAI-compatible server can opt in with `batch = true` in its
models.toml table, and any model can opt out with `batch = false`.
"""

from __future__ import annotations

from ebtui.config import ModelConfig
from ebtui.providers.batch.base import (
    DEFAULT_BATCH_DISCOUNT,
    ENDED,
    BatchClient,
    BatchRequest,
    BatchResults,
    BatchState,
    BatchStatus,
)

__all__ = [
    "BATCH_PROVIDERS",
    "DEFAULT_BATCH_DISCOUNT",
    "ENDED",
    "BatchClient",
    "BatchRequest",
    "BatchResults",
    "BatchState",
    "BatchStatus",
    "batch_client",
    "supports_batch",
]

#: providers whose servers offer a batch API by default
BATCH_PROVIDERS = frozenset({"openai", "anthropic", "google", "together", "qwen"})


def supports_batch(cfg: ModelConfig) -> bool:
    """Whether the model's calls can go through a batch API (models.toml `batch` overrides the default)."""
    if cfg.client_type not in ("openai", "anthropic", "google"):
        return False
    flag: bool | None = getattr(cfg.options, "batch", None)
    if flag is not None:
        return bool(flag)
    return cfg.provider in BATCH_PROVIDERS


def batch_client(cfg: ModelConfig) -> BatchClient | None:
    """The model's batch client, or None when it has no batch API. Raises ConfigError for a missing key."""
    if not supports_batch(cfg):
        return None
    if cfg.client_type == "anthropic":
        from ebtui.providers.batch.anthropic_batch import AnthropicBatchClient

        return AnthropicBatchClient(cfg)
    if cfg.client_type == "google":
        from ebtui.providers.batch.google_batch import GoogleBatchClient

        return GoogleBatchClient(cfg)
    from ebtui.providers.batch.openai_batch import OpenAIBatchClient

    return OpenAIBatchClient(cfg)
