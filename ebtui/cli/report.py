"""`ebtui report`: write the Markdown report (PNG charts, one CSV per table), or with --json print the same
numbers as one JSON object on stdout and write nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from ebtui.cli.common import CliError, ctx_option, echo_unreadable
from ebtui.errors import UsageError


@click.command()
@click.option("--tournament", "tournament_id", help="Only the rounds of this tournament (default: every round).")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Where to write the report (default <store>/reports/<tournament or 'all'>/).")
@click.option("--model", help="Only rounds in which this model is Team A or Team B (not rounds it only judged).")
@click.option("--dilemma", help="Only rounds on this dilemma id.")
@click.option("--title", help="The report's title.")
@click.option("--classifier", metavar="MODEL",
              help="Classify the consistency-test answers with this model (from models.toml) instead of the "
                   "documented rules; the report names the classifier.")
@click.option("--models", "models_file", type=click.Path(dir_okay=False),
              help="models.toml: the classifier, and each model's family (family, else provider) for the "
                   "same-family preference.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the statistics as one JSON object on stdout instead; write no report files (the "
                   "analysis columns beside the store, <store>/columns/, are kept up to date).")
@click.option("--html", "as_html", is_flag=True,
              help="Write one self-contained web page (report.html: tables, SVG charts, every round) instead.")
@click.pass_context
def report(ctx: click.Context, tournament_id: str | None, store: str | None, out_dir: str | None,
           model: str | None, dilemma: str | None, title: str | None, classifier: str | None,
           models_file: str | None, as_json: bool, as_html: bool = False) -> None:
    """Write a Markdown report with tables, charts and CSVs and print its path (--json: print the numbers)."""
    if as_json and as_html:
        raise CliError("give --json or --html, not both")
    import os

    # the fit's matrices are small (a few dozen columns): BLAS threads only spin against each other and the
    # machine's other work (measured: 3-10x the CPU time of one thread on 2 busy cores); before numpy loads
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    from ebtui.core.usecases import report as uc

    # the cycle collector off for the whole command (the imports too: pydantic's and scipy's module set-up
    # allocates objects by the hundred thousand, and nothing here leaves a cycle worth collecting); back on after
    with uc.gc_paused():
        _report(ctx, tournament_id, store, out_dir, model, dilemma, title, classifier, models_file, as_json, as_html)


def _report(ctx: click.Context, tournament_id: str | None, store: str | None, out_dir: str | None,
            model: str | None, dilemma: str | None, title: str | None, classifier: str | None,
            models_file: str | None, as_json: bool, as_html: bool) -> None:
    from ebtui.core.usecases import report as uc
    from ebtui.core.usecases.context import open_context

    models_file = ctx_option(ctx, "models_file", models_file)
    app = open_context(store=ctx_option(ctx, "store", store), models_file=models_file)
    try:
        sel = uc.select(app, tournament_id=tournament_id, model=model, dilemma=dilemma,
                        whole_rounds=bool(classifier) or as_html, with_classifier=bool(classifier),
                        note=lambda text: click.echo(text, err=True), progress=_progress())
    except UsageError as exc:
        raise CliError(str(exc)) from None
    echo_unreadable(sel.unreadable)
    try:
        sel.require_rounds()
        out = Path(out_dir) if out_dir else sel.root / "reports" / (tournament_id or "all")
        title = uc.default_title(sel) if title is None else title
        families = uc.families(app, sel.facts, explicit=bool(models_file or classifier))
        classifications = None
        if classifier and sel.rounds is not None:
            client = uc.classifier_client(app, classifier)
            click.echo(f"classifying consistency-test answers with {classifier}…", err=True)
            import asyncio  # only to classify: the report itself needs no event loop

            classifications = asyncio.run(uc.classify(sel.rounds, client))
        data = uc.build_report(sel, families, classifications)
        from ebtui.core.usecases import audit as audit_uc

        calibrated = uc.with_human_audit(app, sel, data, families)  # the human audit (issue #36), in data too
        if as_json:
            click.echo(uc.report_json_text(sel, data))  # (json.dumps of uc.report_json, the same text)
            return
        if as_html:
            out_file = Path(out_dir) if out_dir and Path(out_dir).suffix.lower() in (".html", ".htm") else out
            path = uc.write_html(sel, data, out_file, title)
            audit_uc.add_to_html(path, calibrated)
            click.echo(f"{len(sel.rounds or [])} rounds", err=True)
        else:
            path = uc.write_markdown(sel, data, out, title)
            audit_uc.add_to_markdown(path, calibrated)
            click.echo(f"{data.rounds} rounds", err=True)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    click.echo(str(path))


def _progress() -> Callable[[int, int], None]:
    """The progress line on stderr while the analysis columns are built (a first report of a large store
    reads every round file): rewritten in place on a terminal, else a few lines (core's ProgressLine)."""
    import sys

    from ebtui.core.analysis.source import ProgressLine

    return ProgressLine(lambda text: click.echo(text, err=True, nl=False), terminal=sys.stderr.isatty())
