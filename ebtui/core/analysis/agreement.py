"""Agreement figures of a judges x units matrix (NaN: not scored) for ebtui.core.analysis.columnar.judge_agreement:
Krippendorff's alpha at the interval level (the `krippendorff` package's formula, its coincidence matrix built
from the scored cells only), ICC(2,1), and the judges' pairwise Pearson and Spearman correlations (the floats
`scipy.stats.pearsonr`/`spearmanr` give, to the last bit, without importing scipy.stats: a fifth of a second)."""

from __future__ import annotations

import numpy as np


def krippendorff_interval(data: np.ndarray) -> float | None:
    """Krippendorff's alpha, interval level, of a judges x units matrix (NaN: not scored): the same float as
    `krippendorff.alpha(reliability_data=data, level_of_measurement="interval")`, whose coincidence matrix
    holds a units x values x values array (gigabytes at tens of thousands of units); here each unit adds only
    the pairs of values it has, in the same order (units in turn), so the sums are the same to the last bit.
    None where the package raises (one value, no unit scored twice) or gives NaN."""
    data = np.asarray(data, dtype=float)
    scored = ~np.isnan(data)
    domain = np.unique(data[scored])
    V = len(domain)
    if V <= 1:
        return None
    # per unit (column) and value: how many judges gave it
    unit = np.broadcast_to(np.arange(data.shape[1]), data.shape)[scored]
    value = np.searchsorted(domain, data[scored])
    N = data.shape[1]
    pair_key, counts = np.unique(unit.astype(np.int64) * V + value, return_counts=True)
    u, v = pair_key // V, pair_key % V  # sorted by unit, then value
    per_unit = np.bincount(u, weights=counts, minlength=N).astype(np.int64)
    if not (per_unit > 1).any():
        return None
    # every (value, value') pair within a unit: c_v c_v' - [v = v'] c_v, over max(m_u, 2) - 1
    starts = np.searchsorted(u, np.arange(N))
    width = np.bincount(u, minlength=N)[u]  # per entry: the entries of its unit
    left = np.repeat(np.arange(len(u)), width)  # each entry, paired with every entry of its unit in turn
    offset = np.repeat(np.cumsum(width) - width, width)
    right = starts[u[left]] + (np.arange(len(left)) - offset)
    num = counts[left] * counts[right] - np.where(left == right, counts[left], 0)
    den = np.maximum(per_unit[u[left]], 2) - 1
    term = np.divide(num.astype(float), den)
    # added in the order given (unit by unit), as the package's sum over the units' axis does (a bincount adds
    # in input order too: np.add.at's floats, faster)
    o = np.bincount(v[left] * V + v[right], weights=term, minlength=V * V).reshape(V, V)
    n_v = o.sum(axis=0)
    e = np.divide(np.outer(n_v, n_v) - np.diagflat(n_v), n_v.sum() - 1, dtype=float)
    d = (domain[:, np.newaxis] - domain[np.newaxis, :]).astype(float) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = float(1 - (o * d).sum() / (e * d).sum())
    return None if np.isnan(alpha) else alpha


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


def pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(r, two-sided p) of `scipy.stats.pearsonr(x, y)` for two float vectors of 3 or more values, neither
    constant (the caller checks): scipy's own steps (scipy 1.17, `_stats_py.pearsonr`) in the same numpy
    calls, so every float is the same to the last bit (tested against scipy.stats); the p-value from the
    null's beta distribution through scipy.special.betaincc, as scipy's `_SimpleBeta` does."""
    from scipy import special

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = np.asarray(x.shape[-1], dtype=np.float64)
    xmean = np.mean(x, axis=-1, keepdims=True)
    ymean = np.mean(y, axis=-1, keepdims=True)
    xm = x - xmean
    ym = y - ymean
    xmax = np.max(np.abs(xm), axis=-1, keepdims=True)
    ymax = np.max(np.abs(ym), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        normxm = xmax * np.linalg.norm(xm / xmax, ord=2, axis=-1, keepdims=True)
        normym = ymax * np.linalg.norm(ym / ymax, ord=2, axis=-1, keepdims=True)
        r = np.vecdot(xm / normxm, ym / normym)  # (over the last axis, as scipy asks)
    r = np.clip(r, -1.0, 1.0)
    ab = np.asarray(n / 2 - 1, dtype=np.float64)
    p = 2 * special.betaincc(ab, ab, (np.abs(r) - (-1)) / 2)
    return float(r), float(p)


def spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(rho, two-sided p) of `scipy.stats.spearmanr(x, y)` for two float vectors of 3 or more values, neither
    constant and without NaN (the caller checks): average ranks (the ranks are exact halves, whatever computes
    them), then scipy's own steps — np.corrcoef of the ranks, the t statistic, the t distribution's tail by
    scipy.special.stdtr — so every float is the same to the last bit."""
    from scipy import special

    a = np.column_stack((np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)))
    ranked = np.column_stack((average_ranks(a[:, 0]), average_ranks(a[:, 1])))
    rs = np.corrcoef(ranked, rowvar=False)
    dof = a.shape[0] - 2
    with np.errstate(divide="ignore"):
        t = rs * np.sqrt((dof / ((rs + 1.0) * (1.0 - rs))).clip(0))
    prob = 2 * special.stdtr(dof, -np.abs(t))
    return float(rs[1, 0]), float(prob[1, 0])


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of the values, ties given the mean of their ranks (`scipy.stats.rankdata`'s "average")."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    n = len(values)
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], n]  # one past each tie group's last position
    mean_rank = (starts + 1 + ends) / 2.0  # the mean of the ranks starts+1 .. ends
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks
