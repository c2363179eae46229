"""`ebtui export`: the store's data in the formats researchers read.

* `ebtui export table` — tidy tables (scores, rounds, phases) as Parquet and CSV, and a dataset card;
* `ebtui export inspect` — an Inspect AI `.eval` log (`inspect view` opens it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ebtui.cli.common import CliError, ctx_option
from ebtui.core.safe_text import strip_control

_STORE_HELP = "Results store directory (default: $EBTUI_STORE, else ./saved)."


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def export() -> None:
    """Export rounds: tidy tables (Parquet/CSV + dataset card) or an Inspect AI log."""


def _selection(ctx: click.Context, store: str | None, tournament_id: str | None) -> tuple[Path, list[Any], Any]:
    """(store root, rounds, tournament or None): a missing store or an empty selection is one line."""
    from ebtui.core.store import ResultsStore, StoreError
    from ebtui.locations import store_dir

    root = store_dir(ctx_option(ctx, "store", store))
    if not root.is_dir():
        raise CliError(f"no results store at {root} (give --store DIR)")
    results = ResultsStore(root)
    tournament = None
    try:
        if tournament_id:
            try:
                tournament = results.load_tournament(tournament_id)
            except StoreError:
                tournament = None  # the rounds may still be there
        rounds = results.load_rounds(tournament=tournament_id)
    except (StoreError, ValueError, TypeError) as exc:
        raise CliError(f"{root}: {strip_control(str(exc))}") from None
    if not rounds:
        raise CliError(f"no rounds in {root}" + (f" for tournament {tournament_id!r}" if tournament_id else "")
                       + "; nothing to export")
    return root, rounds, tournament


def _families(ctx: click.Context, models_file: str | None, rounds: list[Any]) -> dict[str, str]:
    from ebtui.core.export.selection import report_families

    try:
        return report_families(rounds, ctx_option(ctx, "models_file", models_file))
    except ValueError as exc:
        raise CliError(strip_control(str(exc))) from None


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
    from ebtui.core.export import MissingExtra
    from ebtui.core.export.card import write_dataset

    formats = formats or ("parquet", "csv")
    if "parquet" in formats:
        from ebtui.core.export.tidy import require_pyarrow

        try:
            require_pyarrow()  # before reading anything: say at once when the extra is missing
        except MissingExtra as exc:
            raise CliError(f"{exc} (or give --format csv)") from None
    root, rounds, tournament = _selection(ctx, store, tournament_id)
    out = Path(out_dir) if out_dir else root / "exports" / (tournament_id or "all") / "tables"
    if title is None:
        title = f"ebtui: {(tournament.name or tournament.id) if tournament else (tournament_id or 'all rounds')}"
    families = _families(ctx, models_file, rounds)
    try:
        paths = write_dataset(rounds, out, title=title, formats=formats, families=families,
                              tournaments=[tournament] if tournament else [])
    except MissingExtra as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot write to {out}: {exc.strerror or exc}") from None
    click.echo(f"{len(rounds)} rounds", err=True)
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
    from ebtui.core.export import MissingExtra
    from ebtui.core.export.inspect_log import require_inspect, write_inspect_log

    try:
        require_inspect()  # before reading anything: say at once when the extra is missing
    except MissingExtra as exc:
        raise CliError(str(exc)) from None
    root, rounds, tournament = _selection(ctx, store, tournament_id)
    out = Path(out_path) if out_path else root / "exports" / "inspect"
    families = _families(ctx, models_file, rounds)
    try:
        path = write_inspect_log(rounds, out, tournament=tournament, families=families)
    except OSError as exc:
        raise CliError(f"cannot write to {out}: {exc.strerror or exc}") from None
    click.echo(f"{len(rounds)} rounds", err=True)
    click.echo(str(path))
