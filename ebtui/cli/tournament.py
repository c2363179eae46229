"""`ebtui tournament CONFIG`: run (or resume, or dry-run) a tournament; `ebtui tournaments list`.

The tournament never starts Textual: progress is plain stderr lines, updated in place with \\r when
stderr is a terminal, else one line every few seconds.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from ebtui.cli.common import EXIT_INCOMPLETE, EXIT_INTERRUPTED, CliError, ctx_option, echo_unreadable
from ebtui.core.safe_text import strip_control
from ebtui.core.views import numbers as num
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext
    from ebtui.core.usecases.tournament import (
        DryRun,
        DryRunEstimate,
        Progress,
        TournamentConfig,
        TournamentPlan,
        TournamentRun,
    )


class ProgressLine:
    """One status line on stderr: in place on a terminal, else a line every `interval_s` seconds."""

    def __init__(self, stream: TextIO | None = None, *, interval_s: float = 5.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval_s = interval_s
        self._last = 0.0
        self._width = 0

    def text(self, p: Progress) -> str:
        return p.describe()

    def update(self, p: Progress, *, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if not force and now - self._last < 0.2:
                return
            line = self.text(p)
            pad = max(0, self._width - len(line))
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
        else:
            if not force and now - self._last < self.interval_s:
                return
            self.stream.write(self.text(p) + "\n")
        self.stream.flush()
        self._last = now

    def message(self, text: str) -> None:
        """A line of its own (above the in-place status line)."""
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


def _dry_run_report(dry: DryRun, cfg: TournamentConfig, budget: float | None) -> str:
    est = dry.estimate
    models = sorted(est.calls)
    w = max([len(m) for m in models] + [5])
    lines = [
        f"Dry run of tournament {est.tournament_id} ({cfg.display_name()}) — nothing is called.",
        f"  {est.rounds} rounds ({est.exchanges} exchanges × "
        f"{'a panel of judges' if est.judge_mode == 'panel' else 'one judge'}) over {len(est.dilemmas)} "
        f"dilemma(s); {est.total_calls} model calls.",
        "",
        f"  {'model':<{w}}  presenting  responding  judging   calls   in tokens  out tokens        cost",
    ]
    for m in models:
        c = est.calls[m]
        cost = est.cost_usd.get(m)
        lines.append(
            f"  {m:<{w}}  {c['presenting']:>10}  {c['responding']:>10}  {c['judging']:>7}  {sum(c.values()):>6}"
            f"  {est.input_tokens[m]:>10}  {est.output_tokens[m]:>10}"
            + "  " + ("(no price)" if cost is None else f"${num.fixed(cost, 4)}").rjust(10)
        )
    tin = sum(est.input_tokens.values())
    tout = sum(est.output_tokens.values())
    lines.append(f"  {'total':<{w}}  {'':>10}  {'':>10}  {'':>7}  {est.total_calls:>6}  {tin:>10}  {tout:>10}"
                 + "  " + f"${num.fixed(est.total_cost_usd, 4)}".rjust(10))
    lines.append("")
    lines.append("  presenting = Team A's presentation, rebuttal and consistency test (3 calls a round); "
                 "responding = Team B's response; judging = one call per judgment.")
    outs = sorted(set(est.output_tokens_per_call.values()))
    lines.append(f"  Tokens: prompts measured at ~4 characters a token; output assumed "
                 f"{'/'.join(str(o) for o in outs)} tokens a call (set expected_output_tokens to refine).")
    if est.unpriced_models:
        lines.append(f"  No price configured for: {', '.join(est.unpriced_models)} (counted as $0).")
    lines.append(f"  Disk: about {num.shown(dry.disk_bytes / 1e6, ',.1f')} MB for the round files (checked against the free space "
                 "before a run).")
    if budget is not None:
        verdict = "within" if est.total_cost_usd <= budget else "OVER"
        lines.append(f"  Budget: ${num.fixed(budget)} — the estimate is {verdict} it.")
    return "\n".join(lines)


def _dry_run_json(est: DryRunEstimate) -> str:
    return json.dumps(
        {
            "tournament_id": est.tournament_id,
            "rounds": est.rounds,
            "exchanges": est.exchanges,
            "judge_mode": est.judge_mode,
            "dilemmas": est.dilemmas,
            "total_calls": est.total_calls,
            "calls": {m: dict(c) for m, c in est.calls.items()},
            "input_tokens": dict(est.input_tokens),
            "output_tokens": dict(est.output_tokens),
            "cost_usd": est.cost_usd,
            "total_cost_usd": est.total_cost_usd,
        },
        indent=2,
    )


@click.command()
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Print the schedule size, calls, tokens and cost; call nothing.")
@click.option("--resume", "resume_id", metavar="ID", help="Continue this saved tournament.")
@click.option("--budget", type=float, help="Override budget_usd (e.g. to resume past a budget stop).")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory.")
@click.option("--models", "models_file", type=click.Path(dir_okay=False), help="models.toml to use.")
@click.option("--concurrency", type=click.IntRange(1, 1024), help="Override the config's concurrency.")
@click.option("--json", "as_json", is_flag=True, help="With --dry-run: the estimate as JSON.")
@click.option("--batch", is_flag=True,
              help="Send the calls of models whose provider has a batch API through it, wave by wave, at "
                   "about half the price (the others stream as usual). See docs/BATCH.md.")
@click.option("--batch-poll-max", type=click.FloatRange(0.5, 3600), default=60.0, show_default=True,
              help="With --batch: the longest wait between two polls of a batch, in seconds.")
@click.option("--until-half-width", "until_half_width", type=click.FloatRange(min=0, min_open=True), metavar="W",
              help="Adaptive: after the first pass, add work until every pairwise interval's half-width is at "
                   "most W (overrides target_half_width; see docs/TOURNAMENTS.md).")
@click.pass_context
def tournament(
    ctx: click.Context,
    config: str | None,
    dry_run: bool,
    resume_id: str | None,
    budget: float | None,
    store: str | None,
    models_file: str | None,
    concurrency: int | None,
    as_json: bool,
    batch: bool = False,
    batch_poll_max: float = 60.0,
    until_half_width: float | None = None,
) -> None:
    """Run a tournament from a tournament.toml (see tournament.example.toml).

    Re-running the same config with the same store resumes it: complete rounds are kept, incomplete
    ones continue from their first missing phase, nothing is duplicated.
    """
    from ebtui.core.usecases import tournament as uc
    from ebtui.core.usecases.context import open_context

    if budget is not None and budget <= 0:
        raise CliError(f"--budget must be more than 0 (got {num.shown(budget, 'g')})")
    store = ctx_option(ctx, "store", store)
    models_file = ctx_option(ctx, "models_file", models_file)
    try:
        cfg, root = uc.read_config(config, resume_id, store)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    if concurrency is not None:
        cfg.concurrency = concurrency
    if until_half_width is not None:
        cfg.target_half_width = until_half_width
    cfg_label = config or str(cfg.source or "CONFIG")
    root_document: str | None = None
    if cfg.document is None and (doc := ctx_option(ctx, "document", None)):
        cfg.document = str(Path(doc).resolve())  # `ebtui --document X tournament ...`
        root_document = doc

    app = open_context(store=root, models_file=models_file)
    try:
        plan = uc.prepare(app, cfg, resume_id=resume_id, check_writable=not dry_run)
    except UsageError as exc:
        raise CliError(str(exc)) from None
    eff_budget = budget if budget is not None else cfg.budget_usd

    if dry_run:
        dry = uc.dry_run(plan, batch=batch)
        plain = _dry_run_json(dry.estimate) if as_json else _dry_run_report(dry, cfg, eff_budget)
        if dry.batch is not None:
            from ebtui.cli.batch_view import batch_dry_run

            click.echo(batch_dry_run(dry.batch, as_json, plain))
            return
        click.echo(plain)
        return

    rs = app.store
    try:
        uc.check_space(app, plan)
        clients = uc.clients_for(app, plan)
    except UsageError as exc:
        raise CliError(str(exc)) from None

    # the resume line carries every option that was given, so it can be pasted as is
    given = [("--models", models_file), ("--store", store), ("--concurrency", concurrency), ("--batch", batch),
             ("--batch-poll-max", batch_poll_max if batch and batch_poll_max != 60.0 else None)]

    def hint(resume_line: str) -> str:
        return uc.resume_command(resume_line, given, root_document)

    coordinator = None
    if batch:
        from ebtui.cli.batch_view import setup_batch

        clients, coordinator = setup_batch(app, plan, clients, batch_poll_max)

    def start() -> TournamentRun:  # inside the run's event loop, as the runner expects
        return uc.start(app, plan, clients, budget=budget, progress_interval_s=0.25, coordinator=coordinator)

    try:
        exit_code = asyncio.run(_run(start, plan, app, cfg_label, hint))
    except uc.StoreError as exc:
        raise CliError(f"results store: {exc}") from None
    except uc.TournamentBusyError as exc:
        raise CliError(str(exc)) from None
    finally:
        rs.close()
    ctx.exit(exit_code)


async def _run(start: Callable[[], TournamentRun], plan: TournamentPlan, app: AppContext, cfg_label: str,
               hint: Callable[[str], str] = lambda s: s) -> int:
    from ebtui.core.records import RoundStatus, TournamentStatus
    from ebtui.core.usecases.tournament import (
        AdaptiveMessage,
        RoundCompleted,
        RoundNotRun,
        TournamentFinished,
        TournamentStarted,
    )

    cfg, tid, store = plan.config, plan.tournament_id, app.store
    run = start()
    line = ProgressLine()
    coordinator = run.coordinator
    if coordinator is not None:
        from ebtui.cli.batch_view import BatchMessages

        coordinator.on_change = BatchMessages(coordinator, line.message)
    loop = asyncio.get_running_loop()
    interrupted = False

    interrupted_by_sigint = False

    def on_signal(sig: signal.Signals) -> None:
        nonlocal interrupted, interrupted_by_sigint
        if interrupted:
            return
        interrupted = True
        interrupted_by_sigint = sig == signal.SIGINT
        line.message("ebtui: stopping — saving what is done (interrupt again to quit at once)")
        run.cancel()
        loop.remove_signal_handler(signal.SIGINT)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal, sig)
        except (NotImplementedError, RuntimeError):  # not the main thread / platform without it
            pass
    finished: TournamentFinished | None = None
    try:
        async for ev in run.events():
            if isinstance(ev, TournamentStarted):
                p = ev.progress
                verb = "Resuming" if p.already_done or p.incomplete else "Starting"
                line.message(f"{verb} tournament {tid} ({cfg.display_name()}): {p.total} rounds, "
                             f"{p.already_done} already complete; store {store.root}")
            elif store.write_failure is not None and isinstance(ev, RoundCompleted | RoundNotRun):
                pass  # said once, below: the save that failed stopped everything
            elif isinstance(ev, RoundCompleted):
                r = ev.round
                if r.status != RoundStatus.COMPLETE:
                    line.message(f"round {r.id} ({ev.scheduled.schedule_key}) {r.status.value}: "
                                 f"{strip_control(r.error or '')[:200]}")
            elif isinstance(ev, RoundNotRun):
                line.message(f"round {ev.scheduled.schedule_key} not run: {strip_control(ev.reason)[:200]}")
            elif isinstance(ev, TournamentFinished):
                finished = ev
            elif isinstance(ev, AdaptiveMessage):  # an adaptive run's wave, measurement or stop
                line.message(f"adaptive: {ev.message}")
            if not isinstance(ev, AdaptiveMessage):
                line.update(ev.progress, force=isinstance(ev, TournamentFinished))
    finally:
        line.close()
        await run.aclose()  # the batches collected first, then the clients closed
        if coordinator is not None:
            from ebtui.cli.batch_view import pending_note

            if note := pending_note(coordinator):
                click.echo(note, err=True)
    assert finished is not None
    t = finished.tournament
    click.echo(finished.summary.format())
    click.echo("")
    p = finished.progress
    click.echo(f"Tournament {t.id}: {t.status.value} — {p.done}/{p.total} rounds complete, "
               f"${num.fixed(p.cost_usd, 4)} spent; rounds in {store.root / 'rounds'}")
    if store.write_failure is not None:
        click.echo(f"ebtui: error: {strip_control(str(store.write_failure))}. The tournament stopped there: no "
                   "round or model call was started after it; everything saved before is kept. Resume with "
                   f"(once there is space):\n  {hint(run.resume_hint(shlex.quote(cfg_label)))}", err=True)
        return EXIT_INCOMPLETE
    if t.status == TournamentStatus.COMPLETE:
        return 0
    if t.status == TournamentStatus.STOPPED_BUDGET:
        lim = run.budget_limit
        suggestion = max(lim * 2, lim + 1.0)
        click.echo(f"Budget of ${num.fixed(lim)} reached: no new call was started; everything done is saved. "
                   f"Resume with a larger budget:\n  {hint(run.resume_hint(shlex.quote(cfg_label), suggestion))}", err=True)
    else:
        click.echo(f"Not complete. Resume with:\n  {hint(run.resume_hint(shlex.quote(cfg_label)))}", err=True)
    return EXIT_INTERRUPTED if interrupted_by_sigint else EXIT_INCOMPLETE


@click.group()
def tournaments() -> None:
    """Saved tournaments."""


@tournaments.command("list")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def list_cmd(ctx: click.Context, store: str | None, as_json: bool) -> None:
    """List the tournaments in the store."""
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.tournament import StoreError, list_saved

    app = open_context(store=ctx_option(ctx, "store", store))
    root = app.store_root
    try:
        saved = list_saved(app, problems=True)
    except StoreError as exc:
        raise CliError(strip_control(str(exc))) from None
    echo_unreadable(saved.unreadable_tournaments, "tournament")
    echo_unreadable(saved.unreadable_rounds)
    rows = [(row.tournament, row.done, row.status) for row in saved.rows]
    if as_json:
        click.echo(json.dumps([
            {"id": t.id, "name": t.name, "status": status, "rounds_complete": done,
             "total_rounds": t.total_rounds, "models": t.models, "created": t.created.isoformat(),
             "note": t.note}
            for t, done, status in rows
        ], indent=2))
        return
    if not rows:
        click.echo(f"No tournaments in {root}.")
        return
    header = ["id", "name", "status", "rounds", "models", "created"]
    table = [[t.id, strip_control(t.name), status, f"{done}/{t.total_rounds}", ", ".join(t.models),
              t.created.strftime("%Y-%m-%d %H:%M")] for t, done, status in rows]
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths], *table]:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
