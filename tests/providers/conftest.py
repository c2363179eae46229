"""Provider tests: real SDKs over HTTP against llmock's local server (its pytest fixture `llmock`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ebtui.config import ModelConfig, parse_model

# family -> (ebtui provider, llmock base path name, model name)
FAMILIES: dict[str, tuple[str, str, str]] = {
    "openai": ("openai", "openai", "gpt-4o-mini"),
    "anthropic": ("anthropic", "anthropic", "claude-sonnet-4-6"),
    "google": ("google", "gemini", "gemini-2.5-flash"),
}

# short enough that the whole fault matrix runs in seconds, long enough to hold on a loaded 2-core machine
FAST = {
    "backoff_s": 0.2,
    "backoff_max_s": 1.0,
    "retry_after_max_s": 5.0,
    "stall_timeout_s": 1.5,
    "timeout_s": 3.0,
    "connect_timeout_s": 2.0,
}

TEST_KEY = "sk-test-SECRET-never-shown-1234"


@pytest.fixture
def make_cfg(llmock: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[..., ModelConfig]:
    """A ModelConfig of one SDK family pointed at the llmock server, with fast retry settings."""
    monkeypatch.setenv("EBTUI_TEST_KEY", TEST_KEY)

    def make(family: str, **overrides: Any) -> ModelConfig:
        provider, route, model = FAMILIES[family]
        table = {"provider": provider, "model": model, "base_url": llmock.base_url(route),
                 "api_key_env": "EBTUI_TEST_KEY", **FAST, **overrides}
        return parse_model(f"{family}-mock", table, None)

    return make
