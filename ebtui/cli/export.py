"""`ebtui export`: the store's data in the formats researchers read.

* `ebtui export table` — tidy tables (scores, rounds, phases) as Parquet and CSV, and a dataset card;
* `ebtui export inspect` — an Inspect AI `.eval` log (`inspect view` opens it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ebtui.cli.common import CliError, ctx_option
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext

_STORE_HELP = "Results store directory (default: $EBTUI_STORE, else ./saved)."


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def export() -> None:
    """Export rounds: tidy tables (Parquet/CSV + dataset card) or an Inspect AI log."""


def _context(ctx: click.Context, store: str | None, models_file: str | None) -> AppContext:
    from ebtui.core.usecases.context import open_context

    return open_context(store=ctx_option(ctx, "store", store), models_file=ctx_option(ctx, "models_file", models_file))


@export.command("table")
@click.option("--tournament", "tournament_id", help="Only the rounds of this tournament (default: every round).")
@click.option("--store", type=click.Path(file_okay=False), help=_STORE_HELP)
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Directory to write (default <store>/exports/<tournament or 'all'>/tables).")
@click.option("--format", "formats", type=click.Choice(["parquet", "csv"]), multiple=True,
              help="parquet and/or csv (default: both).")
@click.option("--title", help="The dataset card's title.")
@click.option("--models", "models_file", type=click.Path(dir_okay=False),
              help="models.toml: each model's family (family, else provider).")
@click.pass_context
def export_table(ctx: click.Context, tournament_id: str | None, store: str | None, out_dir: str | None,
                 formats: tuple[str, ...], title: str | None, models_file: str | None) -> None:
    """Write scores/rounds/phases tables (one row per score, round, phase) and a dataset card README.md."""
    from ebtui.core.usecases import export as uc

    formats = formats or ("parquet", "csv")
    app = _context(ctx, store, models_file)
    try:
        if "parquet" in formats:
            uc.require_parquet()  # before reading anything: say at once when the extra is missing
        sel = uc.select(app, tournament_id)
        out = Path(out_dir) if out_dir else sel.root / "exports" / (tournament_id or "all") / "tables"
        paths = uc.write_tables(app, sel, out, title=title, formats=formats)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    click.echo(f"{len(sel.rounds)} rounds", err=True)
    for p in paths:
        click.echo(str(p))


@export.command("inspect")
@click.option("--tournament", "tournament_id", help="Only the rounds of this tournament (default: every round).")
@click.option("--store", type=click.Path(file_okay=False), help=_STORE_HELP)
@click.option("--out", "out_path", type=click.Path(),
              help="A .eval file, or a directory for it (default <store>/exports/inspect/).")
@click.option("--models", "models_file", type=click.Path(dir_okay=False),
              help="models.toml: each model's family (recorded in the log's metadata).")
@click.pass_context
def export_inspect(ctx: click.Context, tournament_id: str | None, store: str | None, out_path: str | None,
                   models_file: str | None) -> None:
    """Write an Inspect AI log: one sample per exchange, the phases as messages, the judge's scores."""
    from ebtui.core.usecases import export as uc

    app = _context(ctx, store, models_file)
    try:
        uc.require_inspect()  # before reading anything: say at once when the extra is missing
        sel = uc.select(app, tournament_id)
        out = Path(out_path) if out_path else sel.root / "exports" / "inspect"
        path = uc.write_inspect(app, sel, out)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    click.echo(f"{len(sel.rounds)} rounds", err=True)
    click.echo(str(path))
