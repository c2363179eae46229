"""The one interval standard (what a printed interval of a difference and a plan's promise mean) and the
judges as a sample (the judge x model variation a dilemma bootstrap cannot see, added to any linear estimate's
SE on Satterthwaite degrees of freedom). Used by pairwise.py, intervals.py, compare.py and precision.py.
The method: docs/STATISTICS.md, "The interval standard: which models differ".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from ebtui.core.analysis.common import int_unique
from ebtui.core.analysis.frame import ScoreFrame
from ebtui.core.views import numbers as num

if TYPE_CHECKING:
    from pathlib import Path

    from ebtui.core.analysis.variance import VarianceComponents

ALPHA = 0.05
MIN_JUDGES = 3  # below this, intervals are about the judges in the data only (judge variances not estimable)
#: the random judge terms whose part of a contrast's variance a dilemma bootstrap cannot see (a judge's liking
#: for a model is the same on every dilemma)
CROSSED = ("judge", "judge_model")


@dataclass(frozen=True)
class IntervalStandard:
    """How the report answers "which models differ", defined once: every pair of the table gets a
    simultaneous interval (Bonferroni over the `tests` pairs that have one: each at level 1 - alpha / tests,
    with the t critical value on the interval's degrees of freedom), so all of them hold together with
    probability >= 1 - alpha; a pair differs when its interval excludes 0 (it is then also Holm-significant);
    p_holm is the step-down test, ranks count Holm-significant pairs. `ebtui plan`, the detectable gap and
    `ebtui compare` promise and print the same interval (docs/STATISTICS.md, "The interval standard")."""

    alpha: float = ALPHA
    simultaneous: bool = True

    def level(self, tests: int) -> float:
        """The per-interval two-sided level for a table of `tests` intervals."""
        return 1.0 - self.alpha / max(tests if self.simultaneous else 1, 1)

    def critical(self, df: float, tests: int) -> float:
        """The t critical value of one interval of a table of `tests` intervals."""
        return float(special.stdtrit(max(df, 1.0), 1.0 - (1.0 - self.level(tests)) / 2.0))

    def describe(self, tests: int) -> str:
        if not self.simultaneous or tests <= 1:
            return f"{num.shown(1 - self.alpha, '.0%')} interval"
        return (f"simultaneous {num.shown(1 - self.alpha, '.0%')} intervals over {tests} pairs (Bonferroni: each at "
                f"{num.shown(self.level(tests), '.2%')})")


STANDARD = IntervalStandard()


@dataclass(frozen=True)
class JudgeSample:
    """The judges as a sample of judges like them: the variances of the judge and judge x model terms (a
    team's mean-of-criteria score, from ebtui.core.analysis.variance) and the degrees of freedom of their
    estimates. With MIN_JUDGES or more judges every interval adds their part (what a dilemma bootstrap cannot
    see); with fewer the intervals are about these judges only, and say so."""

    judges: int
    variances: dict[str, float] = field(default_factory=dict)
    dfs: dict[str, float] = field(default_factory=dict)

    @property
    def applies(self) -> bool:
        return self.judges >= MIN_JUDGES and any(v > 0 for v in self.variances.values())

    def population(self) -> str:
        """Which population the intervals are about (one sentence for the report)."""
        if self.judges < MIN_JUDGES:
            return (f"Intervals are about these {self.judges} judge(s) only: with fewer than {MIN_JUDGES} judges "
                    "how judges in general vary cannot be estimated.")
        sd = float(np.sqrt(self.variances.get("judge_model", 0.0)))
        return (f"Intervals are about judges like these {self.judges} (judges as a sample: the judge x model "
                f"variation, sd {num.shown(sd, '.2f')}, is part of every interval), and about dilemmas like these.")

    @classmethod
    def of(cls, vc: VarianceComponents, judges: int) -> JudgeSample:
        """From estimated components (defaults or an inseparable component: nothing added)."""
        if vc.source != "estimated" or judges < MIN_JUDGES:
            return cls(judges)
        var: dict[str, float] = {}
        dfs: dict[str, float] = {}
        for k in CROSSED:
            c = vc.components.get(k)
            if c is None or c.variance is None or not c.variance > 0:
                continue
            var[k] = float(c.variance)
            dfs[k] = float(c.df) if c.df is not None and c.df > 0 else 1.0
        return cls(judges, var, dfs)

    @classmethod
    def of_frame(cls, frame: ScoreFrame, *, max_rows: int = 4000, cache: Path | None = None) -> JudgeSample:
        """Estimated from a fit's long table: per (round, seat) the mean of the criteria (one judgment of one
        team), judgments of one round counted as one exchange; at most about `max_rows` of them (a seeded
        sample of whole rounds, as the report's components). `cache`: variance_cache.estimate_components_cached'."""
        J = len(frame.judges)
        if J < MIN_JUDGES or not len(frame):
            return cls(J)
        from ebtui.core.analysis.variance import Row
        from ebtui.core.analysis.variance_cache import estimate_components_cached

        key = frame.round_idx.astype(np.int64) * 2 + (frame.seat < 0)
        uniq, first, inv = int_unique(key)
        means = np.bincount(inv, weights=frame.y) / np.bincount(inv)
        if len(uniq) > max_rows:  # whole rounds: both seats stay together
            rounds = np.unique(uniq // 2)
            rng = np.random.default_rng(20261125)
            keep = rng.choice(rounds, size=max(1, int(len(rounds) * max_rows / len(uniq))), replace=False)
            sel = np.flatnonzero(np.isin(uniq // 2, keep)).tolist()
        else:
            sel = list(range(len(uniq)))
        rows = [Row(frame.dilemmas[int(frame.dilemma_idx[first[i]])], frame.models[int(frame.model_idx[first[i]])],
                    frame.judges[int(frame.judge_idx[first[i]])], f"r{int(uniq[i]) // 2}|{int(uniq[i]) % 2}",
                    "a" if frame.seat[first[i]] > 0 else "b", bool(frame.family[first[i]] > 0.5), float(means[i]))
                for i in sel]
        return cls.of(estimate_components_cached(rows, replicates=0, cache=cache), J)


def crossed_coefficients(r: np.ndarray, dilemma_idx: np.ndarray, G: int, judge_idx: np.ndarray,
                         model_idx: np.ndarray, M: int) -> dict[str, np.ndarray]:
    """For estimates linear in the scores — r[i, k]: score (or cell) i's weight in estimate k, summed over the
    scores a cell holds — the coefficient of each judge term's variance (CROSSED) in the part of the estimate's
    variance a dilemma bootstrap does not see: G/(G-1) sum_l (S_l^2 - sum_d a_dl^2), clipped at 0 (see
    Blocks.crossed). Any least-squares fit can use it: r = X (X'X)^+ c."""
    r = np.asarray(r, float).reshape(len(r), -1)
    g = np.asarray(dilemma_idx, np.int64)
    levels = {"judge": np.asarray(judge_idx, np.int64),
              "judge_model": np.asarray(judge_idx, np.int64) * M + np.asarray(model_idx, np.int64)}
    out: dict[str, np.ndarray] = {}
    for name, lev in levels.items():
        nl = int(lev.max()) + 1 if len(lev) else 0
        # per column a bincount: np.add.at's sums, added in the same (row) order, without its slow 2-D path
        cols = np.ascontiguousarray(r.T)
        S = np.zeros((nl, r.shape[1]))
        a = np.zeros((nl * G, r.shape[1]))
        cell = lev * G + g
        for k in range(r.shape[1]):
            S[:, k] = np.bincount(lev, weights=cols[k], minlength=nl)
            a[:, k] = np.bincount(cell, weights=cols[k], minlength=nl * G)
        part = (np.sum(S ** 2, axis=0) - np.sum(a ** 2, axis=0)) * (G / (G - 1) if G > 1 else 1.0)
        out[name] = np.maximum(part, 0.0)
    return out


def judge_part(coef: Mapping[str, np.ndarray], judges: JudgeSample | None) -> tuple[np.ndarray, np.ndarray]:
    """Per estimate: the judge terms' variance to add to a dilemma-bootstrap SE^2 (from `crossed_coefficients`'
    coefficients and the JudgeSample's variances) and its Satterthwaite degrees of freedom; 0 and infinity when
    the judges are not taken as a sample. With `satterthwaite` this turns any bootstrap SE into an interval
    about judges like these (the family term in judge_bias.py can use it)."""
    P = len(next(iter(coef.values()))) if coef else 0
    if judges is None or not judges.applies:
        return np.zeros(P), np.full(P, np.inf)
    used = [k for k in CROSSED if judges.variances.get(k, 0.0) > 0 and k in coef]
    parts = [judges.variances[k] * coef[k] for k in used]
    dfs = [judges.dfs.get(k, 1.0) for k in used]
    total = np.sum(parts, axis=0) if parts else np.zeros(P)
    denom = sum(p ** 2 / d for p, d in zip(parts, dfs, strict=True)) if parts else np.zeros(P)
    df = np.where(denom > 0, total ** 2 / np.where(denom > 0, denom, 1.0), np.inf)
    return total, df


def satterthwaite(se_b: float, df_b: float, judge_var: float, judge_df: float) -> tuple[float, float]:
    """(SE, degrees of freedom) of a bootstrap SE (df_b) with the judge terms' variance added (judge_df):
    Welch-Satterthwaite, never above df_b (the effective-dilemmas rule caps every interval's df; a judge part
    estimated with many df does not buy dilemmas back)."""
    v_b = se_b ** 2
    total = v_b + judge_var
    denom = v_b ** 2 / df_b + (judge_var ** 2 / judge_df if judge_var > 0 and np.isfinite(judge_df) else 0.0)
    df = min(total ** 2 / denom, df_b) if denom > 0 else df_b
    return float(np.sqrt(total)), float(max(1.0, df))
