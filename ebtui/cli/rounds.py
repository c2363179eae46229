"""`ebtui rounds`: list, show and override saved rounds."""

from __future__ import annotations

import json
import re
from datetime import datetime

import click

from ebtui.cli.common import CliError, ctx_option, echo_unreadable, echo_untrusted
from ebtui.core.records import CRITERIA, CRITERION_LABELS, PHASE_ORDER, Phase, Round, RoundStatus
from ebtui.core.review import describe_target, open_items
from ebtui.core.safe_text import strip_control
from ebtui.core.usecases import review
from ebtui.core.usecases import rounds as saved
from ebtui.core.usecases.context import AppContext, open_context
from ebtui.core.usecases.review import OverrideError
from ebtui.core.usecases.rounds import ROLES, StoreError, StoreWriteError
from ebtui.core.views import numbers as num
from ebtui.core.views.phases import PHASE_LABELS, speaker_label
from ebtui.core.views.scores import KIND_LABELS, score_grid
from ebtui.errors import UsageError

MISSING = "—"
_STORE_HELP = "Results store directory (default: $EBTUI_STORE, else ./saved)."
_C1 = re.compile(r"[\x7f-\x9f]")


def _store(ctx: click.Context, value: str | None) -> AppContext:
    """--store on the subcommand, else on `rounds`, else before `rounds` (`ebtui --store X rounds list`); the
    store opens here (as the commands' first step)."""
    if value is None and ctx.parent is not None:
        value = (ctx.parent.params or {}).get("store")
    context = open_context(store=ctx_option(ctx, "store", value))
    context.store  # noqa: B018 - opened now: a store that cannot be opened fails before anything else
    return context


def _not_saved(exc: StoreWriteError, what: str) -> str:
    """One line: where the write failed, and that the override or acceptance was not saved."""
    return (f"cannot write to {exc.directory}: {exc.reason} — {what} was not saved "
            f"({exc.what.removeprefix('the change to ')} is unchanged)")


def _close(context: AppContext) -> None:
    try:
        context.store.close()
    except OSError:
        pass  # a full disk: the index is rebuilt from the round files on the next open


