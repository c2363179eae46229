"""`ebtui plan`: how big a tournament must be to tell models apart — candidate designs with their predicted
pairwise interval half-width, smallest detectable gap (80% power, α = 0.05), calls and cost. Calls nothing.

Variance components come from saved tournaments (`--from ID`, repeatable) or, without them, the documented
defaults (docs/STATISTICS.md). Models, judges, document and prices come from `--config tournament.toml`, else
from the first `--from` tournament's saved config, else `--models N` placeholder models (no prices).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ebtui.cli.common import CliError, ctx_option


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
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.pass_context
def plan(ctx: click.Context, from_ids: tuple[str, ...], config_path: str | None, delta: float | None,
         half_width: float | None, n_models: int | None, models_file: str | None, store: str | None, as_json: bool) -> None:
    """Predict interval half-width, detectable gap, calls and cost for candidate designs (calls nothing)."""
    from ebtui.core.analysis.families import family_function
    from ebtui.core.analysis.variance import default_components, variance_components
    from ebtui.core.tournament.planner import make_plan

    cfg = _config(ctx, config_path, from_ids, store)
    rounds: list[Any] = []
    if from_ids:
        from ebtui.core.store import ResultsStore, StoreError
        from ebtui.locations import store_dir

        root = store_dir(ctx_option(ctx, "store", store))
        if not root.is_dir():
            raise CliError(f"no results store at {root} (give --store DIR)")
        rs = ResultsStore(root)
        for tid in from_ids:
            try:
                got = rs.load_rounds(tournament=tid)
            except (StoreError, ValueError) as exc:
                raise CliError(f"{root}: {exc}") from None
            if not got:
                raise CliError(f"--from {tid}: no rounds of that tournament in {root}")
            rounds += got
    vc = variance_components(rounds, family_function(None)) if rounds else default_components(
        "no --from tournament given")

    pricing = None
    notes: list[str] = []
    doc_dilemmas: int | None = None
    if cfg is not None and n_models is None:
        from ebtui.config import ConfigError, load_models_config
        from ebtui.core.tournament import TournamentSetupError, plan_tournament
        from ebtui.core.tournament.planner import pricing_for

        models = list(cfg.models)
        judges = list(cfg.judges) if isinstance(cfg.judges, list) else None
        self_debates = cfg.self_debates
        try:
            models_cfg = load_models_config(ctx_option(ctx, "models_file", models_file))
            tplan = plan_tournament(cfg, models_cfg)
        except (ConfigError, TournamentSetupError) as exc:
            if config_path is not None:
                raise CliError(str(exc)) from None
            # the saved tournament's models are not in this models.toml: plan its design without prices
            from ebtui.cli.common import load_document

            notes.append(f"no prices: {exc} (give --models-file / --config for costs)")
            doc_dilemmas = len(load_document(cfg.document or ctx_option(ctx, "document", None)).dilemmas)
        else:
            doc_dilemmas = len(tplan.dilemmas)
            pricing = pricing_for(tplan, ("rotate", "panel"))
            if pricing and pricing.unpriced:
                notes.append(f"no price configured for {', '.join(pricing.unpriced)} (counted as $0)")
    else:
        from ebtui.cli.common import load_document

        models = [f"model-{i + 1}" for i in range(n_models or 4)]
        judges = None
        self_debates = False
        doc_dilemmas = len(load_document(ctx_option(ctx, "document", None)).dilemmas)
        notes.append("placeholder models, no prices: give --config tournament.toml for costs")
    result = make_plan(models, vc.values(), judges=judges, document_dilemmas=doc_dilemmas, delta=delta,
                       self_debates=self_debates, pricing=pricing, components_json=vc.json(), half_width=half_width)
    result.notes += notes
    if as_json:
        from ebtui.core.analysis.compare import finite

        click.echo(json.dumps(finite(result.json()), ensure_ascii=False, allow_nan=False))
        return
    click.echo(_text(result, vc))


def _config(ctx: click.Context, config_path: str | None, from_ids: tuple[str, ...], store: str | None) -> Any:
    from ebtui.core.tournament.config import (
        TournamentConfigError,
        load_tournament_config,
        parse_tournament_config,
    )

    if config_path is not None:
        try:
            cfg = load_tournament_config(config_path)
        except TournamentConfigError as exc:
            raise CliError(str(exc)) from None
    elif from_ids:
        from ebtui.core.store import ResultsStore, StoreError
        from ebtui.locations import store_dir

        root = store_dir(ctx_option(ctx, "store", store))
        try:
            t = ResultsStore(root).load_tournament(from_ids[0]) if root.is_dir() else None
        except StoreError:
            t = None
        if t is None or not t.config:
            return None
        try:
            cfg = parse_tournament_config({k: v for k, v in t.config.items() if k != "source"},
                                          f"tournament {from_ids[0]}")
        except TournamentConfigError:
            return None
    else:
        return None
    if cfg.document is None and (doc := ctx_option(ctx, "document", None)):
        cfg.document = str(Path(doc).resolve())
    return cfg


def _money(v: float | None) -> str:
    return "—" if v is None else f"${v:,.2f}"


def _text(result: Any, vc: Any) -> str:
    lines = [f"Planning for {len(result.models)} models: {', '.join(result.models)}",
             f"Variance components: {vc.source}"
             + (f" from {vc.n_rows} scores on {vc.dilemmas} dilemmas" if vc.source == "estimated" else "")
             + " — " + ", ".join(f"{k} {v:.3f}" for k, v in vc.values().items()),
             f"Document: {result.document_dilemmas} dilemmas" if result.document_dilemmas else "",
             "",
             "half-width: expected 95% interval half-width of a pairwise difference (mean over pairs); gap: the "
             "smallest true gap found with 80% power at α = 0.05.", ""]
    head = f"{'judging':<8} {'repeats':>7} {'dilemmas':>8} {'judges/ex':>9} {'half-width':>10} {'gap':>6} " \
           f"{'calls':>7} {'list':>10} {'batch':>10}"
    lines += [head, "-" * len(head)]
    for d in result.designs:
        mark = "" if d.in_document else "  (more than the document has)"
        lines.append(f"{d.judge_mode:<8} {d.repeats:>7} {d.dilemmas:>8} {d.judges_per_exchange:>9.1f} "
                     f"{(d.half_width or float('nan')):>10.3f} {(d.detectable_gap or float('nan')):>6.3f} "
                     f"{d.calls:>7} {_money(d.cost_usd):>10} {_money(d.batch_cost_usd):>10}{mark}")
    if result.answer is not None:
        lines += ["", "Answer: " + result.answer["message"]]
    if result.target is not None:
        lines += ["", "Half-width target: " + result.target["message"]]
    lines += ["", *[f"Note: {n}" for n in [*result.notes, *vc.notes]]]
    return "\n".join(line for line in lines if line is not None).rstrip()
