"""`ebtui report`: write the Markdown report (PNG charts, one CSV per table), or with --json print the same
numbers as one JSON object on stdout and write nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ebtui.cli.common import CliError, ctx_option, echo_unreadable

#: up to this many rounds the report reads them whole, for the judge-bias section (style, order, agreement,
#: reliability); above it, only the analysis columns (the section is left out and the report says so)
BIAS_ROUNDS_UP_TO = 2000


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
    from ebtui.core.store import ResultsStore, StoreError
    from ebtui.locations import store_dir

    root = store_dir(ctx_option(ctx, "store", store))
    if not root.is_dir():
        raise CliError(f"no results store at {root} (give --store DIR)")
    results = ResultsStore(root)
    tournament = None
    rounds: list[Any] | None = None
    from_rounds = False
    try:
        if tournament_id:
            try:
                tournament = results.load_tournament(tournament_id)
            except StoreError:
                tournament = None  # the rounds may still be there (e.g. the tournament file was lost)
        # whole rounds (transcripts) are read only where they are needed: a classifier model reads the answers,
        # the web page shows them, and the judge-bias section (style, order, agreement, reliability) reads them
        # while the store is small enough for that to stay quick; else the analysis columns beside the store
        # (ebtui.core.analysis.source): no round file is read unless it changed since the last report
        if classifier or as_html or len(results.stamps(tournament=tournament_id, dilemma=dilemma)) <= BIAS_ROUNDS_UP_TO:
            rounds = results.load_rounds(tournament=tournament_id, dilemma=dilemma)
            if model:
                from ebtui.core.views.means import rounds_with_team_seat

                rounds = rounds_with_team_seat(rounds, model)
        from ebtui.core.analysis.frame import Facts
        from ebtui.core.analysis.judge_bias import expand_judgments
        from ebtui.core.analysis.source import facts_source

        # rounds with judgments added by `ebtui rejudge` count each judgment: the columns hold a round's own
        from_rounds = rounds is not None and (bool(classifier) or any(r.extra_judgments for r in rounds))
        if from_rounds:
            assert rounds is not None
            facts = Facts.from_rounds(expand_judgments(rounds))
        else:
            source = facts_source(results)
            if not source.path.exists() and (n := len(results.stamps())) > 1000:  # (the sync reads the index too)
                click.echo(f"building the analysis columns from {n} round files (once): {source.path}", err=True)
            facts = source.facts(tournament=tournament_id, dilemma=dilemma)
        unreadable = _unreadable(results)
    except (StoreError, ValueError, TypeError) as exc:
        raise CliError(f"{root}: {exc}") from None
    echo_unreadable(unreadable)
    if model and not from_rounds:
        facts = facts.take((facts.team_a == model) | (facts.team_b == model))
    if not len(facts):
        what = [f"tournament {tournament_id!r}" if tournament_id else "",
                f"model {model!r}" if model else "", f"dilemma {dilemma!r}" if dilemma else ""]
        filt = ", ".join(w for w in what if w)
        raise CliError(f"no rounds in {root}" + (f" matching {filt}" if filt else "") + "; nothing to report")
    from ebtui.core.report import build_report_data, write_report  # statsmodels/matplotlib: only when needed

    out = Path(out_dir) if out_dir else root / "reports" / (tournament_id or "all")
    if title is None:
        subject = (tournament.name or tournament.id) if tournament else (tournament_id or "all rounds")
        extra = ", ".join(x for x in (f"model {model}" if model else "", f"dilemma {dilemma}" if dilemma else "") if x)
        title = f"ebtui report: {subject}" + (f" ({extra})" if extra else "")
    families, classifications = from_models(ctx_option(ctx, "models_file", models_file), classifier, facts, rounds)
    agreement = None
    if (root / "judge_views").is_dir():  # the judges' own views (`ebtui rejudge --views`): only then import it
        from ebtui.core.judge_views import agreement_map

        agreement = agreement_map(root)
    data = build_report_data(facts, classifications=classifications, families=families,
                             agreement=agreement, bias_rounds=rounds)
    if as_json:
        import json

        obj = {"filters": {"tournament": tournament_id, "model": model, "dilemma": dilemma}, **data.json(),
               "unreadable": [{"path": p, "reason": r} for p, r in unreadable]}
        click.echo(json.dumps(obj, ensure_ascii=False, allow_nan=False))
        return
    if as_html:
        from ebtui.core.export.html import write_html_report

        out_file = Path(out_dir) if out_dir and Path(out_dir).suffix.lower() in (".html", ".htm") else out
        try:
            assert rounds is not None  # --html reads the rounds whole
            path = write_html_report(rounds, out_file, data=data, title=title, tournament=tournament)
        except OSError as exc:
            raise CliError(f"cannot write the report to {out_file}: {exc.strerror or exc}") from None
        click.echo(f"{len(rounds)} rounds", err=True)
        click.echo(str(path))
        return
    try:
        path = write_report(facts, out, title=title, tournament=tournament, data=data)
    except OSError as exc:
        raise CliError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    click.echo(f"{len(facts)} rounds", err=True)
    click.echo(str(path))


def _unreadable(results: Any) -> list[tuple[str, str]]:
    """Round files the report had to leave out: found afresh, plus any that failed to load just now."""
    out = list(results.unreadable(deep=False))  # the rounds were just read: a changed one is in problems
    seen = {p for p, _ in out}
    out += [(p, r) for p, r in results.problems if p not in seen and "/rounds/" in p.replace("\\", "/")]
    return out


def from_models(models_file: str | None, classifier: str | None, facts: Any,
                 rounds: list[Any] | None) -> tuple[dict[str, str] | None, dict[str, Any] | None]:
    """What models.toml adds to a report: each model's family (`family`, else its provider; a model not in
    models.toml: the family recorded in its rounds, else the name heuristic of ebtui.core.analysis.families) and, with --classifier, a model's
    classification of every consistency-test answer. Without --models and --classifier an unreadable default
    models.toml is no reason to refuse a report (every family then comes from the name heuristic)."""
    import asyncio

    from ebtui.config import ConfigError, load_models_config
    from ebtui.core.analysis.columnar import recorded_families
    from ebtui.core.analysis.families import resolve_families

    names = facts.names()
    try:
        config = load_models_config(models_file)
    except ConfigError as exc:
        if models_file or classifier:
            raise CliError(str(exc)) from None
        return resolve_families(names, None, recorded_families(facts)), None
    families = resolve_families(names, config, recorded_families(facts))
    if not classifier or rounds is None:
        return families, None
    from ebtui.core.analysis import classify_consistency_answers_with_model
    from ebtui.providers.registry import build_clients

    try:
        client = build_clients(config, [classifier])[classifier]
    except ConfigError as exc:
        raise CliError(str(exc)) from None

    async def classify() -> dict[str, Any]:
        try:
            return await classify_consistency_answers_with_model(rounds, client)
        finally:
            await client.aclose()

    click.echo(f"classifying consistency-test answers with {classifier}…", err=True)
    return families, asyncio.run(classify())
