"""Judge agreement on the judges' parsed scores: ICC, Krippendorff's alpha, pairwise correlations; families."""

from __future__ import annotations

import math
import statistics
import warnings
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from ebtui.core.analysis.common import (
    OVERALL,
    SEATS,
    Cell,
    Exchange,
    Table,
    coverage,
    exchanges,
    view_name,
)
from ebtui.core.records import CRITERIA, Round, Team

# ---- 6 judge agreement ------------------------------------------------------------------------------------

def _panels(rounds: Sequence[Round]) -> list[Exchange]:
    return [ex for ex in exchanges(rounds)
            if len({r.judge_model for r in ex.rounds if r.judgment is not None}) >= 2]


def _judge_values(ex: Exchange, team: Team, criterion: str, effective: bool) -> dict[str, float]:
    """judge -> the value it gave (a judge who judged the exchange twice: the mean of the two)."""
    got: dict[str, list[float]] = defaultdict(list)
    for judge, s in ex.judged_scores(team, effective):
        if criterion == OVERALL:
            v = s.mean()
        else:
            v = s.as_dict()[criterion]
        if v is not None:
            got[judge].append(float(v))
    return {j: statistics.fmean(vs) for j, vs in got.items()}


def icc_2_1(data: np.ndarray) -> float | None:
    """ICC(2,1) (Shrout & Fleiss: two-way random effects, absolute agreement, one rater) of a units x judges
    matrix with no missing cell; None when it cannot be computed (fewer than 2 units or judges, no variance)."""
    n, k = data.shape
    if n < 2 or k < 2:
        return None
    grand = data.mean()
    ms_r = k * np.sum((data.mean(axis=1) - grand) ** 2) / (n - 1)
    ms_c = n * np.sum((data.mean(axis=0) - grand) ** 2) / (k - 1)
    sse = np.sum((data - data.mean(axis=1, keepdims=True) - data.mean(axis=0, keepdims=True) + grand) ** 2)
    ms_e = sse / ((n - 1) * (k - 1))
    denom = ms_r + (k - 1) * ms_e + k * (ms_c - ms_e) / n
    if not denom > 0:
        return None
    return float((ms_r - ms_e) / denom)


def judge_agreement(rounds: Sequence[Round], **_ignored: object) -> tuple[Table, Table]:
    """Where several judges scored the same exchange: ICC, Krippendorff's alpha, pairwise correlations.

    Always on the judges' parsed scores: a human override is not a judge's opinion, so it never enters an
    agreement figure. Units are (exchange, team).
    """
    effective = False
    panels = _panels(rounds)
    panel_rounds = [r for ex in panels for r in ex.rounds]
    judges = sorted({r.judge_model for r in panel_rounds if r.judgment is not None})
    units = [(ex, team) for ex in panels for team in SEATS]
    view = view_name(effective)
    cov = coverage(panel_rounds, effective)

    alpha_rows: list[list[Cell]] = []
    corr_rows: list[list[Cell]] = []
    for c in (*CRITERIA, OVERALL):
        table = [_judge_values(ex, team, c, effective) for ex, team in units]
        data = np.array([[u.get(j, np.nan) for u in table] for j in judges], dtype=float) if judges else None
        alpha: float | None = None
        pairable = int(np.sum(np.sum(~np.isnan(data), axis=0) >= 2)) if data is not None and data.size else 0
        if data is not None and pairable >= 1 and len(judges) >= 2:
            import krippendorff  # imported only where there is a panel to measure

            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    a = float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
                alpha = None if math.isnan(a) else a
            except (ValueError, ZeroDivisionError):
                alpha = None
        ratings = int(np.sum(~np.isnan(data))) if data is not None and data.size else 0
        icc = None
        complete = 0
        if data is not None and data.size and len(judges) >= 2:
            # ICC needs every judge on every unit: the judges who rated most units, on the units they all rated
            full = data[:, ~np.isnan(data).any(axis=0)]
            complete = full.shape[1]
            icc = icc_2_1(full.T) if complete >= 2 else None
        alpha_rows.append([c, pairable, len(judges), ratings, alpha, complete, icc])
        for j1, j2 in combinations(judges, 2):
            pairs = [(u[j1], u[j2]) for u in table if j1 in u and j2 in u]
            r_p = p_p = r_s = p_s = None
            if len(pairs) >= 3:
                x, y = np.array(pairs).T
                if np.ptp(x) > 0 and np.ptp(y) > 0:
                    from scipy import stats  # slow to import: only with panels

                    pr = stats.pearsonr(x, y)
                    sr = stats.spearmanr(x, y)
                    r_p, p_p = float(pr.statistic), float(pr.pvalue)
                    r_s, p_s = float(sr.statistic), float(sr.pvalue)
            corr_rows.append([c, j1, j2, len(pairs), r_p, p_p, r_s, p_s])

    panel_note = (f"{len(panels)} exchanges were scored by two or more judges ({len(judges)} judges); "
                  "a unit is one team in one exchange. Judges' parsed scores only: human overrides never count.")
    return (
        Table("judge_agreement", "Judge agreement per criterion: Krippendorff's alpha and ICC(2,1)",
              ["criterion", "units_pairable", "judges", "ratings", "alpha", "units_complete", "icc"],
              alpha_rows, view=view, coverage=cov,
              notes=[panel_note, "alpha: krippendorff.alpha, interval level (1 = perfect agreement, 0 = chance); "
                     "icc: ICC(2,1), absolute agreement, over the units every judge scored. Blank: not computable."]),
        Table("judge_correlation", "Judge agreement: pairwise correlation per criterion",
              ["criterion", "judge_1", "judge_2", "n", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"],
              corr_rows, view=view, coverage=cov,
              notes=["scipy.stats.pearsonr / spearmanr over the units both judges scored; blank with fewer "
                     "than 3 units or a judge gave the same value throughout."]),
    )
