"""`ebtui run`: play one round live in the terminal, save it, print where it went.

Exit codes: 0 the round completed; 1 it is incomplete or failed (a phase failed after its retries, or it
was stopped with SIGTERM) — saved all the same; 2 usage or configuration errors (checked before any model
call: document, models, keys, a writable store); 130 interrupted with Ctrl-C (the round saved as incomplete,
with the command that resumes it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import TextIO

import click

from ebtui.cli.common import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, CliError, ctx_option, load_document
from ebtui.core import events
from ebtui.core.records import CRITERIA, CRITERION_LABELS, PhaseStatus, PhaseType, Round, RoundStatus
from ebtui.core.safe_text import strip_control
from ebtui.core.usecases.context import AppContext, open_context
from ebtui.core.usecases.play import (
    PreparedRound,
    RoundRequest,
    keep_unsaved,
    play_to_end,
    prepare_round,
    resume_command,
)
from ebtui.core.usecases.rounds import StoreError, StoreWriteError
from ebtui.core.views import numbers as num
from ebtui.core.views.phases import PHASE_LABELS, speaker_label
from ebtui.core.views.scores import score_grid
from ebtui.errors import UsageError


def _speaker(pt: PhaseType, model: str) -> str:
    return f"{speaker_label(pt)}: {strip_control(model)}"


class LivePrinter:
    """Prints a round's events as they come, one phase at a time.

    Two phases stream at once (the consistency test beside the response and rebuttal). One of them is
    "live" and streams straight to the terminal; the other is buffered and printed whole once the live
    phase is done, so the output never interleaves. A retry voids what the phase streamed so far: the
    printer says so in place.
    """

    #: characters of one phase echoed as they stream; past it only a tail is shown at the phase's end
    #: (the whole reply is in the round file); $EBTUI_TERMINAL_MAX_CHARS changes it
    MAX_SHOWN = 20_000
    TAIL = 2_000

    def __init__(self, out: TextIO | None) -> None:
        self.out = out  # None: print nothing
        self.max_shown = _env_int("EBTUI_TERMINAL_MAX_CHARS", self.MAX_SHOWN)
        self.shown: dict[PhaseType, int] = {}  # characters of the phase shown (or buffered to show)
        self.hidden: dict[PhaseType, int] = {}  # characters of the phase not shown
        self.tails: dict[PhaseType, str] = {}  # the last TAIL characters not shown
        self.live: PhaseType | None = None
        self.models: dict[PhaseType, str] = {}
        self.buffers: dict[PhaseType, list[str]] = {}
        self.running: list[PhaseType] = []  # started, not yet finished, in start order
        self.held: list[list[str]] = []  # finished phases waiting for the live one, as printable blocks
        self.at_line_start = True

    # -- output --------------------------------------------------------------------------------------
    def write(self, text: str) -> None:
        if self.out is None or not text:
            return
        self.out.write(text)
        self.out.flush()
        self.at_line_start = text.endswith("\n")

    def newline(self) -> None:
        if not self.at_line_start:
            self.write("\n")

    def header(self, pt: PhaseType) -> str:
        title = f"── {PHASE_LABELS[pt]} · {_speaker(pt, self.models.get(pt, '?'))} "
        return f"\n{title}{'─' * max(3, 72 - len(title))}\n"

    @staticmethod
    def retry_note(ev: events.PhaseRetrying) -> str:
        return (
            f"\n[retrying: attempt {ev.attempt} in {num.fixed(ev.delay_s, 1)}s after {strip_control(ev.error)}; "
            "the text above is discarded]\n"
        )

    @staticmethod
    def end_note(ev: events.PhaseFinished | events.PhaseFailed) -> str:
        ph = ev.phase
        if ph.status == PhaseStatus.COMPLETE:
            extra = f", {ph.attempts} attempts" if ph.attempts > 1 else ""
            secs = f"{num.fixed(ph.latency, 1)}s" if ph.latency is not None else "?"
            return f"[done in {secs}, {ph.usage.output_tokens} tokens out{extra}]\n"
        what = {PhaseStatus.SKIPPED: "skipped", PhaseStatus.CANCELLED: "cancelled"}.get(ph.status, "FAILED")
        kind = f" ({ph.error_kind})" if ph.error_kind else ""
        return f"[{what}{kind}: {strip_control(ph.error or '')}]\n"

    # -- events --------------------------------------------------------------------------------------
    def handle(self, ev: events.RoundEvent) -> None:
        if isinstance(ev, events.PhaseStarted):
            self.models[ev.phase_type] = ev.model_id
            self.buffers[ev.phase_type] = []
            self.running.append(ev.phase_type)
            if self.live is None:
                self.go_live(ev.phase_type)
        elif isinstance(ev, events.TextDelta):
            text = self.bounded(ev.phase_type, strip_control(ev.text))
            if ev.phase_type == self.live:
                self.write(text)
            elif ev.phase_type in self.buffers:
                self.buffers[ev.phase_type].append(text)
        elif isinstance(ev, events.PhaseRetrying):
            self.shown.pop(ev.phase_type, None)
            self.hidden.pop(ev.phase_type, None)
            self.tails.pop(ev.phase_type, None)
            if ev.phase_type == self.live:
                self.write(self.retry_note(ev))
            else:
                self.buffers[ev.phase_type] = [self.retry_note(ev).lstrip("\n")]
        elif isinstance(ev, events.PhaseFinished | events.PhaseFailed):
            self.finish(ev)

    def bounded(self, pt: PhaseType, text: str) -> str:
        """The part of `text` still within the phase's echo limit; the rest is counted and its tail kept."""
        shown = self.shown.get(pt, 0)
        room = max(0, self.max_shown - shown)
        self.shown[pt] = shown + min(room, len(text))
        if len(text) > room:
            rest = text[room:]
            self.hidden[pt] = self.hidden.get(pt, 0) + len(rest)
            self.tails[pt] = (self.tails.get(pt, "") + rest[-self.TAIL:])[-self.TAIL:]
            return text[:room]
        return text

    def hidden_note(self, pt: PhaseType) -> str:
        hidden = self.hidden.pop(pt, 0)
        tail = self.tails.pop(pt, "")
        self.shown.pop(pt, None)
        if not hidden:
            return ""
        return (f"\n[… {hidden:,} characters not shown here (the reply is in the round file); "
                f"its last {len(tail):,}:]\n{tail}\n")

    def interrupted(self) -> None:
        """Ctrl-C: close the live phase and show what had finished behind it."""
        if self.live is not None:
            self.newline()
            self.write("[cancelled]\n")
            self.live = None
        for block in self.held:
            self.newline()
            self.write("".join(block))
        self.held.clear()

    def go_live(self, pt: PhaseType) -> None:
        self.live = pt
        self.newline()
        self.write(self.header(pt))
        self.write("".join(self.buffers.get(pt, [])))

    def finish(self, ev: events.PhaseFinished | events.PhaseFailed) -> None:
        pt = ev.phase.phase_type
        self.models.setdefault(pt, ev.phase.model_id)
        if pt in self.running:
            self.running.remove(pt)
        if pt == self.live:
            self.write(self.hidden_note(pt))
            self.newline()
            self.write(self.end_note(ev))
            self.live = None
        else:
            # finished while another phase streams (or never started: skipped)
            block = [self.header(pt)]
            if ev.phase.status == PhaseStatus.COMPLETE:
                if pt in self.buffers:
                    body = "".join(self.buffers.get(pt, []))
                else:
                    body = self.bounded(pt, strip_control(ev.phase.response))
                block.append(body if body.endswith("\n") else body + "\n")
            block.append(self.hidden_note(pt))
            block.append(self.end_note(ev))
            self.held.append(block)
        self.buffers.pop(pt, None)
        if self.live is None:
            for block in self.held:
                self.newline()
                self.write("".join(block))
            self.held.clear()
            if self.running:
                self.go_live(self.running[0])


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip().replace("_", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


def _not_saved(exc: StoreWriteError, context: AppContext, round_id: str, hint: str, plain: str) -> None:
    """A save that failed (a full disk): one line saying where and what, the round kept elsewhere if it can
    be, and the command that continues it."""
    click.echo(f"ebtui: error: {strip_control(str(exc))}", err=True)
    results = context.store
    saved = results.round_path(round_id).exists()
    done = sum(1 for ph in exc.round.phases if ph.status == PhaseStatus.COMPLETE) if exc.round else 0
    kept = keep_unsaved(exc.round) if done else None  # nothing played yet: nothing to keep
    if kept is not None:
        click.echo(f"The round as played so far ({done} phase(s) complete) is kept in {kept}; once there is "
                   f"space, copy it to {results.rounds_dir}/ to keep them.", err=True)
    what = "Resume with" if saved or kept is not None else "Run it again with"
    click.echo(f"{what} (once there is space):\n  {hint if saved or kept is not None else plain}", err=True)


def _cell(v: int | None) -> str:
    return "-" if v is None else str(v)


def score_table(r: Round) -> list[str]:
    """The scores after the round, from core.views.scores (what `rounds show` and the app's score card show)."""
    a = f"Team A ({strip_control(r.team_a_model)})"
    b = f"Team B ({strip_control(r.team_b_model)})"
    lines = [f"Scores — judge: {strip_control(r.judge_model)}" + (" (blind)" if r.blind_judge else "")]
    if r.judgment is None:
        return lines + ["  no judgment"]
    view = score_grid(r)
    w0 = max(len(x) for x in CRITERION_LABELS.values())
    wa, wb = max(len(a), 3), max(len(b), 3)
    lines.append(f"  {'':<{w0}}  {a:>{wa}}  {b:>{wb}}")
    for c in CRITERIA:
        va, vb = view.cell("a", c).value, view.cell("b", c).value
        lines.append(f"  {CRITERION_LABELS[c]:<{w0}}  {_cell(va):>{wa}}  {_cell(vb):>{wb}}")
    lines.append(f"  {'Total':<{w0}}  {_cell(view.totals['a']):>{wa}}  {_cell(view.totals['b']):>{wb}}")
    if view.needs_review:
        reasons = "; ".join(strip_control(i.reason.message) for i in view.open_items) or "see the raw reply"
        lines.append(f"  needs review: {reasons}")
    return lines


async def _play(context: AppContext, prepared: PreparedRound, printer: LivePrinter,
                stopped: list[signal.Signals]) -> Round:
    """The round, with Ctrl-C and `kill` (which saves the round too) recorded in `stopped` and turned into a
    cancel through the loop: the caller reads the signal from there, so a cancel that some await absorbed (the
    round then returns as incomplete) still ends the command as interrupted, never as a finished round."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()

    def on_signal(sig: signal.Signals) -> None:
        if not stopped and task is not None:
            task.cancel()
        stopped.append(sig)
        if sig == signal.SIGINT:  # a second Ctrl-C: Python's default, KeyboardInterrupt at once
            loop.remove_signal_handler(signal.SIGINT)

    if task is not None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, on_signal, sig)
    return await play_to_end(context, prepared, printer.handle)


@click.command()
@click.option("--dilemma", "dilemma_id", required=True, metavar="ID", help="Dilemma id (see `ebtui dilemmas`).")
@click.option("--team-a", required=True, metavar="NAME", help="Model presenting (Team A).")
@click.option("--team-b", required=True, metavar="NAME", help="Model responding (Team B).")
@click.option("--judge", required=True, metavar="NAME", help="Model judging.")
@click.option("--document", type=click.Path(dir_okay=False), help="Dilemma .docx (default: the built-in set).")
@click.option("--models", "models_file", type=click.Path(dir_okay=False), help="models.toml to use.")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.option("--blind-judge", is_flag=True, help="Hide the teams' model ids from the judge.")
@click.option("--judge-order", type=click.Choice(["ab", "ba"]), default="ab", show_default=True,
              help="The order the judge reads the teams' material in: ab as it happened, ba Team B's first.")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Cap on each phase's answer, in tokens.")
@click.option("--json", "as_json", is_flag=True, help="Print the saved Round as JSON on stdout (live text on stderr).")
@click.option("--resume", "resume_id", metavar="ROUND_ID",
              help="Continue this saved round (same dilemma and teams): its completed phases are kept.")
@click.pass_context
def run(
    ctx: click.Context,
    dilemma_id: str,
    team_a: str,
    team_b: str,
    judge: str,
    document: str | None,
    models_file: str | None,
    store: str | None,
    blind_judge: bool,
    judge_order: str,
    max_tokens: int | None,
    as_json: bool,
    resume_id: str | None,
) -> None:
    """Run one round live and save it."""
    document = ctx_option(ctx, "document", document)
    models_file = ctx_option(ctx, "models_file", models_file)
    store = ctx_option(ctx, "store", store)

    doc = load_document(document)
    context = open_context(store=store, models_file=models_file)
    request = RoundRequest(dilemma_id, team_a, team_b, judge, dilemmas=doc.dilemmas,
                           document=str(Path(doc.path).resolve()) if document else "",
                           document_name=document or "", blind_judge=blind_judge, judge_order=judge_order,
                           max_tokens=max_tokens, resume_id=resume_id)
    try:  # before any model call: a round that cannot be played or saved is not paid for
        prepared = prepare_round(context, request)
    except UsageError as exc:
        raise CliError(strip_control(str(exc))) from None
    dilemma, round_id, results = prepared.dilemma, prepared.round_id, context.store
    hint = resume_command(
        ["ebtui", "run"],
        [("--dilemma", dilemma.id), ("--team-a", team_a), ("--team-b", team_b), ("--judge", judge),
         ("--document", document), ("--models", models_file), ("--store", store),
         ("--blind-judge", blind_judge), ("--judge-order", judge_order if judge_order != "ab" else None),
         ("--max-tokens", max_tokens), ("--json", as_json),
         ("--resume", round_id)],
    )
    plain_hint = hint.replace(f" --resume {round_id}", "")
    info = sys.stderr if as_json else sys.stdout
    printer = LivePrinter(info)
    click.echo(
        f"Round {round_id}: {strip_control(dilemma.title)} — Team A {team_a} vs Team B {team_b}, judge {judge}",
        file=info,
    )
    interrupted: int | None = None
    stopped: list[signal.Signals] = []
    try:
        result = asyncio.run(_play(context, prepared, printer, stopped))
        if stopped:
            raise asyncio.CancelledError
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        by_sigint = isinstance(exc, KeyboardInterrupt) or signal.SIGINT in stopped
        interrupted = EXIT_INTERRUPTED if by_sigint else EXIT_INCOMPLETE
        printer.interrupted()
        try:
            result = results.load_round(round_id)
        except StoreError:
            click.echo("ebtui: interrupted before anything was saved", err=True)
            sys.exit(interrupted)
        click.echo(f"ebtui: interrupted — the round is saved as incomplete. Resume with:\n  {hint}", err=True)
    except StoreWriteError as exc:  # a full disk...: nothing saved changed; the round is kept elsewhere
        printer.interrupted()
        _not_saved(exc, context, round_id, hint, plain_hint)
        sys.exit(EXIT_INCOMPLETE)
    except StoreError as exc:
        raise CliError(f"could not save the round: {strip_control(str(exc))}") from None

    printer.newline()
    click.echo("", file=info)
    for line in score_table(result):
        click.echo(line, file=info)
    path = results.round_path(result.id).resolve()
    status = result.status.value + (f" ({strip_control(result.error)})" if result.error else "")
    click.echo(f"\nRound {status}. Saved: {path}", file=info)
    results.flush()
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    if interrupted is not None:
        sys.exit(interrupted)
    if result.status != RoundStatus.COMPLETE:
        click.echo(f"Resume with:\n  {hint}", file=info)
    sys.exit(EXIT_OK if result.status == RoundStatus.COMPLETE else EXIT_INCOMPLETE)
