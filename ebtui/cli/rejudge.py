"""`ebtui rejudge`: more judgments of saved rounds — other judges, repeats, the other reading order — with no
team call and no change to any transcript (see ebtui.core.rejudge). Resumable: run it again after an
interruption and it asks only for the judgments not saved yet."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import click

from ebtui.cli.common import EXIT_INCOMPLETE, CliError, ctx_option
from ebtui.core.safe_text import strip_control


def _split(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out += [p.strip() for p in v.split(",") if p.strip()]
    return list(dict.fromkeys(out))


def _rounds(results: Any, targets: list[str]) -> tuple[list[Any], str]:
    """The rounds the targets name: a tournament (id or name) or round ids; (rounds, label)."""
    from ebtui.core.store import StoreError

    tournaments = results.list_tournaments()
    if len(targets) == 1:
        t = targets[0]
        hits = [x for x in tournaments if t in (x.id, x.name)]
        if len(hits) > 1:
            raise CliError(f"{t!r} names {len(hits)} tournaments ({', '.join(x.id for x in hits)}): give the id")
        if hits:
            rounds = results.load_rounds(tournament=hits[0].id)
            if not rounds:
                raise CliError(f"tournament {t!r} has no rounds in {results.root}")
            return rounds, hits[0].id
    out = []
    for rid in targets:
        try:
            out.append(results.load_round(rid))
        except (StoreError, ValueError):
            raise CliError(f"{rid!r} is neither a tournament (id or name) nor a round id in {results.root}") from None
    return out, ",".join(sorted(targets))


@click.command()
@click.argument("targets", nargs=-1, required=True, metavar="TOURNAMENT | ROUND_ID...")
@click.option("--judges", multiple=True, metavar="NAMES",
              help="Judges to ask (models.toml names, comma-separated or repeated; default: each round's own judge).")
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Judgments per judge and round (repeats of one judge measure its test-retest agreement).")
@click.option("--order", type=click.Choice(["same", "swapped", "balanced"]), default="same", show_default=True,
              help="Reading order: as the round's own judgment, the other one (Team B's material first when it "
                   "was A's), or balanced (alternating; with --repeats 2 each round is read both ways).")
@click.option("--allow-own", is_flag=True, help="Let a model judge rounds it plays in (off: they are skipped).")
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
    from ebtui.config import ConfigError, load_models_config
    from ebtui.core.rejudge import estimate_cost, plan_rejudge
    from ebtui.core.store import ResultsStore
    from ebtui.core.tournament.costs import model_infos
    from ebtui.locations import store_dir

    root = store_dir(ctx_option(ctx, "store", store))
    if not root.is_dir():
        raise CliError(f"no results store at {root} (give --store DIR)")
    results = ResultsStore(root)
    rounds, label = _rounds(results, list(targets))
    judge_names = _split(judges) or None
    try:
        models_cfg = load_models_config(ctx_option(ctx, "models_file", models_file))
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    plan = plan_rejudge(rounds, judges=judge_names, repeats=repeats, order=order, allow_own=allow_own)
    if only_views:
        plan.calls, views = [], True
    view_judges = sorted({j for (j, _d) in _views_needed(rounds, judge_names)}) if views else []
    needed = sorted({c.judge for c in plan.calls} | set(view_judges))
    unknown = [j for j in needed if j not in models_cfg.models]
    if unknown:
        raise CliError(f"judge(s) not in models.toml: {', '.join(unknown)}")
    infos = model_infos(needed, {}, models_cfg)
    est = estimate_cost(plan, infos)
    view_calls = _views_plan(root, rounds, judge_names) if views else None
    if dry_run:
        _print_plan(plan, est, as_json, view_calls)
        return
    if not plan.calls and not (view_calls and any(view_calls.values())):
        click.echo(f"nothing to ask: {len(plan.done)} planned judgment(s) already saved, "
                   f"{len(plan.skipped)} round(s) skipped", err=True)
        return
    from ebtui.providers.registry import build_clients

    try:
        clients = build_clients(models_cfg, needed)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    run_id = "rejudge-" + hashlib.sha256(
        json.dumps([label, judge_names, repeats, order, allow_own]).encode()).hexdigest()[:12]
    coordinator = None
    if batch:
        clients, coordinator = _batch(clients, models_cfg, root, run_id)
    click.echo(f"asking {len(plan.calls)} judgment(s) of {plan.targets} round(s) "
               f"({len(plan.done)} already saved)…", err=True)

    def on_done(pj: Any, outcome: str) -> None:
        click.echo(f"  {pj.round_id} {pj.judge} order {pj.order} repeat {pj.repeat}: {strip_control(outcome)}",
                   err=True)

    view_failed: list[int] = []

    async def go() -> Any:
        from ebtui.core.rejudge import call_cost, run_rejudge
        from ebtui.core.tournament.costs import Budget

        try:
            res = await run_rejudge(plan, results, clients, concurrency=concurrency, on_done=on_done,
                                    budget=Budget(budget) if budget is not None else None,
                                    cost_of=lambda pj: call_cost(pj, infos))
            if views:
                from ebtui.core.judge_views import gather_views
                from ebtui.core.rejudge import round_dilemma

                fresh = [results.load_round(r.id) for r in rounds]
                counts = await gather_views(root, fresh, clients, round_dilemma, judges=judge_names,
                                            concurrency=concurrency,
                                            on_done=lambda m: click.echo(f"  {strip_control(m)}", err=True))
                click.echo(f"own views asked: {counts['views']}, team conclusions classified: "
                           f"{counts['conclusions']}, failed: {counts['failed']}, unreadable: {counts['unreadable']}",
                           err=True)
                view_failed.append(counts["failed"])
            return res
        finally:
            if coordinator is not None:
                await coordinator.aclose()
            for c in clients.values():
                await c.aclose()

    try:
        res = asyncio.run(go())
    except KeyboardInterrupt:
        results.flush()
        click.echo("interrupted: what was saved stays; run the same command again to ask for the rest", err=True)
        ctx.exit(130)
    results.flush()
    click.echo(f"{len(res.added)} judgment(s) added, {len(res.failed)} failed"
               + (" (run again to retry them)" if res.failed else "")
               + (f", {len(res.over_budget)} not asked: over the ${budget:g} budget (run again with a larger "
                  "--budget)" if res.over_budget else ""), err=True)
    if res.failed or res.over_budget or sum(view_failed):
        ctx.exit(EXIT_INCOMPLETE)


def _batch(clients: dict[str, Any], models_cfg: Any, root: Any, run_id: str) -> tuple[dict[str, Any], Any]:
    from ebtui.core.batch import BatchSettings, LedgerError
    from ebtui.core.batch.coordinator import BatchCoordinator
    from ebtui.core.batch.ledger import BatchLedger
    from ebtui.core.batch.setup import batch_model_names
    from ebtui.providers.batch import batch_client

    names = batch_model_names(list(clients), models_cfg)
    if not names:
        click.echo("ebtui: --batch: no judge here has a batch API; every call is streamed.", err=True)
        return clients, None
    try:
        ledger = BatchLedger.open(root, run_id)
    except LedgerError as exc:
        raise CliError(strip_control(str(exc))) from None
    bclients = {n: c for n in names if (c := batch_client(models_cfg.models[n])) is not None}
    coord = BatchCoordinator(ledger, bclients, BatchSettings())
    out = dict(clients)
    for n in bclients:
        out[n] = coord.client(n, clients[n])
    return out, coord


def _views_needed(rounds: list[Any], judges: list[str] | None) -> Any:
    from ebtui.core.judge_views import needed

    return needed(rounds, judges)


def _views_plan(root: Any, rounds: list[Any], judges: list[str] | None) -> dict[str, int]:
    from ebtui.core.judge_views import plan_views

    return plan_views(root, rounds, judges)


def _print_plan(plan: Any, est: dict[str, Any], as_json: bool, view_calls: dict[str, int] | None = None) -> None:
    if as_json:
        click.echo(json.dumps({
            "calls": [{"round": c.round_id, "judge": c.judge, "order": c.order, "repeat": c.repeat, "key": c.key}
                      for c in plan.calls],
            "already_saved": len(plan.done), "rounds": plan.targets,
            "skipped": [{"round": r, "reason": why} for r, why in plan.skipped],
            "estimate": est, "team_calls": 0, "view_calls": view_calls,
        }, ensure_ascii=False))
        return
    if view_calls is not None:
        click.echo(f"{view_calls['views']} own-view call(s) and {view_calls['conclusions']} team-conclusion "
                   "call(s) still to ask (--views)")
    click.echo(f"{len(plan.calls)} judge call(s) on {plan.targets} round(s); {len(plan.done)} already saved; "
               "no team call")
    for c in plan.calls:
        click.echo(f"  {c.round_id}  judge {c.judge}  order {c.order}  repeat {c.repeat}  key {c.key}")
    for j, row in est["judges"].items():
        cost = "no price" if row["cost_usd"] is None else f"${row['cost_usd']:.4f}"
        click.echo(f"  {j}: {row['calls']} call(s), ~{row['input_tokens']} input + {row['output_tokens']} output "
                   f"tokens, {cost}")
    click.echo(f"  estimated total ${est['total_usd']:.4f}"
               + (f" (no price for {', '.join(est['unpriced'])})" if est["unpriced"] else ""))
    for rid, why in plan.skipped:
        click.echo(f"  skipped {rid}: {strip_control(why)}")
