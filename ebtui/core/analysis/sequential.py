"""Anytime-valid pairwise intervals for adaptive tournaments, which look after each pass and stop when narrow
enough: alpha spending with a union bound over a fixed maximum number of looks. Look k's intervals are the
report's pairwise intervals (same dilemma bootstrap, t reference, Bonferroni over the pairs) at error rate
alpha_k, with alpha_1 + ... + alpha_K <= alpha, so they hold whenever the run stops. Also the report's
`adaptive` object. Method, and why not a confidence sequence: docs/STATISTICS.md, "Adaptive tournaments".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from scipy import special

from ebtui.core.analysis.pairwise import (
    ALPHA,
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    Data,
    compare_all,
)
from ebtui.core.analysis.standard import JudgeSample
from ebtui.core.views import numbers as num

__all__ = ["DEFAULT_LOOKS", "FIRST_LOOK_SHARE", "AnytimePair", "Look", "LookJson", "LookPlan", "PairJson",
           "adaptive_summary", "look_plan_of", "look_quantile", "measure_look"]

#: looks an adaptive run may take at most: the first pass, then up to two waves
DEFAULT_LOOKS = 3
#: the share of alpha the first look spends (a first pass that already meets the target is the exception)
FIRST_LOOK_SHARE = 0.1


@dataclass(frozen=True)
class LookPlan:
    """The alpha spending of an adaptive run, fixed before its first look: look 1 spends `first_share` of
    `alpha`, each later look an equal share of the rest, up to `max_looks` looks (then the run stops)."""

    alpha: float = ALPHA
    max_looks: int = DEFAULT_LOOKS
    first_share: float = FIRST_LOOK_SHARE

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 1 and self.max_looks >= 1 and 0 < self.first_share <= 1):
            raise ValueError(f"alpha spending: alpha {self.alpha}, max_looks {self.max_looks}, first_share "
                             f"{self.first_share} (need 0 < alpha < 1, max_looks >= 1, 0 < first_share <= 1)")

    def alpha_at(self, look: int) -> float:
        """The error rate look `look` (1-based) spends; 0 past the last planned look."""
        if look < 1 or look > self.max_looks:
            return 0.0
        if self.max_looks == 1:
            return self.alpha
        if look == 1:
            return self.alpha * self.first_share
        return self.alpha * (1.0 - self.first_share) / (self.max_looks - 1)

    def spent(self, look: int) -> float:
        """The error rate spent by looks 1..look (at most alpha)."""
        return float(sum(self.alpha_at(k) for k in range(1, look + 1)))

    def describe(self) -> str:
        shares = ", ".join(f"{num.shown(self.alpha_at(k), '.4g')}" for k in range(1, self.max_looks + 1))
        return (f"alpha spending over at most {self.max_looks} looks (union bound): per look {shares}, "
                f"{num.shown(self.alpha, 'g')} in all")

    def json(self) -> dict[str, object]:
        return {"method": "alpha_spending_union_bound", "alpha": self.alpha, "max_looks": self.max_looks,
                "alpha_per_look": [self.alpha_at(k) for k in range(1, self.max_looks + 1)]}


def look_quantile(df: float, alpha: float, tests: int = 1) -> float:
    """The t quantile of a two-sided interval at error rate alpha, Bonferroni over `tests` intervals."""
    return float(special.stdtrit(max(df, 1.0), 1.0 - alpha / (2.0 * max(tests, 1))))


class PairJson(TypedDict):
    a: str
    b: str
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    half_width: float | None
    fixed_half_width: float | None  # the report's own (fixed-sample) half-width, for comparison
    reason: str


class LookJson(TypedDict):
    look: int
    alpha: float
    tests: int
    dilemmas: int
    widest: float | None
    widest_fixed: float | None
    pairs: list[PairJson]


@dataclass
class AnytimePair:
    a: str
    b: str
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    fixed_half_width: float | None
    reason: str = ""

    @property
    def half_width(self) -> float | None:
        return None if self.ci_low is None or self.ci_high is None else (self.ci_high - self.ci_low) / 2.0

    def json(self) -> PairJson:
        return {"a": self.a, "b": self.b, "diff": self.diff, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "half_width": self.half_width, "fixed_half_width": self.fixed_half_width, "reason": self.reason}


@dataclass
class Look:
    """One look's anytime-valid pairwise intervals."""

    look: int
    alpha: float
    tests: int  # pairs the Bonferroni runs over (those with an interval)
    dilemmas: int
    pairs: list[AnytimePair] = field(default_factory=list)

    @property
    def widest(self) -> float | None:
        """The widest half-width; None when some identified pair has no interval (not measurable yet)."""
        return _widest([p.half_width for p in self.pairs if p.diff is not None])

    @property
    def widest_fixed(self) -> float | None:
        return _widest([p.fixed_half_width for p in self.pairs if p.diff is not None])

    def json(self) -> LookJson:
        return {"look": self.look, "alpha": self.alpha, "tests": self.tests, "dilemmas": self.dilemmas,
                "widest": self.widest, "widest_fixed": self.widest_fixed, "pairs": [p.json() for p in self.pairs]}


