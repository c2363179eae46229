"""`ebtui models list` and `ebtui models check [NAME…]`."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import click

from ebtui.cli.common import EXIT_INCOMPLETE, CliError, ctx_option, echo_untrusted
from ebtui.core.usecases.context import open_context
from ebtui.core.usecases.models import check_models as check_all
from ebtui.core.usecases.models import default_model, load_models
from ebtui.core.views import numbers as num
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.models import ModelConfig, ModelsConfig


def _load(ctx: click.Context, models_file: str | None) -> ModelsConfig:
    try:
        return load_models(open_context(models_file=ctx_option(ctx, "models_file", models_file)))
    except UsageError as exc:
        raise CliError(str(exc)) from None


def _price(cfg: ModelConfig) -> str:
    if cfg.price_in is None and cfg.price_out is None:
        return "-"
    return f"{num.shown(cfg.price_in or 0, 'g')}/{num.shown(cfg.price_out or 0, 'g')}"


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
    default = default_model(config)
    click.echo(f"models from {config.source}" if config.source else "no models.toml found: built-in models only")
    rows = [("NAME", "PROVIDER", "MODEL", "KEY", "BASE URL", "PRICE IN/OUT")]
    for name, cfg in config.models.items():
        label = f"{name} *" if name == default else name
        rows.append((label, cfg.provider, cfg.model or "-", _key(cfg), cfg.effective_base_url or "-", _price(cfg)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    click.echo("* default model")


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
    results = asyncio.run(check_all(cfgs, max_tokens))
    width = max(len(r.name) for r in results)
    for r in results:
        latency = f"{num.shown(r.latency_s, '6.2f')}s" if r.latency_s is not None else "      -"
        echo_untrusted(f"{r.name.ljust(width)}  {'ok  ' if r.ok else 'FAIL'}  {latency}  {r.detail}")
    failed = [r.name for r in results if not r.ok]
    if failed:
        click.echo(f"{len(failed)} of {len(results)} model(s) failed: {', '.join(failed)}", err=True)
        ctx.exit(EXIT_INCOMPLETE)
    click.echo(f"all {len(results)} model(s) answered")
