"""`ebtui models list|check` through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from tests.support.reliability_helpers import toml_table

SECRET = "sk-live-THIS-MUST-NEVER-APPEAR-0123456789"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def llmock_models(llmock: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A models.toml with one model each of anthropic, openai, google and xai, all pointed at llmock."""
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"):
        monkeypatch.setenv(var, SECRET)
    path = tmp_path / "mock-models.toml"
    path.write_text(toml_table({"models": {
        "claude": {"provider": "anthropic", "model": "claude-sonnet-4-6", "base_url": llmock.base_url("anthropic"),
                   "price_in": 3.0, "price_out": 15.0},
        "gpt": {"provider": "openai", "model": "gpt-4o-mini", "base_url": llmock.base_url("openai")},
        "gemini": {"provider": "google", "model": "gemini-2.5-flash", "base_url": llmock.base_url("gemini")},
        "grok": {"provider": "xai", "model": "grok-4", "base_url": llmock.base_url("xai"), "backoff_s": 0.1},
    }}), encoding="utf-8")
    return path


def test_check_passes_for_anthropic_openai_google_xai(llmock: Any, llmock_models: Path) -> None:
    result = run("models", "check", "claude", "gpt", "gemini", "grok", "--models", str(llmock_models))
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines() if line.split()}
    for name in ("claude", "gpt", "gemini", "grok"):
        assert lines[name].split()[1] == "ok", result.output
        assert lines[name].split()[2].endswith("s")  # a latency
    paths = {r.path for r in llmock.requests}
    assert any(p.startswith("/anthropic/") for p in paths) and any(p.startswith("/xai/") for p in paths)
    assert any(p.startswith("/gemini/") for p in paths) and any(p.startswith("/v1/") for p in paths)
    assert SECRET not in result.output
    llmock.assert_resilient(strict=True)


def test_check_reports_a_failing_model_and_exits_1(llmock: Any, llmock_models: Path) -> None:
    llmock.fail(401, provider="xai")
    result = run("--models", str(llmock_models), "models", "check", "grok", "gpt")
    assert result.exit_code == 1
    grok = next(line for line in result.output.splitlines() if line.startswith("grok"))
    assert "FAIL" in grok and "auth" in grok
    assert "1 of 2 model(s) failed: grok" in result.output


def test_check_retries_through_a_rate_limit(llmock: Any, llmock_models: Path) -> None:
    llmock.rate_limit(times=1, retry_after=0.2, provider="xai")
    result = run("--models", str(llmock_models), "models", "check", "grok")
    assert result.exit_code == 0, result.output
    assert "2 attempts" in result.output
    llmock.assert_resilient(strict=True)


def test_list_shows_key_variables_never_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    path = tmp_path / "models.toml"
    path.write_text('[models.gpt]\nprovider = "openai"\nmodel = "gpt-4.1"\nprice_in = 2\nprice_out = 8\n'
                    '[models.claude]\nprovider = "anthropic"\nmodel = "claude-x"\n', encoding="utf-8")
    result = run("models", "list")  # ./models.toml is found on its own
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    gpt = next(line for line in result.output.splitlines() if line.startswith("gpt"))
    claude = next(line for line in result.output.splitlines() if line.startswith("claude"))
    assert "OPENAI_API_KEY (set)" in gpt and "2/8" in gpt and gpt.startswith("gpt *")
    assert "ANTHROPIC_API_KEY (key missing)" in claude
    assert str(path) in result.output
    assert any(line.startswith("local") for line in result.output.splitlines())


def test_check_of_model_with_missing_key_fails(tmp_path: Path) -> None:
    (tmp_path / "models.toml").write_text('[models.claude]\nprovider = "anthropic"\nmodel = "c"\n', encoding="utf-8")
    result = run("models", "check", "claude")
    assert result.exit_code == 1
    assert "key missing: set the environment variable ANTHROPIC_API_KEY" in result.output


def test_config_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[models.x]\nprovider = "nope"\nmodel = "m"\n', encoding="utf-8")
    for args in (("models", "list", "--models", str(path)), ("--models", str(path), "models", "check")):
        result = run(*args)
        assert result.exit_code == 2
        assert result.output.strip().count("\n") == 0
        assert "model 'x'" in result.output and "field 'provider'" in result.output
    result = run("models", "check", "nosuchmodel")
    assert result.exit_code == 2 and "no model named 'nosuchmodel'" in result.output


def test_check_scripted_offline() -> None:
    result = run("models", "check", "scripted")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].split()[1] == "ok"
