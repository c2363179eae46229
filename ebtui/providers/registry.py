"""From configuration to clients: one ModelClient per configured model, retries applied to every one."""

from __future__ import annotations

from collections.abc import Iterable

from ebtui.config import ConfigError, ModelConfig, ModelsConfig, default_model_name
from ebtui.providers.base import ModelClient
from ebtui.providers.retry import RetryingClient, RetryPolicy

__all__ = ["build_client", "build_clients", "default_model_name", "retry_policy"]


def retry_policy(cfg: ModelConfig) -> RetryPolicy:
    return RetryPolicy(
        attempts=cfg.attempts,
        backoff_s=cfg.backoff_s,
        backoff_max_s=cfg.backoff_max_s,
        retry_after_max_s=cfg.retry_after_max_s,
        stall_timeout_s=cfg.stall_timeout_s,
    )


def build_raw_client(cfg: ModelConfig) -> ModelClient:
    """The provider's client without the retry wrapper. Raises ConfigError when its key is missing."""
    family = cfg.client_type
    if family == "scripted":
        from ebtui.providers.scripted import scripted_from_config

        return scripted_from_config(cfg)
    if family == "local":
        from ebtui.providers.local import LocalClient

        return LocalClient(cfg)
    if family == "openai":
        from ebtui.providers.openai_client import OpenAIClient

        return OpenAIClient(cfg)
    if family == "anthropic":
        from ebtui.providers.anthropic_client import AnthropicClient

        return AnthropicClient(cfg)
    if family == "google":
        from ebtui.providers.google_client import GoogleClient

        return GoogleClient(cfg)
    raise ConfigError(f"{cfg.source or 'models'}: model {cfg.name!r}: no client for provider {cfg.provider!r}")


def build_client(cfg: ModelConfig) -> ModelClient:
    """The model's client with retries, stall detection and its concurrency limit.

    Raises ConfigError (naming file, model and field) when the model's key variable is unset.
    """
    return RetryingClient(build_raw_client(cfg), retry_policy(cfg), max_concurrency=cfg.max_concurrency)


def build_clients(config: ModelsConfig, names: Iterable[str]) -> dict[str, ModelClient]:
    """Clients for the named models (each name once). Raises ConfigError for an unknown name or missing key."""
    out: dict[str, ModelClient] = {}
    for name in names:
        if name not in out:
            out[name] = build_client(config.get(name))
    return out
