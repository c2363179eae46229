"""`ebtui rejudge`: more judgments of saved rounds — other judges, repeats, the other reading order — with no
team call and no change to any transcript (see ebtui.core.rejudge). Resumable: run it again after an
interruption and it asks only for the judgments not saved yet."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import click

from ebtui.cli.common import EXIT_INCOMPLETE, CliError, ctx_option
from ebtui.core.safe_text import strip_control
from ebtui.core.views import numbers as num
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.rejudge import PlannedJudgment, PreparedRejudge


def _split(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out += [p.strip() for p in v.split(",") if p.strip()]
    return list(dict.fromkeys(out))


@click.command()
@click.argument("targets", nargs=-1, required=True, metavar="TOURNAMENT | ROUND_ID...")
@click.option("--judges", multiple=True, metavar="NAMES",
              help="Judges to ask (models.toml names, comma-separated or repeated; default: each round's own judge).")
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Judgments per judge and round (repeats of one judge measure its test-retest agreement).")
@click.option("--order", type=click.Choice(["same", "swapped", "balanced"]), default="same", show_default=True,
              help="Reading order: as the round's own judgment, the other one (Team B's material first when it "
                   "was A's), or balanced (alternating; with --repeats 2 each round is read both ways).")
@click.option("--allow-own", is_flag=True, help="Let a model judge rounds it plays in (off: they are skipped); the "
              "report's self_and_family table then measures its self-preference apart from its family's.")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=8, show_default=True,
              help="Judge calls in flight.")
@click.option("--batch", is_flag=True,
              help="Send the calls of judges whose provider has a batch API through it (one wave; resumable).")
@click.option("--views", is_flag=True,
              help="Also ask each judge's own blind answer to each dilemma (once, cached) and which course each "
                   "team concluded for (once per exchange), for the agreement-with-own-view statistics.")
@click.option("--only-views", is_flag=True, help="Only the --views calls; no judgment.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), metavar="USD",
              help="Stop asking once the judge calls would cost more than this (list prices; run again with a "
                   "larger budget to ask the rest).")
@click.option("--dry-run", is_flag=True, help="Print the calls and their estimated cost; ask nothing.")
@click.option("--json", "as_json", is_flag=True, help="With --dry-run: the plan as JSON.")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.option("--models", "models_file", type=click.Path(dir_okay=False), help="models.toml to use.")
@click.pass_context
def rejudge(ctx: click.Context, targets: tuple[str, ...], judges: tuple[str, ...], repeats: int, order: str,
            allow_own: bool, concurrency: int, batch: bool, views: bool, only_views: bool, budget: float | None,
            dry_run: bool, as_json: bool, store: str | None, models_file: str | None) -> None:
    """Judge saved rounds again: only judge calls; each judgment is added to its round (transcripts unchanged)."""
    from ebtui.core.usecases import rejudge as uc
    from ebtui.core.usecases.context import open_context

    app = open_context(store=ctx_option(ctx, "store", store), models_file=ctx_option(ctx, "models_file", models_file))
    req = uc.RejudgeRequest(list(targets), _split(judges) or None, repeats, order, allow_own, views, only_views)
    try:
        prep = uc.prepare(app, req)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if dry_run:
        _print_plan(prep, as_json)
        return
    plan = prep.plan
    if prep.nothing_to_ask:
        click.echo(f"nothing to ask: {len(plan.done)} planned judgment(s) already saved, "
                   f"{len(plan.skipped)} round(s) skipped", err=True)
        return
    try:
        clients = uc.judge_clients(app, prep)
        coordinator = None
        if batch:
            clients, coordinator = uc.batch_clients(app, prep, clients)
            if coordinator is None:
                click.echo("ebtui: --batch: no judge here has a batch API; every call is streamed.", err=True)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    click.echo(f"asking {len(plan.calls)} judgment(s) of {plan.targets} round(s) "
               f"({len(plan.done)} already saved)…", err=True)

    def on_done(pj: PlannedJudgment, outcome: str) -> None:
        click.echo(f"  {pj.round_id} {pj.judge} order {pj.order} repeat {pj.repeat}: {strip_control(outcome)}",
                   err=True)

    results = app.store
    try:
        got = asyncio.run(uc.run(app, prep, clients, coordinator=coordinator, concurrency=concurrency, budget=budget,
                                 on_done=on_done, on_view=lambda m: click.echo(f"  {strip_control(m)}", err=True)))
    except KeyboardInterrupt:
        results.flush()
        click.echo("interrupted: what was saved stays; run the same command again to ask for the rest", err=True)
        ctx.exit(130)
    results.flush()
    if prep.views:
        counts = got.view_counts
        click.echo(f"own views asked: {counts['views']}, team conclusions classified: "
                   f"{counts['conclusions']}, failed: {counts['failed']}, unreadable: {counts['unreadable']}",
                   err=True)
    res = got.result
    click.echo(f"{len(res.added)} judgment(s) added, {len(res.failed)} failed"
               + (" (run again to retry them)" if res.failed else "")
               + (f", {len(res.over_budget)} not asked: over the ${num.shown(budget, 'g')} budget (run again with a larger "
                  "--budget)" if res.over_budget else ""), err=True)
    if got.incomplete:
        ctx.exit(EXIT_INCOMPLETE)


def _print_plan(prep: PreparedRejudge, as_json: bool) -> None:
    from ebtui.core.usecases.rejudge import plan_json

    if as_json:
        click.echo(json.dumps(plan_json(prep), ensure_ascii=False))
        return
    plan, est, view_calls = prep.plan, prep.estimate, prep.view_calls
    if view_calls is not None:
        click.echo(f"{view_calls['views']} own-view call(s) and {view_calls['conclusions']} team-conclusion "
                   "call(s) still to ask (--views)")
    click.echo(f"{len(plan.calls)} judge call(s) on {plan.targets} round(s); {len(plan.done)} already saved; "
               "no team call")
    for c in plan.calls:
        click.echo(f"  {c.round_id}  judge {c.judge}  order {c.order}  repeat {c.repeat}  key {c.key}")
    for j, row in est["judges"].items():
        cost = "no price" if row["cost_usd"] is None else f"${num.fixed(row['cost_usd'], 4)}"
        click.echo(f"  {j}: {row['calls']} call(s), ~{row['input_tokens']} input + {row['output_tokens']} output "
                   f"tokens, {cost}")
    click.echo(f"  estimated total ${num.fixed(est['total_usd'], 4)}"
               + (f" (no price for {', '.join(est['unpriced'])})" if est["unpriced"] else ""))
    for rid, why in plan.skipped:
        click.echo(f"  skipped {rid}: {strip_control(why)}")