def measure_look(data: Data, plan: LookPlan, look: int, *, replicates: int = DEFAULT_REPLICATES,
                 seed: int = DEFAULT_SEED, judges: JudgeSample | None = None) -> Look:
    """Look `look`'s intervals: the report's pairwise comparison (ebtui.core.analysis.pairwise.compare_all under
    the interval standard: its estimates, blanks and reasons, each pair's SE — the dilemma bootstrap's plus,
    with `judges` taken as a sample, the judge terms' part — and Satterthwaite degrees of freedom), each
    interval widened to the look's error rate, Bonferroni over the pairs that have one. `judges`: what the
    report uses for the same rounds (ebtui.core.analysis.intervals.judge_sample of the fit's frame)."""
    alpha = plan.alpha_at(look)
    comp = compare_all(data, replicates=replicates, seed=seed, with_ranks=False, simultaneous=True, judges=judges)
    tests = sum(1 for p in comp.pairs if p.p is not None)
    out = Look(look, alpha, tests, len(data.dilemmas))
    for pr in comp.pairs:
        fixed = None if pr.ci_low is None or pr.ci_high is None else (pr.ci_high - pr.ci_low) / 2.0
        if alpha <= 0.0:
            out.pairs.append(AnytimePair(pr.a, pr.b, pr.diff, None, None, fixed,
                                         f"look {look} is past the {plan.max_looks} planned"))
            continue
        if pr.p is None or pr.diff is None or pr.se is None or pr.df is None:
            out.pairs.append(AnytimePair(pr.a, pr.b, pr.diff, None, None, fixed, pr.reason or "no interval"))
            continue
        half = look_quantile(pr.df, alpha, tests) * pr.se
        out.pairs.append(AnytimePair(pr.a, pr.b, pr.diff, pr.diff - half, pr.diff + half, fixed, pr.reason))
    return out


def _widest(half_widths: Sequence[float | None]) -> float | None:
    """The largest of the identified pairs' half-widths; None when there is none or one is missing."""
    if not half_widths or any(h is None for h in half_widths):
        return None
    return float(max(h for h in half_widths if h is not None))


def widest_of(pairs: Sequence[PairJson]) -> float | None:
    return _widest([p["half_width"] for p in pairs if p["diff"] is not None])


# ---- what a report says of an adaptive tournament ----------------------------------------------------------

NOTE = ("The run looked at its intervals after each pass and stopped when they were narrow enough (or could not "
        "go on): the report's pairwise table gives fixed-sample intervals, which lose their 95% coverage under "
        "such stopping. The intervals here are anytime-valid: each look spent a share of alpha = {alpha} "
        "(union bound over at most {looks} looks), so they hold with at least {conf} confidence whenever the "
        "run stopped. They are the last look's, on the rounds complete at the stop.")


def adaptive_summary(record: object) -> dict[str, object] | None:
    """The `adaptive` object of a report (`report --json`, the Markdown and web report, the Analysis tab)
    from a tournament's `adaptive` record (ebtui.core.tournament.adaptive.AdaptiveState.json); None when the
    tournament is not adaptive or its record is unreadable."""
    if not isinstance(record, dict) or "target" not in record:
        return None
    try:
        rule = look_plan_of(record.get("rule") or {})
        looks = [m for m in record.get("measurements") or [] if isinstance(m, dict)]
        waves = [{k: w.get(k) for k in ("number", "kind", "units", "calls", "cost_usd", "widest_before",
                                        "predicted_widest_after")}
                 for w in record.get("waves") or [] if isinstance(w, dict)]
        iv = record.get("intervals") if isinstance(record.get("intervals"), dict) else None
        target = float(record["target"])
    except (TypeError, ValueError, KeyError):
        return None
    pairs = list(iv.get("pairs") or []) if iv else []
    legacy = not record.get("rule")  # a run from before the looks were anytime-valid
    reason = ("" if pairs else "this run measured fixed-sample intervals (it predates anytime-valid looks): "
              "none is valid at its stop" if legacy else "no look was taken (the run stopped before its first "
              "pass was complete)")
    return {
        "target_half_width": target,
        "rule": ({"method": None, "description": "none recorded: the run stopped on fixed-sample intervals"}
                 if legacy else {**rule.json(), "description": rule.describe()}),
        "looks": [{k: m.get(k) for k in ("look", "alpha", "calls", "dilemmas", "widest", "widest_fixed",
                                         "uniform_calls", "spent_usd")} for m in looks],
        "waves": waves,
        "stop_reason": record.get("stop_reason"),
        "stop_message": str(record.get("stop_message") or ""),
        "uniform": record.get("uniform"),
        "look": iv.get("look") if iv else None,
        "alpha": iv.get("alpha") if iv else None,
        "pairwise": pairs,
        "reason": reason,
        "note": NOTE.format(alpha=num.shown(rule.alpha, "g"), looks=rule.max_looks,
                            conf=num.percent(1 - rule.alpha)),
    }


def look_plan_of(rule: object) -> LookPlan:
    """The LookPlan a waves file recorded (LookPlan.json()); the default plan when there is none."""
    if not isinstance(rule, dict) or not rule:
        return LookPlan()
    alpha = float(rule.get("alpha", ALPHA))
    looks = int(rule.get("max_looks", 1))
    per = rule.get("alpha_per_look")
    first = float(per[0]) / alpha if isinstance(per, list) and per and looks > 1 else 1.0
    return LookPlan(alpha, looks, first)
