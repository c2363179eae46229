from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import PUBLIC_DILEMMAS


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's config or writes into ./saved; no real keys leak in."""
    monkeypatch.setenv("EBTUI_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.delenv("EBTUI_MODELS", raising=False)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY",
                "DASHSCOPE_API_KEY", "OPENROUTER_API_KEY", "TOGETHER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def public_dilemmas_path() -> Path:
    if not PUBLIC_DILEMMAS.exists():
        pytest.skip(f"shared fixture absent (a fresh clone has no ../shared beside it): {PUBLIC_DILEMMAS}")
    return PUBLIC_DILEMMAS


@pytest.fixture(autouse=True)
def _forget_secrets() -> Iterator[None]:
    """Keys a test registered with the redactor (by loading a models.toml) do not redact the next test's text."""
    yield
    from ebtui import redact

    redact.forget_all()
