"""Secrets: recognisable fake API keys in the environment, every command that touches models run against
llmock, and not one of the keys in any saved file, report, log line or output."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.config import load_models_config
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.round import RoundSpec, run_round
from ebtui.core.store import ResultsStore
from ebtui.providers.registry import build_clients
from tests.support.factories import open_store
from tests.support.reliability_helpers import FAST_RETRIES, LLMOCK_FAMILIES, run_ebtui, toml_table, walk_files

CANARIES = {
    "OPENAI_API_KEY": "sk-test-CANARY-openai-7f3a9c1e55d04b2a",
    "ANTHROPIC_API_KEY": "sk-ant-test-CANARY-anthropic-c0ffee42d00d",
    "GEMINI_API_KEY": "AIza-test-CANARY-gemini-9b8a7c6d5e4f",
    "GOOGLE_API_KEY": "AIza-test-CANARY-google-1a2b3c4d5e6f",
    "XAI_API_KEY": "xai-test-CANARY-grok-0123456789abcdef",
}
#: distinctive pieces too, so a key cut in half or re-encoded is still found
PIECES = [v.rsplit("-", 1)[-1] for v in CANARIES.values()] + ["CANARY"]


def assert_no_secret(text: str | bytes, where: str) -> None:
    blob = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
    for piece in [*CANARIES.values(), *PIECES]:
        assert piece.encode() not in blob, f"{piece!r} found in {where}"


@pytest.fixture
def keyed_env(llmock: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Canary keys in the environment (after llmock put its dummies there) and a models.toml naming only
    the variables, for four models on llmock: OpenAI, Anthropic, Gemini and xAI (OpenAI-compatible)."""
    for var, value in CANARIES.items():
        monkeypatch.setenv(var, value)
    lines: list[str] = []
    routes = {**{n: v for n, v in LLMOCK_FAMILIES.items()}, "grok": ("xai", "xai", "grok-4")}
    for name, (provider, route, model) in routes.items():
        lines.append(toml_table({}).strip())
        lines.append(f"[models.{name}]")
        table = {"provider": provider, "model": model, "base_url": llmock.base_url(route), "max_tokens": 300,
                 **FAST_RETRIES}
        lines += [ln for ln in toml_table(table).splitlines() if ln]
    path = tmp_path / "models.toml"
    path.write_text("\n".join(x for x in lines if x) + "\n")
    return path


def test_no_key_in_any_file_log_or_output(keyed_env: Path, tmp_path: Path, llmock: Any) -> None:
    models = keyed_env
    store = tmp_path / "store"
    reports = tmp_path / "reports"
    d0 = load_dilemmas()[0].id
    tour = tmp_path / "t.toml"
    tour.write_text(toml_table({"name": "secrets", "models": ["gpt", "grok"], "dilemmas": [d0],
                                "judges": ["claude"], "concurrency": 2}))
    slow = [  # as real processes: what a user runs, with the SDKs' own debug logging on
        ["models", "check", "gpt", "claude", "gemini", "grok", "--models", str(models)],
        ["run", "--dilemma", d0, "--team-a", "gpt", "--team-b", "claude", "--judge", "gemini",
         "--models", str(models), "--store", str(store)],
        ["tournament", str(tour), "--models", str(models), "--store", str(store)],
    ]
    outputs = {}
    for args in slow:
        # OPENAI_LOG / ANTHROPIC_LOG make the SDKs log requests at debug level to stderr
        res = run_ebtui(*args, env={"OPENAI_LOG": "debug", "ANTHROPIC_LOG": "debug"}, timeout=180)
        assert res.returncode == 0, (args, res.stderr[-2000:])
        assert_no_secret(res.stdout, f"stdout of ebtui {' '.join(args[:2])}")
        assert_no_secret(res.stderr, f"stderr of ebtui {' '.join(args[:2])}")
        outputs[args[0]] = res
    # the keys really were in use: every model answered through llmock
    assert len(llmock.requests) >= 4 + 5 + 2 * 5
    rs = open_store(store)
    ids = [e["id"] for e in rs.query()]
    assert len(ids) == 1 + 2
    fast = [  # in-process (the same code, without a process start-up each)
        ["models", "list", "--models", str(models)],
        ["run", "--dilemma", d0, "--team-a", "grok", "--team-b", "gemini", "--judge", "claude",
         "--models", str(models), "--store", str(store), "--json"],
        ["tournaments", "list", "--store", str(store)],
        ["rounds", "list", "--store", str(store), "--json"],
        ["rounds", "show", ids[0], "--prompts", "--store", str(store)],
        ["rounds", "show", ids[-1], "--json", "--store", str(store)],
        ["report", "--store", str(store), "--out", str(reports)],
    ]
    for args in fast:
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 0, (args, res.output)
        assert_no_secret(res.stdout + res.stderr, f"ebtui {' '.join(args[:2])}")
    assert (reports / "report.md").exists()
    files = list(walk_files(tmp_path))
    assert any(p.suffix == ".json" and "rounds" in p.parts for p in files)
    for p in files:
        assert_no_secret(p.read_bytes(), str(p))


async def test_no_key_in_debug_logs(keyed_env: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """In-process, every logger at DEBUG (the SDKs', httpx's, ebtui's) while a round runs on each family."""
    caplog.set_level(logging.DEBUG)
    config = load_models_config(keyed_env)
    clients = build_clients(config, ["gpt", "claude", "gemini", "grok"])
    store = open_store(tmp_path / "store")
    d = load_dilemmas()[0]
    try:
        for a, b, j in (("gpt", "claude", "gemini"), ("grok", "gemini", "gpt")):
            async for _ in run_round(RoundSpec(dilemma=d, team_a=a, team_b=b, judge=j), clients, store):
                pass
        await asyncio.sleep(0)
    finally:
        for c in clients.values():
            await c.aclose()
    store.close()
    assert caplog.records, "nothing was logged: the check would prove nothing"
    assert any(r.levelno == logging.DEBUG for r in caplog.records)
    assert_no_secret(caplog.text, "debug log")
    for r in caplog.records:
        assert_no_secret(repr(r.__dict__), f"log record {r.name}")
    assert all(e["status"] == "complete" for e in ResultsStore(tmp_path / "store").query())
