"""`ebtui models list` and `ebtui models check [NAME…]`."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import click

from ebtui.cli.common import EXIT_INCOMPLETE, CliError, ctx_option, echo_untrusted
from ebtui.config import ConfigError, ModelConfig, ModelsConfig, default_model_name, load_models_config

CHECK_PROMPT = "Reply with exactly one word: ready"
CHECK_SYSTEM = "You are a connectivity check. Answer in one word."


def _load(ctx: click.Context, models_file: str | None) -> ModelsConfig:
    try:
        return load_models_config(ctx_option(ctx, "models_file", models_file))
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def _price(cfg: ModelConfig) -> str:
    if cfg.price_in is None and cfg.price_out is None:
        return "-"
    return f"{cfg.price_in or 0:g}/{cfg.price_out or 0:g}"


def _key(cfg: ModelConfig) -> str:
    env = cfg.key_env
    if env is None:
        return "-"
    return f"{env} (set)" if cfg.key_set else f"{env} (key missing)"


models_option = click.option("--models", "models_file", type=click.Path(dir_okay=False),
                             help="models.toml to use (also accepted before the subcommand).")


@click.group()
def models() -> None:
    """List configured models, or check them with one tiny call."""


@models.command("list")
@models_option
@click.pass_context
def list_models(ctx: click.Context, models_file: str | None) -> None:
    """Show every model: provider, model, key variable (never the key), base URL, prices (USD/Mtok in/out)."""
    config = _load(ctx, models_file)
    default = default_model_name(config)
    click.echo(f"models from {config.source}" if config.source else "no models.toml found: built-in models only")
    rows = [("NAME", "PROVIDER", "MODEL", "KEY", "BASE URL", "PRICE IN/OUT")]
    for name, cfg in config.models.items():
        label = f"{name} *" if name == default else name
        rows.append((label, cfg.provider, cfg.model or "-", _key(cfg), cfg.effective_base_url or "-", _price(cfg)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    click.echo("* default model")


@dataclass
class CheckResult:
    name: str
    ok: bool
    latency_s: float | None
    detail: str


async def _check_one(cfg: ModelConfig, max_tokens: int) -> CheckResult:
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


def _snippet(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= width else one[: width - 1] + "…")


async def _check_all(cfgs: list[ModelConfig], max_tokens: int) -> list[CheckResult]:
    return list(await asyncio.gather(*(_check_one(c, max_tokens) for c in cfgs)))


@models.command("check")
@click.argument("names", nargs=-1)
@models_option
@click.option("--max-tokens", type=click.IntRange(1, 4096), default=64, show_default=True,
              help="Token limit of the check call.")
@click.pass_context
def check_models(ctx: click.Context, names: tuple[str, ...], models_file: str | None, max_tokens: int) -> None:
    """One tiny real call per model (all models when none is named); prints latency and a verdict.

    Exit status 1 if any model fails.
    """
    config = _load(ctx, models_file)
    unknown = [n for n in names if n not in config.models]
    if unknown:
        raise CliError(f"no model named {unknown[0]!r} in {config.source or 'the built-in models'} "
                       f"(configured: {', '.join(config.models)})")
    cfgs = [config.models[n] for n in dict.fromkeys(names or config.models)]
    results = asyncio.run(_check_all(cfgs, max_tokens))
    width = max(len(r.name) for r in results)
    for r in results:
        latency = f"{r.latency_s:6.2f}s" if r.latency_s is not None else "      -"
        echo_untrusted(f"{r.name.ljust(width)}  {'ok  ' if r.ok else 'FAIL'}  {latency}  {r.detail}")
    failed = [r.name for r in results if not r.ok]
    if failed:
        click.echo(f"{len(failed)} of {len(results)} model(s) failed: {', '.join(failed)}", err=True)
        ctx.exit(EXIT_INCOMPLETE)
    click.echo(f"all {len(results)} model(s) answered")
