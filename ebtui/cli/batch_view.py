"""`ebtui tournament --batch`: setting up batch mode, its dry-run figures, and its progress messages."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import click

from ebtui.cli.common import CliError
from ebtui.core.safe_text import strip_control
from ebtui.core.views import numbers as num
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext
    from ebtui.core.usecases.tournament import BatchCoordinator, ModelClient, TournamentPlan


def setup_batch(app: AppContext, plan: TournamentPlan, clients: Mapping[str, ModelClient],
                poll_max_s: float) -> tuple[dict[str, ModelClient], BatchCoordinator | None]:
    from ebtui.core.usecases.tournament import use_batch

    try:
        out, coordinator = use_batch(app, plan, clients, poll_max_s)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if coordinator is None:
        click.echo("ebtui: --batch: no model of this tournament has a batch API; every call is streamed.",
                   err=True)
    return out, coordinator


def batch_dry_run(b: Mapping[str, Any], as_json: bool, plain: str) -> str:
    """The dry run with the batch prices (`b`: ebtui.core.batch.estimate.batch_estimate's figures)."""
    if as_json:
        data = json.loads(plain)
        data["batch"] = b
        data["list_price_usd"] = b["list_price_usd"]
        data["batch_price_usd"] = b["batch_price_usd"]
        data["expected_cache_savings_usd"] = b["expected_cache_savings_usd"]
        return json.dumps(data, indent=2)
    lines = [plain, "", "  With --batch:"]
    w = max([len(m) for m in b["models"]] + [5])
    lines.append(f"  {'model':<{w}}  batch   list price  batch price  cached share  cache saves")
    for m, r in b["models"].items():
        lp = "(no price)" if r["list_price_usd"] is None else f"${num.fixed(r['list_price_usd'], 4)}"
        bp = "(no price)" if r["batch_price_usd"] is None else f"${num.fixed(r['batch_price_usd'], 4)}"
        lines.append(f"  {m:<{w}}  {'yes' if r['batch'] else 'no ':<5}  {lp:>10}  {bp:>11}  "
                     f"{num.shown(r['expected_cached_share'], '>12.0%')}  ${num.fixed(r['expected_cache_savings_usd'], 4)}")
    lines.append(f"  List price ${num.fixed(b['list_price_usd'], 4)}; batch price ${num.fixed(b['batch_price_usd'], 4)}; "
                 f"expected prompt-cache savings ${num.fixed(b['expected_cache_savings_usd'], 4)} "
                 f"(so about ${num.fixed(b['batch_price_with_cache_usd'], 4)}).")
    if b["streamed_models"]:
        lines.append(f"  No batch API (streamed at list price): {', '.join(b['streamed_models'])}.")
    return "\n".join(lines)


def pending_note(coordinator: BatchCoordinator) -> str:
    """A line naming the batches still running at the providers (a stopped run's resume collects them)."""
    pending = [v for v in coordinator.views() if v["state"] in ("submitted", "in_progress")]
    if not pending:
        return ""
    items = sum(v["total"] for v in pending)
    return (f"{len(pending)} submitted batch(es) with {items} item(s) not collected yet (the providers run them "
            "and bill them anyway); resuming with --batch collects their answers instead of asking again.")


class BatchMessages:
    """Prints a line when a batch is submitted or ends (the coordinator's on_change)."""

    def __init__(self, coordinator: BatchCoordinator, say: Callable[[str], None]) -> None:
        self.coordinator = coordinator
        self.say = say
        self.seen: dict[str, str] = {}

    def __call__(self) -> None:
        for v in self.coordinator.views():
            state = v["state"]
            if self.seen.get(v["id"]) == state:
                continue
            self.seen[v["id"]] = state
            if state in ("submitted", "done", "failed", "expired", "cancelled"):
                failed = f", {v['failed']} failed" if v["failed"] else ""
                self.say(f"batch {strip_control(v['id'])} ({v['model']}, wave {v['wave']}: {v['phases']}): "
                         f"{state}, {v['total']} items{failed}")
