"""`ebtui plan`: how big a tournament must be to tell models apart — candidate designs with their predicted
pairwise half-width (the report's interval standard), smallest detectable gap (80% power), calls and cost.
Variance components from saved tournaments (`--from ID`) or the documented defaults (docs/STATISTICS.md);
models, judges, document and prices from `--config`, the first `--from` tournament's config, or `--models N`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from ebtui.cli.common import CliError, ctx_option
from ebtui.core.views import numbers as num
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.plan import PlanResult, VarianceComponents


@click.command()
@click.option("--from", "from_ids", multiple=True, metavar="TOURNAMENT",
              help="Estimate the variance components from this saved tournament's rounds (repeatable).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="tournament.toml: the models, judges, document and (with models.toml) prices to plan for.")
@click.option("--delta", type=click.FloatRange(min=0, min_open=True),
              help="The gap (score points) to detect: how many dilemmas, and which design is cheapest.")
@click.option("--half-width", "half_width", type=click.FloatRange(min=0, min_open=True), metavar="W",
              help="A half-width target: the uniform design with even odds that every pairwise half-width is at "
                   "most W (what an adaptive run with --until-half-width W is compared with).")
@click.option("--models", "n_models", type=click.IntRange(2, 64),
              help="Plan for this many models (placeholder names, no prices) instead of a config's.")
@click.option("--models-file", type=click.Path(dir_okay=False), help="models.toml (prices; default as elsewhere).")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.option("--audit-half-width", "audit_half_width", type=click.FloatRange(min=0, min_open=True), metavar="W",
              help="Also say how many audited judgments (ebtui audit) give every human-calibrated model mean a "
                   "95%% half-width of at most W, from the audit scored so far (over the --from tournaments' "
                   "rounds, else every round).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.pass_context
def plan(ctx: click.Context, from_ids: tuple[str, ...], config_path: str | None, delta: float | None,
         half_width: float | None, n_models: int | None, models_file: str | None, store: str | None, as_json: bool,
         audit_half_width: float | None = None) -> None:
    """Predict interval half-width, detectable gap, calls and cost for candidate designs (calls nothing)."""
    from ebtui.cli.common import load_document
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.plan import plan_config, precision_plan

    app = open_context(store=ctx_option(ctx, "store", store), models_file=ctx_option(ctx, "models_file", models_file))
    document = ctx_option(ctx, "document", None)
    try:
        cfg = plan_config(app, config_path, from_ids, document)
        got = precision_plan(app, cfg, from_ids=from_ids, config_given=config_path is not None, delta=delta,
                             half_width=half_width, n_models=n_models, document=document,
                             document_dilemmas=lambda path: len(load_document(path).dilemmas))
        audit = None
        if audit_half_width is not None:  # the human audit (issue #36): ebtui.core.usecases.audit
            from ebtui.core.usecases.audit import plan_audit

            audit = plan_audit(app, audit_half_width, tournaments=from_ids)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if as_json:
        out = got.json()
        if audit is not None and isinstance(out, dict):
            out["human_audit"] = audit
        click.echo(json.dumps(out, ensure_ascii=False, allow_nan=False))
        return
    click.echo(_text(got.result, got.components))
    if audit is not None:
        click.echo("\nHuman audit: " + audit["message"])


def _money(v: float | None) -> str:
    return "—" if v is None else f"${num.shown(v, ',.2f')}"


def _text(result: PlanResult, vc: VarianceComponents) -> str:
    lines = [f"Planning for {len(result.models)} models: {', '.join(result.models)}",
             f"Variance components: {vc.source}"
             + (f" from {vc.n_rows} scores on {vc.dilemmas} dilemmas" if vc.source == "estimated" else "")
             + " — " + ", ".join(f"{k} {num.fixed(v, 3)}" for k, v in vc.values().items()),
             f"Document: {result.document_dilemmas} dilemmas" if result.document_dilemmas else "",
             "",
             "half-width: the expected half-width of a pairwise difference's interval as the report's pairwise "
             "table prints it (mean over pairs): " + result.standard + "; gap: the smallest true gap whose "
             "interval excludes 0 with 80% power (α = 0.05 over the table).", ""]
    head = f"{'judging':<8} {'repeats':>7} {'dilemmas':>8} {'judges/ex':>9} {'half-width':>10} {'gap':>6} " \
           f"{'calls':>7} {'list':>10} {'batch':>10}"
    lines += [head, "-" * len(head)]
    for d in result.designs:
        mark = "" if d.in_document else "  (more than the document has)"
        lines.append(f"{d.judge_mode:<8} {d.repeats:>7} {d.dilemmas:>8} {num.shown(d.judges_per_exchange, '>9.1f')} "
                     f"{num.shown((d.half_width or float('nan')), '>10.3f')} {num.shown((d.detectable_gap or float('nan')), '>6.3f')} "
                     f"{d.calls:>7} {_money(d.cost_usd):>10} {_money(d.batch_cost_usd):>10}{mark}")
    if result.answer is not None:
        lines += ["", "Answer: " + result.answer["message"]]
    if result.target is not None:
        lines += ["", "Half-width target: " + result.target["message"]]
    lines += ["", *[f"Note: {n}" for n in [*result.notes, *vc.notes]]]
    return "\n".join(line for line in lines if line is not None).rstrip()
