"""`ebtui compare A B`: is model A better than model B, and how sure — the judge-adjusted difference A − B
overall and per criterion, on the dilemmas both played, with intervals under the report's interval standard
(simultaneous over the pairs of the pairwise table, and over the criteria; judges as a sample) and Holm-adjusted
per-criterion p-values (--json: one JSON object)."""

from __future__ import annotations

import click

from ebtui.cli.common import CliError, ctx_option
from ebtui.core.views import numbers as num
from ebtui.errors import UsageError


def _num(v: float | None) -> str:
    return "—" if v is None else num.signed(float(v))


@click.command()
@click.argument("model_a")
@click.argument("model_b")
@click.option("--tournament", "tournament_id", help="Only the rounds of this tournament (default: every round).")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.option("--models", "models_file", type=click.Path(dir_okay=False),
              help="models.toml: each model's family (family, else provider) for the same-family term.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object on stdout.")
@click.pass_context
def compare(ctx: click.Context, model_a: str, model_b: str, tournament_id: str | None, store: str | None,
            models_file: str | None, as_json: bool) -> None:
    """Judge-adjusted difference MODEL_A − MODEL_B, overall and per criterion, with simultaneous 95% intervals."""
    from ebtui.core.usecases.compare import compare as compare_models
    from ebtui.core.usecases.compare import comparison_json
    from ebtui.core.usecases.context import open_context

    models_file = ctx_option(ctx, "models_file", models_file)
    app = open_context(store=ctx_option(ctx, "store", store), models_file=models_file)
    try:
        got = compare_models(app, model_a, model_b, tournament_id=tournament_id, explicit_models=bool(models_file))
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if as_json:
        import json

        click.echo(json.dumps(comparison_json(got, tournament_id), ensure_ascii=False, allow_nan=False))
        return
    from ebtui.core.safe_text import strip_control

    a, b = strip_control(model_a), strip_control(model_b)
    click.echo(f"{a} − {b}, judge-adjusted, on the {got['n_dilemmas']} dilemmas both played")
    std = got.get("standard")
    if std:
        click.echo(f"overall: {std['overall']}; criteria: {std['criteria']}. {std['population']}")
    rows = [("overall", got), *[(c["criterion"], c) for c in got["criteria"]]]
    width = max(len(r[0]) for r in rows)
    for name, r in rows:
        ci = f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]" if r["ci_low"] is not None else ""
        p = "" if r.get("p") is None else ("p<0.001" if r["p"] < 0.001 else f"p={num.fixed(r['p'], 3)}")
        if r.get("p_holm") is not None:
            p += f" (Holm {num.fixed(r['p_holm'], 3)})"
        why = f"({strip_control(str(r['reason']))})" if r.get("reason") else ""
        click.echo("  ".join(x for x in (name.ljust(width), _num(r["diff"]).rjust(6), ci, p, why) if x))
