"""What the tournament screen shows, as text: the plan, progress, analysis cells, chart bars and an adaptive
run's status line (pure functions of the use case's records; names pass through `strip_control`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from ebtui.core.records import Tournament
from ebtui.core.safe_text import strip_control
from ebtui.core.usecases.tournament import (
    AdaptiveMessage,
    DryRunEstimate,
    Progress,
    TournamentPlan,
    fmt_tokens,
)
from ebtui.core.views import numbers as num
from ebtui.tui.widgets.bar_chart import Bar

if TYPE_CHECKING:
    from ebtui.core.usecases.report import Table

#: longest text shown in one analysis cell (quotes of model answers); the report has them whole
CELL_CHARS = 80
SPACE = re.compile(r"\s+")


def progress_text(p: Progress) -> str:
    """One line: rounds, failures, calls in flight, tokens, cost, elapsed and ETA."""
    return p.describe()


def plan_text(plan: TournamentPlan, est: DryRunEstimate, store_root: Path, saved: Tournament | None) -> str:
    cfg = plan.config
    judges = "a panel of judges" if est.judge_mode == "panel" else "one judge"
    tin, tout = sum(est.input_tokens.values()), sum(est.output_tokens.values())
    lines = [
        f"{strip_control(cfg.display_name())} — tournament {est.tournament_id}",
        f"{est.rounds} rounds ({est.exchanges} exchanges × {judges}) over {len(est.dilemmas)} dilemma(s); "
        f"{est.total_calls} model calls; about {fmt_tokens(tin)} in / {fmt_tokens(tout)} out tokens; "
        f"estimated ${num.fixed(est.total_cost_usd, 4)}.",
    ]
    if est.unpriced_models:
        lines.append(f"No price configured for: {', '.join(strip_control(m) for m in est.unpriced_models)} "
                     "(counted as $0).")
    if cfg.budget_usd is not None:
        verdict = "within" if est.total_cost_usd <= cfg.budget_usd else "OVER"
        lines.append(f"Budget ${num.fixed(cfg.budget_usd)}: the estimate is {verdict} it.")
    if saved is not None:
        lines.append(f"Saved before ({saved.status.value}): starting resumes it — complete rounds are kept.")
    file_store = cfg.store_path()
    if file_store is not None and file_store.resolve() != Path(store_root).resolve():
        lines.append(f"The file names the store {file_store}; the app runs it in its own store {store_root}.")
    lines.append("Prompts measured at ~4 characters a token; outputs assumed at "
                 f"{'/'.join(str(o) for o in sorted(set(est.output_tokens_per_call.values())))} tokens a call.")
    return "\n".join(lines)


def plan_rows(est: DryRunEstimate) -> list[tuple[Text, ...]]:
    rows: list[tuple[Text, ...]] = []
    for model in sorted(est.calls):
        c = est.calls[model]
        cost = est.cost_usd.get(model)
        rows.append((
            Text(strip_control(model)),
            *(Text(str(c[role]), justify="right") for role in ("presenting", "responding", "judging")),
            Text(str(sum(c.values())), justify="right"),
            Text(str(est.input_tokens[model]), justify="right"),
            Text(str(est.output_tokens[model]), justify="right"),
            Text("no price" if cost is None else f"${num.fixed(cost, 4)}", justify="right"),
        ))
    return rows


def cell_text(column: str, value: object) -> Text:
    """A table cell as inert Text: numbers right-aligned, text stripped of control codes and shortened."""
    if value is None:
        return Text("—", style="dim", justify="right")
    if isinstance(value, bool):
        return Text("yes" if value else "no")
    if isinstance(value, int):
        return Text(str(value), justify="right")
    if isinstance(value, float):
        shown = num.sig(value) if column.endswith("_p") else num.fixed(value)
        return Text(shown, justify="right")
    text = SPACE.sub(" ", strip_control(str(value))).strip()
    if len(text) > CELL_CHARS:
        text = text[: CELL_CHARS - 1] + "…"
    return Text(text)


def role_bars(table: Table) -> list[Bar]:
    """Mean overall score per model and role, from the model comparison table."""
    from ebtui.core.usecases.report import overall_criterion

    bars = []
    overall = overall_criterion()
    for row in table.as_dicts():
        if row["criterion"] == overall:
            mean = row["mean"]
            bars.append(Bar(str(row["model"]), float(mean) if mean is not None else None, str(row["role"])))
    return bars


def dilemma_bars(table: Table) -> list[Bar]:
    """Mean score per dilemma (both roles, every model), hardest first, from the difficulty table."""
    rows = table.as_dicts()
    rows.sort(key=lambda r: (r["mean"] is None, r["mean"] if r["mean"] is not None else 0.0, str(r["dilemma"])))
    return [Bar(str(r["title"] or r["dilemma"]), float(r["mean"]) if r["mean"] is not None else None)
            for r in rows]


def adaptive_text(event: AdaptiveMessage) -> Text:
    """An adaptive run's status: the widest pairwise half-width against the target, and the message."""
    widest = event.widest_half_width
    head = (f"Widest anytime-valid pairwise half-width ±{num.fixed(widest, 3)} — target ±{num.shown(event.target, 'g')}" if widest is not None
            and widest != float("inf") and event.target is not None else
            f"Target ±{num.shown(event.target, 'g')}" if event.target is not None else "")
    return Text(f"{head}\n{strip_control(event.message)}", style="bold" if event.stop_reason else "")
