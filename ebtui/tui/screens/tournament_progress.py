"""The Tournament screen's progress rows: per pairing and per model, each with an ETA."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import DataTable

from ebtui.core.safe_text import strip_control
from ebtui.core.usecases.tournament import (
    Progress,
    ScheduledRound,
    TournamentPlan,
    completed_keys,
    fmt_duration,
)

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext


class Breakdown:
    """Progress per pairing (Team A vs Team B) and per model (any role), with an ETA for each.

    A row's ETA assumes the rounds left are played in schedule order (the runner starts them in that order)
    at this run's pace so far: the row is done when its last remaining round is, k rounds from now."""

    def __init__(self, scheduled: Sequence[ScheduledRound]) -> None:
        self.order = [r.schedule_key for r in scheduled]
        self.rows: dict[str, dict[str, int]] = {}
        self.members: dict[str, list[str]] = {}  # row -> schedule keys
        self.finished: dict[str, bool] = {}  # schedule key -> complete (False: ended otherwise)
        for r in scheduled:
            for row in self.rows_of(r):
                self.rows.setdefault(row, {"total": 0})["total"] += 1
                self.members.setdefault(row, []).append(r.schedule_key)

    @staticmethod
    def rows_of(r: ScheduledRound) -> list[str]:
        models = dict.fromkeys([r.team_a, r.team_b, r.judge])
        return [f"{r.team_a} vs {r.team_b}", *(f"model {m}" for m in models)]

    def mark(self, schedule_key: str, complete: bool) -> None:
        self.finished[schedule_key] = complete

    def fill(self, table: DataTable[Text], progress: Progress | None) -> None:
        """Show the rows in a DataTable (its columns: pairing / model, done, progress, not complete, ETA)."""
        table.clear()
        for row in self.table(progress):
            table.add_row(*(Text(strip_control(cell)) for cell in row))

    def table(self, progress: Progress | None) -> list[tuple[str, str, str, str, str]]:
        """(row, done/total, bar, not complete, ETA) — pairings first, then models."""
        remaining = [k for k in self.order if k not in self.finished]
        position = {k: i + 1 for i, k in enumerate(remaining)}
        played = max(0, progress.finished - progress.already_done) if progress is not None else 0
        pace = progress.elapsed_s / played if progress is not None and played else None
        out = []
        for row in sorted(self.rows, key=lambda r: (r.startswith("model "), r)):
            keys = self.members[row]
            total = len(keys)
            done = sum(1 for k in keys if self.finished.get(k))
            failed = sum(1 for k in keys if k in self.finished and not self.finished[k])
            left = [position[k] for k in keys if k in position]
            if not left:
                eta = "done"
            elif pace is None:
                eta = "?"
            else:
                eta = fmt_duration(max(left) * pace)
            width = 12
            fill = round(width * (done + failed) / total) if total else width
            bar = "█" * fill + "░" * (width - fill)
            out.append((row, f"{done}/{total}", bar, str(failed) if failed else "", eta))
        return out


def new_breakdown(plan: TournamentPlan, ctx: AppContext) -> Breakdown:
    """Rows for the plan's schedule; rounds complete before this run (a resume) count as done."""
    breakdown = Breakdown(plan.schedule.rounds)
    for key in completed_keys(ctx, plan.tournament_id):
        breakdown.mark(key, True)
    return breakdown
