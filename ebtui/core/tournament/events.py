"""What a tournament reports: progress, its events, and the plain summary (simple means; ebtui.core.analysis
has the full statistics)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ebtui.core.records import CRITERIA, Round, Tournament
from ebtui.core.tournament.schedule import ScheduledRound
from ebtui.core.views import numbers as num
from ebtui.core.views.means import model_criterion_means, model_means

__all__ = [
    "Progress",
    "ProgressUpdated",
    "RoundCompleted",
    "RoundNotRun",
    "TournamentEvent",
    "TournamentFinished",
    "TournamentStarted",
    "TournamentSummary",
    "fmt_duration",
    "fmt_tokens",
    "summarize_rounds",
]


# ---------------------------------------------------------------------------------------------------------
# summary (simple means; ebtui.core.analysis has the full statistics)
# ---------------------------------------------------------------------------------------------------------
def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


@dataclass
class TournamentSummary:
    """Mean scores (1-10, the seven criteria averaged; human overrides applied) and how many went in."""

    rounds: int
    scored_rounds: int
    missing_scores: int
    by_model: dict[str, tuple[float | None, int]]
    by_model_criterion: dict[str, dict[str, float | None]]
    by_model_role: dict[tuple[str, str], tuple[float | None, int]]
    by_dilemma: dict[str, tuple[float | None, int]]
    #: (team A model, team B model) -> (A's mean, B's mean, rounds)
    matrix: dict[tuple[str, str], tuple[float | None, float | None, int]]
    #: judge -> mean score it gave
    by_judge: dict[str, tuple[float | None, int]]

    def format(self) -> str:
        def f(x: float | None) -> str:
            return "  -  " if x is None else num.shown(x, '5.2f')

        models = sorted(self.by_model)
        lines = [
            f"Tournament summary: {self.rounds} rounds, {self.scored_rounds} with a judgment; "
            f"{self.missing_scores} score(s) missing (left out, never defaulted). Means of the seven criteria, "
            "1-10, human overrides applied.",
            "",
            "By model (both roles):",
        ]
        w = max([len(m) for m in models] + [8])
        for m in sorted(models, key=lambda m: -(self.by_model[m][0] or 0)):
            mean, n = self.by_model[m]
            lines.append(f"  {m:<{w}}  {f(mean)}  (n={n})")
        lines += ["", "By model and role:", f"  {'model':<{w}}  presenting  responding"]
        for m in models:
            pa = self.by_model_role.get((m, "presenting"), (None, 0))
            rb = self.by_model_role.get((m, "responding"), (None, 0))
            lines.append(f"  {m:<{w}}  {f(pa[0])} n={pa[1]:<3} {f(rb[0])} n={rb[1]}")
        lines += ["", "By criterion:", "  " + " " * w + "  " + " ".join(c[:6].rjust(6) for c in CRITERIA)]
        for m in models:
            row = self.by_model_criterion.get(m, {})
            lines.append(f"  {m:<{w}}  " + " ".join(f(row.get(c)).rjust(6) for c in CRITERIA))
        lines += ["", "By dilemma:"]
        dw = max([len(d) for d in self.by_dilemma] + [8])
        for d in sorted(self.by_dilemma, key=lambda d: self.by_dilemma[d][0] or 0):
            mean, n = self.by_dilemma[d]
            lines.append(f"  {d:<{dw}}  {f(mean)}  (n={n})")
        if self.by_judge:
            lines += ["", "Mean score given, by judge:"]
            for j in sorted(self.by_judge):
                mean, n = self.by_judge[j]
                lines.append(f"  {j:<{w}}  {f(mean)}  (n={n})")
        lines += ["", "Cross-model matrix (row = Team A, column = Team B; cell = A's mean / B's mean):"]
        cw = max(w, 13)
        lines.append("  " + " " * w + "  " + " ".join(m[:cw].rjust(cw) for m in models))
        for a in models:
            cells = []
            for b in models:
                sa, sb, n = self.matrix.get((a, b), (None, None, 0))
                cells.append(("-" if not n else f"{f(sa).strip()}/{f(sb).strip()}").rjust(cw))
            lines.append(f"  {a:<{w}}  " + " ".join(cells))
        return "\n".join(lines)


def _criterion_table(rounds: list[Round]) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = defaultdict(dict)
    for (m, c), (mean, n) in model_criterion_means(rounds, effective=True).items():
        if n:
            out[m][c] = mean
    return dict(out)


def summarize_rounds(rounds: Iterable[Round]) -> TournamentSummary:
    rounds = list(rounds)
    by_role: dict[tuple[str, str], list[float]] = defaultdict(list)
    by_dilemma: dict[str, list[float]] = defaultdict(list)
    by_judge: dict[str, list[float]] = defaultdict(list)
    pair: dict[tuple[str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    counted: set[tuple[str, str]] = set()
    scored = 0
    missing = 0
    for r in rounds:
        j = r.judgment
        if j is None:
            continue
        scored += 1
        for team, model, role in (("a", r.team_a_model, "presenting"), ("b", r.team_b_model, "responding")):
            s = j.effective_scores(team)  # type: ignore[arg-type]
            missing += len(s.missing())
            mean = s.mean()
            if mean is None:
                continue
            by_role[(model, role)].append(mean)
            by_dilemma[r.dilemma_id].append(mean)
            by_judge[r.judge_model].append(mean)
            pair[(r.team_a_model, r.team_b_model)][0 if team == "a" else 1].append(mean)
        counted.add((r.team_a_model, r.team_b_model))
    return TournamentSummary(
        rounds=len(rounds),
        scored_rounds=scored,
        missing_scores=missing,
        # the one "mean per model" (views.means): every score a model's teams got, counted per exchange
        by_model={m: (mm.mean, mm.n_exchanges) for m, mm in model_means(rounds, effective=True).items()
                  if mm.n_scores},
        by_model_criterion=_criterion_table(rounds),
        by_model_role={k: (_mean(v), len(v)) for k, v in by_role.items()},
        by_dilemma={d: (_mean(v), len(v)) for d, v in by_dilemma.items()},
        matrix={k: (_mean(a), _mean(b), max(len(a), len(b))) for k, (a, b) in pair.items()},
        by_judge={k: (_mean(v), len(v)) for k, v in by_judge.items()},
    )


# ---------------------------------------------------------------------------------------------------------
# progress events
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Progress:
    total: int  # rounds in the schedule
    done: int  # rounds complete (including those complete before this run)
    incomplete: int  # rounds that ended incomplete or failed in this run
    already_done: int  # complete before this run started (skipped)
    rounds_in_flight: int
    calls_in_flight: int
    input_tokens: int  # this run
    output_tokens: int
    cost_usd: float  # spent in the whole tournament (earlier runs included)
    elapsed_s: float
    eta_s: float | None
    budget_usd: float | None
    budget_stopped: bool

    @property
    def finished(self) -> int:
        return self.done + self.incomplete

    def describe(self) -> str:
        """One line for a progress display (the CLI's stderr line, the app's tournament screen)."""
        budget = f" of ${num.fixed(self.budget_usd)}" if self.budget_usd is not None else ""
        failed = f" · {self.incomplete} not complete" if self.incomplete else ""
        earlier = f" ({self.already_done} from before)" if self.already_done else ""
        stop = " · budget reached: finishing calls in flight" if self.budget_stopped else ""
        return (
            f"{self.finished}/{self.total} rounds · {self.done} complete{earlier}{failed}"
            f" · {self.calls_in_flight} calls in flight"
            f" · {fmt_tokens(self.input_tokens)} in / {fmt_tokens(self.output_tokens)} out tokens"
            f" · ${num.fixed(self.cost_usd, 4)}{budget} · {fmt_duration(self.elapsed_s)} elapsed"
            f" · ETA {fmt_duration(self.eta_s)}{stop}"
        )


def fmt_duration(s: float | None) -> str:
    """12s, 3m05s, 1h02m; "?" when unknown."""
    if s is None:
        return "?"
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def fmt_tokens(n: int) -> str:
    """678, 12k, 1.2M."""
    if n >= 1_000_000:
        return f"{num.fixed(n / 1e6, 1)}M"
    if n >= 10_000:
        return f"{num.fixed(n / 1e3, 0)}k"
    return str(n)


@dataclass(frozen=True)
class TournamentStarted:
    tournament: Tournament
    progress: Progress


@dataclass(frozen=True)
class RoundCompleted:
    """A scheduled round ended this run (complete or not) and is saved."""

    round: Round
    scheduled: ScheduledRound
    progress: Progress


@dataclass(frozen=True)
class RoundNotRun:
    """A scheduled round could not run (e.g. its exchange's phases 1-4 did not complete); nothing saved."""

    scheduled: ScheduledRound
    reason: str
    progress: Progress


@dataclass(frozen=True)
class ProgressUpdated:
    progress: Progress


@dataclass(frozen=True)
class TournamentFinished:
    tournament: Tournament
    progress: Progress
    summary: TournamentSummary


TournamentEvent = TournamentStarted | RoundCompleted | RoundNotRun | ProgressUpdated | TournamentFinished


# ---------------------------------------------------------------------------------------------------------
