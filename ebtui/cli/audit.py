"""`ebtui audit`: draw a random sample of judgments for a person to score blind (`draw`, `list`), and score
them headless (`sheet` writes a CSV to fill in, `import` stores it). The scores calibrate `ebtui report`'s
model means to the human scale (docs/AUDIT.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ebtui.cli.common import CliError, ctx_option
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext

_STORE = click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")


def _context(ctx: click.Context, store: str | None) -> AppContext:
    from ebtui.core.usecases.context import open_context

    return open_context(store=ctx_option(ctx, "store", store))


@click.group("audit")
def audit() -> None:
    """A human audit: a seeded random sample of judgments scored blind by a person."""


@audit.command("draw")
@click.option("--n", "n", type=int, required=True, help="How many judgments to draw.")
@click.option("--tournament", help="Draw from this tournament's judgments only (default: every round).")
@click.option("--seed", type=int, help="The draw's seed (default: a random one, recorded in the audit).")
@click.option("--json", "as_json", is_flag=True, help="Print the audit id and the drawn judgments as JSON.")
@_STORE
@click.pass_context
def draw(ctx: click.Context, n: int, tournament: str | None, seed: int | None, as_json: bool,
         store: str | None) -> None:
    """Draw N judgments uniformly at random (re-judgments count) and record them as an audit."""
    from ebtui.core.usecases import audit as uc

    try:
        a = uc.draw_audit(_context(ctx, store), n, tournament=tournament, seed=seed)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if as_json:
        click.echo(json.dumps({"audit_id": a.id, "seed": a.seed, "judgments": [
            {"round_id": j.round_id, "judgment_id": j.judgment_id} for j in a.judgments]}))
        return
    click.echo(f"{a.id}: {len(a.judgments)} of {len(a.population)} judgments drawn (seed {a.seed}); score them in "
               f"the app (F5) or with `ebtui audit sheet {a.id} --out FILE.csv`")


@audit.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the audits as JSON.")
@_STORE
@click.pass_context
def list_(ctx: click.Context, as_json: bool, store: str | None) -> None:
    """The audits and their progress."""
    from dataclasses import asdict

    from ebtui.core.usecases import audit as uc

    try:
        rows = uc.list_audits(_context(ctx, store))
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows]))
        return
    if not rows:
        click.echo("no audits (ebtui audit draw --n N)")
        return
    for r in rows:
        scope = f"tournament {r.tournament}" if r.tournament else "all rounds"
        raters = f"; raters {', '.join(r.raters)}" if r.raters else ""
        click.echo(f"{r.id}  {r.created}  {scope}  seed {r.seed}  {r.done} of {r.judgments} scored "
                   f"({r.scores} scores){raters}")


@audit.command("sheet")
@click.argument("audit_id")
@click.option("--out", "out", type=click.Path(dir_okay=False), required=True, help="The CSV file to write.")
@_STORE
@click.pass_context
def sheet(ctx: click.Context, audit_id: str, out: str, store: str | None) -> None:
    """Write the audit's sheet: one row per team x criterion of each drawn judgment, human_score to fill in."""
    from ebtui.core.usecases import audit as uc

    try:
        rows = uc.write_sheet(_context(ctx, store), audit_id, Path(out))
    except UsageError as exc:
        raise CliError(str(exc)) from None
    click.echo(f"{out}: {rows} rows (fill in human_score with integers 1-10; leave empty what you do not score)")


@audit.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--rater", help="Who scored (default: the login name).")
@_STORE
@click.pass_context
def import_(ctx: click.Context, file: str, rater: str | None, store: str | None) -> None:
    """Store the human scores of a filled sheet (any bad line refuses the whole file)."""
    from ebtui.core.usecases import audit as uc

    try:
        audit_id, n = uc.import_sheet(_context(ctx, store), Path(file), rater=rater)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    click.echo(f"{audit_id}: {n} human scores read from {file}")
