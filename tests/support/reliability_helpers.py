"""Helpers shared by the reliability and security tests (issue 9)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

from llmock.scenarios import Fail, Match, Plan, RequestInfo, ScenarioQueue, SlowFirstToken, StreamFault

from ebtui.core.records import Round
from ebtui.providers.base import Completion, ModelClient, ProviderError, StreamItem

# family -> (ebtui provider, llmock route, model)
LLMOCK_FAMILIES: dict[str, tuple[str, str, str]] = {
    "gpt": ("openai", "openai", "gpt-4o-mini"),
    "claude": ("anthropic", "anthropic", "claude-sonnet-4-6"),
    "gemini": ("google", "gemini", "gemini-2.5-flash"),
}

#: fast retry settings: the whole fault mix runs in seconds. The stall guard (1.2 s) sits well above the
#: in-process llmock server's lag under a tournament's load (it shares the GIL with the client: a guard of
#: 0.5 s fired on merely slow answers, hiding the server's Retry-After), and injected stalls (2.5 s) outlast it.
STALL_TIMEOUT_S = 1.2
STALL_SECONDS = 2.5
FAST_RETRIES: dict[str, Any] = {
    "backoff_s": 0.1,
    "backoff_max_s": 1.0,
    "retry_after_max_s": 5.0,
    "stall_timeout_s": STALL_TIMEOUT_S,
    "timeout_s": 3.0,
    "connect_timeout_s": 2.0,
}

FAULT_KINDS = (
    "rate_limit",
    "fail_500",
    "fail_503",
    "disconnect",
    "truncate",
    "malformed",
    "stall",
    "slow_first_token",
)


class SeededFaultQueue(ScenarioQueue):
    """llmock has no per-request fault probability with a seed (its stream chaos draws from the global
    `random`), so this queue decides for every request: with probability `rate` one fault kind, drawn from
    a seeded RNG. The server consults `state.scenarios.plan_for(info)` once per request."""

    def __init__(self, seed: int, rate: float = 0.2, kinds: Iterable[str] = FAULT_KINDS) -> None:
        super().__init__()
        self.rng = random.Random(seed)
        self.rate = rate
        self.kinds = tuple(kinds)
        self.injected: dict[str, int] = dict.fromkeys(self.kinds, 0)
        self.requests = 0

    def _fault(self, kind: str) -> Plan:
        after = self.rng.randint(1, 3)
        stream = Match(stream=True)
        if kind == "rate_limit":
            return Plan(fail=Fail(429, retry_after=0.2, message="Rate limit reached (injected)"))
        if kind == "fail_500":
            return Plan(fail=Fail(500, message="Internal server error (injected)"))
        if kind == "fail_503":
            return Plan(fail=Fail(503, message="Service unavailable (injected)"))
        if kind == "stall":
            return Plan(stream_fault=StreamFault("stall", after_chunks=after, stall_seconds=STALL_SECONDS, match=stream))
        if kind == "slow_first_token":
            return Plan(slow_first_token=SlowFirstToken(0.3, match=stream))
        return Plan(stream_fault=StreamFault(kind, after_chunks=after, match=stream))  # type: ignore[arg-type]

    def plan_for(self, info: RequestInfo) -> Plan:
        with self._lock:
            self.requests += 1
            if self.rng.random() >= self.rate:
                return Plan()
            kind = self.kinds[self.rng.randrange(len(self.kinds))]
            plan = self._fault(kind)
            self.injected[kind] += 1
            return plan


def llmock_models_toml(llmock: Any, key_env: str = "EBTUI_TEST_KEY", **extra: Any) -> str:
    """models.toml text: one model per SDK family, all pointed at the llmock server."""
    lines: list[str] = []
    for name, (provider, route, model) in LLMOCK_FAMILIES.items():
        lines += [f"[models.{name}]", f'provider = "{provider}"', f'model = "{model}"',
                  f'base_url = "{llmock.base_url(route)}"', f'api_key_env = "{key_env}"']
        lines += [f"{k} = {json.dumps(v)}" for k, v in {**FAST_RETRIES, **extra}.items()]
    return "\n".join(lines) + "\n"


def scripted_models_toml(names: Iterable[str], **extra: Any) -> str:
    lines: list[str] = []
    for n in names:
        lines += [f"[models.{n}]", 'provider = "scripted"']
        lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def toml_table(fields: dict[str, Any]) -> str:
    """A flat TOML document (plus [a.b] sub-tables for dict values) from a dict; JSON scalars are TOML."""
    lines = [f"{k} = {json.dumps(v)}" for k, v in fields.items() if not isinstance(v, dict)]
    for k, v in fields.items():
        if isinstance(v, dict):
            for sub, table in v.items():
                lines.append(f"[{k}.{sub}]")
                lines += [f"{kk} = {json.dumps(vv)}" for kk, vv in table.items()]
    return "\n".join(lines) + "\n"


def round_files(store: Path) -> list[Path]:
    d = store / "rounds"
    return sorted(p for p in d.glob("*.json") if not p.name.startswith(".")) if d.is_dir() else []


def load_round_files(store: Path) -> list[Round]:
    """Every round file parsed straight from disk (no index involved); raises if any does not parse."""
    return [Round.model_validate_json(p.read_text(encoding="utf-8")) for p in round_files(store)]


def ebtui_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "ebtui", *args]


def run_ebtui(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
              cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "EBTUI_STORE_FSYNC": "0", **(env or {})}
    return subprocess.run(ebtui_cmd(*args), env=full_env, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


def walk_files(*roots: Path) -> Iterator[Path]:
    for root in roots:
        if root.is_file():
            yield root
        elif root.is_dir():
            for p in sorted(root.rglob("*")):
                if p.is_file():
                    yield p


class DistinctCallsClient(ModelClient):
    """Tags each logical call's prompt with a call number, outside the retry wrapper (so a call's retries
    resend the same body). llmock groups attempts into calls by request body; a tournament legitimately
    sends identical requests in different rounds (the same presenter on the same dilemma against two
    opponents), which llmock would otherwise read as retries of one another."""

    def __init__(self, inner: ModelClient) -> None:
        self.inner = inner
        self.name = inner.name
        self.provider = inner.provider
        self.model = inner.model
        self.supports_json_schema = inner.supports_json_schema
        self.calls = 0
        #: call tag -> how the call ended for the caller: "ok", or the ProviderError's kind
        self.outcomes: dict[str, str] = {}

    async def stream(self, prompt: str, system_prompt: str, *, json_schema: dict[str, Any] | None = None,
                     max_tokens: int | None = None) -> AsyncIterator[StreamItem]:
        self.calls += 1
        tag = f"{self.name}-{self.calls}"
        tagged = f"{prompt}\n\n(call {tag})"
        agen = self.inner.stream(tagged, system_prompt, json_schema=json_schema, max_tokens=max_tokens)
        try:
            async for item in agen:
                if isinstance(item, Completion):
                    self.outcomes[tag] = "ok"
                yield item
        except ProviderError as exc:
            self.outcomes[tag] = exc.kind
            raise
        finally:
            await agen.aclose()

    async def aclose(self) -> None:
        await self.inner.aclose()


CALL_TAG = re.compile(r"\(call ([A-Za-z0-9_.-]+-\d+)\)")


def call_tag(record: Any) -> str | None:
    """The DistinctCallsClient tag in a journaled request's body."""
    m = CALL_TAG.search(json.dumps(record.body)) if record.body is not None else None
    return m.group(1) if m else None


TRIO = ["alpha", "beta", "gamma"]


def trio_tournament(tmp_path: Path, name: str, *, dilemmas: int, concurrency: int,
                    **model_extra: Any) -> list[str]:
    """tmp_path/models.toml (the scripted TRIO, with `model_extra`) and tmp_path/t.toml (tournament `name` of the
    trio on the first `dilemmas` built-in dilemmas): the `ebtui tournament` command into tmp_path/store."""
    from ebtui.core.dilemmas import load_dilemmas

    models = tmp_path / "models.toml"
    models.write_text(scripted_models_toml(TRIO, **model_extra))
    cfg = tmp_path / "t.toml"
    cfg.write_text(toml_table({"name": name, "models": TRIO, "concurrency": concurrency,
                               "dilemmas": [d.id for d in load_dilemmas()[:dilemmas]]}))
    return ebtui_cmd("tournament", str(cfg), "--models", str(models), "--store", str(tmp_path / "store"))
