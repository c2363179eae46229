"""`ebtui store check [--repair]`: what in the results store cannot be read, the index, stale temporary
files — and with --repair, the index rebuilt from the round files and the stale files removed. Round files
are never deleted or rewritten (an unreadable one is named, for a human to look at)."""

from __future__ import annotations

import json

import click

from ebtui.cli.common import CliError, ctx_option
from ebtui.core.safe_text import strip_control

EXIT_PROBLEMS = 1


@click.group("store")
def store_group() -> None:
    """Check (and repair) the results store."""


@store_group.command("check")
@click.option("--repair", is_flag=True, help="Rebuild the index from the round files and remove stale temporary "
                                             "files (round files are never touched).")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.option("--json", "as_json", is_flag=True, help="Print what was found (and done) as JSON.")
@click.pass_context
def check(ctx: click.Context, repair: bool, store: str | None, as_json: bool) -> None:
    """List unreadable round files, index problems and stale temporary files (exit 1 if any remain)."""
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.rounds import check as check_store
    from ebtui.errors import UsageError

    try:
        report = check_store(open_context(store=ctx_option(ctx, "store", store)), repair=repair)
    except UsageError as exc:
        raise CliError(strip_control(str(exc))) from None
    if as_json:
        click.echo(json.dumps({
            "store": str(report.root), "rounds": report.rounds,
            "unreadable": [{"path": p, "reason": r} for p, r in report.unreadable],
            "stale_temp_files": [str(p) for p in report.stale], "index_problem": report.index_problem,
            "done": report.done,
        }, indent=2))
    else:
        for line in report.lines():
            click.echo(strip_control(line))
    problems = report.unreadable or report.stale or report.index_problem
    ctx.exit(EXIT_PROBLEMS if problems else 0)
