"""The configured models as the front ends show them: models.toml opened (a bad one is one UsageError line),
the default model and seats, what a picker shows after each name, and the connectivity check."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ebtui.config import ModelConfig as ModelConfig
    from ebtui.config import ModelsConfig as ModelsConfig
    from ebtui.core.usecases.context import AppContext

CHECK_PROMPT = "Reply with exactly one word: ready"
CHECK_SYSTEM = "You are a connectivity check. Answer in one word."


def load_models(ctx: AppContext) -> ModelsConfig:
    """The context's models.toml; a bad one is a ConfigError (a UsageError) naming file, model and field."""
    return ctx.models


def default_model(config: ModelsConfig) -> str:
    """`default` when set; else the first keyed model whose key is set; else "local"."""
    from ebtui.config import default_model_name

    return default_model_name(config)


def model_detail(name: str, provider: str | None, model: str | None) -> str:
    """What a model picker shows after a model's name: provider/model, each said once and only when it
    adds something (`scripted` is just "scripted", not "scripted (scripted: scripted)")."""
    parts: list[str] = []
    for part in (provider, model):
        part = str(part or "").strip()
        if part and part != name and part not in parts:
            parts.append(part)
    return "/".join(parts)


@dataclass(frozen=True)
class ModelChoices:
    """What the setup screen's model pickers offer."""

    names: list[str]
    default: str
    details: dict[str, str]  # name -> what the picker shows after it
    seats: tuple[str, str, str]  # Team A, Team B, judge preselected


def model_choices(config: ModelsConfig) -> ModelChoices:
    from ebtui.config import default_role_models

    return ModelChoices(names=list(config.models), default=default_model(config),
                        details={n: model_detail(n, c.provider, c.model) for n, c in config.models.items()},
                        seats=default_role_models(config))


@dataclass
class CheckResult:
    name: str
    ok: bool
    latency_s: float | None
    detail: str


def _snippet(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= width else one[: width - 1] + "…")


async def check_model(cfg: ModelConfig, max_tokens: int) -> CheckResult:
    """One tiny real call to the model: its latency and a one-line verdict (never raises)."""
    from ebtui.config import ConfigError
    from ebtui.providers.base import ProviderError
    from ebtui.providers.registry import build_client

    if not cfg.key_set:
        return CheckResult(cfg.name, False, None, f"key missing: set the environment variable {cfg.key_env}")
    try:
        client = build_client(cfg)
    except ConfigError as exc:
        return CheckResult(cfg.name, False, None, str(exc))
    except Exception as exc:  # noqa: BLE001 - an SDK refusing its settings is this model's failure
        return CheckResult(cfg.name, False, None, f"cannot create the client: {type(exc).__name__}: {exc}")
    started = time.perf_counter()
    try:
        completion = await client.generate(CHECK_PROMPT, CHECK_SYSTEM, max_tokens=max_tokens)
    except ProviderError as exc:
        if exc.kind == "truncated" and exc.partial_text.strip():  # it answered; the check asked for little
            elapsed = time.perf_counter() - started
            return CheckResult(cfg.name, True, elapsed, f"answered (cut off at {max_tokens} tokens): "
                                                     f"{_snippet(exc.partial_text)}")
        return CheckResult(cfg.name, False, None, f"{exc} [after {exc.attempts} attempt(s)]")
    finally:
        try:
            await client.aclose()
        except Exception:  # noqa: BLE001, S110 - closing is best effort
            pass
    extra = f", {completion.attempts} attempts" if completion.attempts > 1 else ""
    return CheckResult(cfg.name, True, completion.latency_s,
                       f"{_snippet(completion.text)} ({completion.usage.input_tokens}+"
                       f"{completion.usage.output_tokens} tokens{extra})")


async def check_models(cfgs: list[ModelConfig], max_tokens: int) -> list[CheckResult]:
    """`check_model` for each, at once."""
    return list(await asyncio.gather(*(check_model(c, max_tokens) for c in cfgs)))