def _safe_json(data: object) -> str:
    """JSON for a terminal: C0 controls are escaped by json; DEL and C1 controls are escaped here too."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _clean(value: object) -> str:
    return strip_control("" if value is None else str(value)).replace("\n", " ")


def _when(iso: str | None) -> str:
    if not iso:
        return MISSING
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return _clean(iso)


def _num(v: int | None) -> str:
    return MISSING if v is None else str(v)


def _table(headers: list[str], rows: list[list[str]], right: frozenset[int] = frozenset()) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(out).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--store", type=click.Path(file_okay=False), help=_STORE_HELP)
def rounds(store: str | None) -> None:
    """List, show and override saved rounds."""


@rounds.command("list")
@click.option("--model", metavar="NAME", help="Rounds in which this model took part (any role).")
@click.option("--role", type=click.Choice(ROLES), help="With --model: only rounds where it had this role.")
@click.option("--dilemma", metavar="ID", help="Rounds on this dilemma.")
@click.option("--judge", metavar="NAME", help="Rounds judged by this model.")
@click.option("--tournament", metavar="ID", help="Rounds of this tournament.")
@click.option("--status", type=click.Choice([s.value for s in RoundStatus]), help="Rounds with this status.")
@click.option("--needs-review", is_flag=True, help="Only rounds whose scores still need a human's review.")
@click.option("--limit", type=click.IntRange(min=1), help="Show at most N rounds (the newest with --newest-first).")
@click.option("--newest-first", is_flag=True, help="Newest first (default: oldest first).")
@click.option("--json", "as_json", is_flag=True, help="Print the index documents as JSON.")
@click.option("--store", type=click.Path(file_okay=False), help=_STORE_HELP)
@click.pass_context
def list_rounds(
    ctx: click.Context,
    model: str | None,
    role: str | None,
    dilemma: str | None,
    judge: str | None,
    tournament: str | None,
    status: str | None,
    needs_review: bool,
    limit: int | None,
    newest_first: bool,
    as_json: bool,
    store: str | None,
) -> None:
    """List saved rounds: id, time, dilemma, teams, judge, status, review flag and total scores."""
    if role and not model:
        raise CliError("--role needs --model (it says which seat the model had)")
    context = _store(ctx, store)
    try:
        found = saved.list_rounds(context, model=model, role=role, dilemma=dilemma, judge=judge, tournament=tournament,
                            status=status, needs_review=True if needs_review else None, limit=limit,
                            newest_first=newest_first)
    except UsageError as exc:
        raise CliError(strip_control(str(exc))) from None
    rows, unreadable, results = found.entries, found.unreadable, context.store
    if as_json:
        echo_unreadable(unreadable)  # on stderr: stdout stays JSON
        click.echo(_safe_json(rows))
        return
    if not rows:
        click.echo(f"No rounds match in {results.root}" + (f" ({len(unreadable)} unreadable skipped)."
                                                           if unreadable else "."), err=True)
        echo_unreadable(unreadable, err=False)
        return
    table = [
        [
            _clean(e["id"]),
            _when(e.get("timestamp")),
            _clean(e.get("dilemma_id")),
            _clean(e.get("team_a")),
            _clean(e.get("team_b")),
            _clean(e.get("judge")),
            _clean("interrupted" if e.get("interrupted") else e.get("status")),
            "review" if e.get("needs_review") else "",
            _num(e.get("total_a")) + ("*" if e.get("overrides") else ""),
            _num(e.get("total_b")),
        ]
        for e in rows
    ]
    headers = ["ID", "TIME (UTC)", "DILEMMA", "TEAM A", "TEAM B", "JUDGE", "STATUS", "REVIEW", "A", "B"]
    for line in _table(headers, table, right=frozenset({8, 9})):
        click.echo(line)
    overridden = sum(1 for e in rows if e.get("overrides"))
    click.echo(f"\n{len(rows)} round(s)" + (f"; * = totals include {overridden} overridden" if overridden else "")
               + (f"; {len(unreadable)} unreadable skipped (named below)" if unreadable else ""))
    echo_unreadable(unreadable, err=False)


def _phase_heading(round_: Round, phase: Phase) -> str:
    who = speaker_label(phase.phase_type)
    bits = [phase.status.value]
    if phase.latency is not None:
        bits.append(f"{num.fixed(phase.latency, 1)} s")
    if phase.usage.input_tokens or phase.usage.output_tokens:
        bits.append(f"{phase.usage.input_tokens}→{phase.usage.output_tokens} tokens")
    if phase.reused_from:
        bits.append(f"shared with round {phase.reused_from}")
    return f"== {PHASE_LABELS[phase.phase_type]} — {who} ({_clean(phase.model_id)}) — {', '.join(bits)} =="


def score_card(round_: Round) -> list[str]:
    """The judgment as a table (criteria × teams: parsed value, effective value, how it was read), the
    source text of every score, and the review checklist. Rendered from core.views.scores."""
    j = round_.judgment
    if j is None:
        return ["No judgment: the judge did not score this round (`ebtui rounds override` can score it by hand)."]
    view = score_grid(j)
    headers = ["CRITERION", "A PARSED", "A", "HOW", "B PARSED", "B", "HOW"]
    rows: list[list[str]] = []
    for crit in CRITERIA:
        row = [CRITERION_LABELS[crit]]
        for team in ("a", "b"):
            c = view.cell(team, crit)
            row.append(_num(c.parsed) + (" !" if c.parsed is None else ""))
            row.append(_num(c.value) + ("*" if c.override else "") + (" !" if c.value is None else "")
                       + (" ?" if c.review == "open" else ""))
            row.append(c.mark + (" ok" if c.action == "accept" else ""))
        rows.append(row)
    rows.append(["Total", _num(view.parsed_totals["a"]), _num(view.totals["a"]), "",
                 _num(view.parsed_totals["b"]), _num(view.totals["b"]), ""])
    lines = _table(headers, rows, right=frozenset({1, 2, 4, 5}))
    lines.insert(len(lines) - 1, lines[1])  # a rule above the totals
    used = sorted({view.cell(t, c).kind for t in ("a", "b") for c in CRITERIA}, key=list(KIND_LABELS).index)
    lines.append("HOW: " + "; ".join(f"{KIND_LABELS[k][0]} = {KIND_LABELS[k][1]}" for k in used)
                 + "; ok = accepted as parsed by a human")
    notes = [f"! {MISSING} = missing: the judge gave no valid score (never defaulted); ? = still to review"]
    sources = [view.cell(t, c) for t in ("a", "b") for c in CRITERIA if view.cell(t, c).source]
    if sources:
        notes.append("Sources (how each score was read, and the exact text):")
        for c in sources:
            extra = f" [{_clean(c.note)}]" if c.note else ""
            notes.append(f"    Team {c.team.upper()} {CRITERION_LABELS[c.criterion]}: {KIND_LABELS[c.kind][1]}"
                         f"{extra}: {_clean(c.source)[:200]}")
    active = j.active_overrides()
    if active:
        notes.append("* = overridden by a human:")
        for (team, crit), ov in sorted(active.items()):
            notes.append(
                f"    Team {team.upper()} {CRITERION_LABELS[crit]}: {_num(ov.parsed_value)} → {ov.value}"
                f" ({ov.time.strftime('%Y-%m-%d %H:%M')} UTC){': ' + _clean(ov.note) if ov.note else ''}"
            )
    if view.items:
        state = "Needs review" if view.needs_review else "Reviewed"
        notes.append(f"{state} ({len(view.open_items)} of {len(view.items)} open):")
        for item in view.items:
            how = f" ({item.addressed_by})" if item.addressed_by else ""
            notes.append(f"    [{'x' if item.addressed else ' '}] {_clean(item.reason.message)}{how}")
    return lines + notes


@rounds.command("show")
@click.argument("round_id")
@click.option("--prompts", is_flag=True, help="Also print each phase's system prompt and prompt.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole Round as JSON.")
@click.option("--store", type=click.Path(file_okay=False), help=_STORE_HELP)
@click.pass_context
def show(ctx: click.Context, round_id: str, prompts: bool, as_json: bool, store: str | None) -> None:
    """Show one round: the transcript phase by phase, then the score card."""
    context = _store(ctx, store)
    results = context.store
    try:
        round_ = saved.load_round(context, round_id)
    except StoreError as exc:
        raise CliError(strip_control(str(exc))) from None
    if as_json:
        click.echo(_safe_json(round_.model_dump(mode="json")))
        return
    click.echo(f"Round {_clean(round_.id)} — {round_.status.value}" + (
        f" ({_clean(round_.error)})" if round_.error else ""))
    title = f" — {_clean(round_.dilemma_title)}" if round_.dilemma_title else ""
    click.echo(f"Dilemma: {_clean(round_.dilemma_id)}{title}")
    click.echo(f"Team A: {_clean(round_.team_a_model)}   Team B: {_clean(round_.team_b_model)}   "
               f"Judge: {_clean(round_.judge_model)}" + ("  (blind)" if round_.blind_judge else ""))
    if round_.tournament_id:
        click.echo(f"Tournament: {_clean(round_.tournament_id)}")
    if round_.imported:  # see `ebtui import` (ebtui/core/importers/)
        click.echo(f"Imported from {_clean(round_.imported.runner)}: {_clean(round_.imported.source_file)}")
    click.echo(f"Started: {round_.timestamp.strftime('%Y-%m-%d %H:%M:%S')} UTC   File: {results.round_path(round_.id)}")
    order = {pt: i for i, pt in enumerate(PHASE_ORDER)}
    for phase in sorted(round_.phases, key=lambda p: order[p.phase_type]):
        click.echo("")
        click.echo(_phase_heading(round_, phase))
        if prompts:
            click.echo("-- system prompt --")
            echo_untrusted(phase.system_prompt)
            click.echo("-- prompt --")
            echo_untrusted(phase.prompt)
            click.echo("-- response --")
        if phase.response:
            echo_untrusted(phase.response)
        if phase.error:
            kind = f" ({_clean(phase.error_kind)})" if phase.error_kind else ""
            click.echo(f"[{phase.status.value}{kind}: {_clean(phase.error)}]")
        if phase.partial_response:
            click.echo(f"[{len(phase.partial_response)} characters streamed before the failure were kept in the "
                       "file and not passed on]")
    missing = [pt for pt in PHASE_ORDER if round_.phase(pt) is None]
    if missing:
        click.echo("\nNot run: " + ", ".join(pt.value.replace("_", " ") for pt in missing))
    j = round_.judgment
    if j is not None:
        for label, text in (("Team A", j.team_a_justification), ("Team B", j.team_b_justification),
                            ("Overall", j.overall_analysis)):
            if text:
                click.echo(f"\n{label}: ", nl=False)
                echo_untrusted(text)
    click.echo("")
    for line in score_card(round_):
        click.echo(line)
    for k, extra in enumerate(round_.extra_judgments, start=2):  # judgments added by `ebtui rejudge`
        when = extra.judged_at.strftime("%Y-%m-%d %H:%M") + " UTC" if extra.judged_at else "time unknown"
        click.echo(f"\n== Judgment {k} of {len(round_.all_judgments())} — key {_clean(extra.key)} — judge "
                   f"{_clean(extra.judge_model)}, order {'Team B first' if extra.order == 'ba' else 'Team A first'}, "
                   f"repeat {extra.repeat}, {when} (`--judgment {_clean(extra.key)}` to override) ==")
        for line in score_card(round_.model_copy(update={"judgment": extra})):
            click.echo(line)


@rounds.command("override")
@click.argument("round_id")
@click.option("--team", "team", required=True, metavar="a|b", help="Which team's score.")
@click.option("--criterion", required=True, metavar="NAME", help="Criterion name or label, e.g. consistency.")
@click.option("--value", metavar="N", help="The score to use instead, a whole number 1-10.")
@click.option("--clear", is_flag=True, help="Remove the override (the judge's parsed score applies again).")
@click.option("--note", default="", help="Why (kept with the override; required with --value).")
@click.option("--judgment", "judgment_key", default="", metavar="KEY",
              help="Which judgment of the round (a key `rounds show` lists; default: the round's own).")
@click.option("--store", type=click.Path(file_okay=False), help=_STORE_HELP)
@click.pass_context
def override(
    ctx: click.Context,
    round_id: str,
    team: str,
    criterion: str,
    value: str | None,
    clear: bool,
    note: str,
    judgment_key: str,
    store: str | None,
) -> None:
    """Override (or with --clear restore) one criterion's score for one team; the parsed score is kept.

    A note is required with --value. Scoring by hand is allowed where the judge gave nothing."""
    if clear == (value is not None):
        raise CliError("give either --value N or --clear")
    context = _store(ctx, store)
    try:
        req = review.check_correction(team, criterion, value, note, clear=clear)
        t, crit = req.team, req.criterion
        j = review.correct(context, round_id, t, crit, req.value, req.note, clear=clear,
                           judgment_key=judgment_key).judgment
    except OverrideError as exc:
        raise CliError(strip_control(str(exc))) from None
    except StoreWriteError as exc:
        raise CliError(_not_saved(exc, "the override")) from None
    except StoreError as exc:
        raise CliError(strip_control(str(exc))) from None
    finally:
        _close(context)
    number = req.value
    parsed = getattr(j.parsed_scores(t), crit)
    eff = getattr(j.effective_scores(t), crit)
    what = "cleared; parsed score applies" if number is None else "overridden"
    click.echo(f"Round {round_id}: Team {t.upper()} {CRITERION_LABELS[crit]} {what}: "
               f"parsed {_num(parsed)}, effective {_num(eff)}.")
    click.echo(f"Totals now: A {_num(j.effective_scores('a').total())}, B {_num(j.effective_scores('b').total())}"
               + (f"  (still needs review: {len(open_items(j))} item(s) open)" if open_items(j) else ""))


@rounds.command("accept")
@click.argument("round_id")
@click.option("--team", "team", metavar="a|b", help="Which team's score (with --criterion).")
@click.option("--criterion", metavar="NAME", help="Criterion name or label, e.g. consistency.")
@click.option("--all", "accept_every", is_flag=True, help="Accept every score not yet overridden or accepted.")
@click.option("--note", default="", help="Why the parsed value is right (kept with the acceptance).")
@click.option("--judgment", "judgment_key", default="", metavar="KEY",
              help="Which judgment of the round (a key `rounds show` lists; default: the round's own).")
@click.option("--store", type=click.Path(file_okay=False), help=_STORE_HELP)
@click.pass_context
def accept(ctx: click.Context, round_id: str, team: str | None, criterion: str | None, accept_every: bool,
           note: str, judgment_key: str, store: str | None) -> None:
    """Record that the judge's parsed value is right as it is ("accept as parsed"); this addresses the
    score's review reasons. A missing score accepted stays missing."""
    if accept_every == bool(team or criterion):
        raise CliError("give either --team and --criterion, or --all")
    if not accept_every and not (team and criterion):
        raise CliError("give both --team and --criterion")
    context = _store(ctx, store)
    try:
        if accept_every:
            done = review.accept_all(context, round_id, note, judgment_key=judgment_key)
            what = f"{done.added} score(s) accepted as parsed"
        else:
            assert team is not None and criterion is not None
            done = review.accept(context, round_id, team, criterion, note, judgment_key=judgment_key)
            what = f"{describe_target(*review.target(team, criterion))} accepted as parsed"
    except StoreWriteError as exc:
        raise CliError(_not_saved(exc, "the acceptance")) from None
    except (OverrideError, StoreError) as exc:
        raise CliError(strip_control(str(exc))) from None
    finally:
        _close(context)
    left = open_items(done.judgment)
    where = f"Round {round_id}, judgment {_clean(judgment_key)}" if judgment_key else f"Round {round_id}"
    click.echo(f"{where}: {what}." + (f" Still to review: {len(left)} item(s)." if left else " Reviewed."))
