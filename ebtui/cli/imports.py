"""`ebtui import eb PATH...`: bring rounds played by the public Ethics Bowl runner into the results store."""

from __future__ import annotations

import json
import sys

import click

from ebtui.cli.common import EXIT_INCOMPLETE, CliError, ctx_option
from ebtui.errors import UsageError


@click.group(name="import")
def import_group() -> None:
    """Import rounds played by other programs (see docs/IMPORT.md)."""


@import_group.command(name="eb")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--tournament", help="Group the imported rounds under this tournament (created if new).")
@click.option("--tournament-per-run", "per_run", is_flag=True,
              help="Group each run's rounds under a tournament named after the run's folder "
                   "(for importing the runner's whole results folder).")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.option("--document", type=click.Path(dir_okay=False),
              help="Dilemma .docx whose dilemmas (by the runner's ids) the rounds use; without it, or for ids "
                   "it lacks, the dilemma is taken from the round's own prompts.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as one JSON object on stdout.")
@click.pass_context
def eb(ctx: click.Context, paths: tuple[str, ...], tournament: str | None, per_run: bool, store: str | None,
       document: str | None, as_json: bool) -> None:
    """Import round files of the public Ethics Bowl runner (moral_reasoning_quality_evaluation).

    PATH is a round .json file, a folder of them (or the run's folder, or the folder of all runs) or its
    all_rounds.jsonl. Importing
    the same rounds again adds nothing. A score the runner could not read (it wrote 5) is imported as
    missing and the round is flagged for review.
    """
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.importing import import_eb

    app = open_context(store=ctx_option(ctx, "store", store))
    root = app.store_root
    try:
        got = import_eb(app, paths, tournament=tournament, per_run=per_run,
                        document=ctx_option(ctx, "document", document))
    except UsageError as exc:
        raise CliError(str(exc)) from None
    result = got.result
    for problem in result.problems:
        click.echo(f"ebtui: import: {problem}", err=True)
    review, defaulted, disagree = got.review, got.defaulted, got.disagreements
    if as_json:
        click.echo(json.dumps(got.json(), ensure_ascii=False))
        if result.problems:
            sys.exit(EXIT_INCOMPLETE)
        return
    parts = [f"imported {len(result.saved)} round(s) from {got.runner} into {root}"]
    if result.tournaments:
        names = ", ".join(repr(t.id) for t in result.tournaments[:5])
        more = f" and {len(result.tournaments) - 5} more" if len(result.tournaments) > 5 else ""
        parts.append(f"tournament{'s' if len(result.tournaments) > 1 else ''} {names}{more}")
    if result.already:
        parts.append(f"{len(result.already)} already in the store (left as they are)")
    if result.grouped:
        parts.append(f"{len(result.grouped)} of them now in the tournament")
    if result.elsewhere:
        others = sorted({t for _, t in result.elsewhere})
        parts.append(f"{len(result.elsewhere)} of them stay in tournament(s) {', '.join(others)}")
    if result.superseded:
        parts.append(f"{len(result.superseded)} earlier save(s) of a round passed over for its latest save")
    if result.duplicates:
        parts.append(f"{len(result.duplicates)} read twice (e.g. .json and .jsonl) counted once")
    click.echo("; ".join(parts))
    if review:
        click.echo(f"{len(review)} round(s) need review: {defaulted} score(s) the runner could not read and "
                   f"filled with 5 are missing; {disagree} score(s) where ebtui's parser reads the reply "
                   f"differently (the runner's value kept). See `ebtui rounds list --needs-review`.")
    if result.problems:
        click.echo(f"{len(result.problems)} file(s) or line(s) could not be imported", err=True)
        sys.exit(EXIT_INCOMPLETE)
