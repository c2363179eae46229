"""95% intervals from a cluster bootstrap over dilemmas, seeded and reproducible: estimate ± t(0.975, G-1)
× SE, SE the replicates' standard deviation scaled by sqrt(G / (G-1)). Blank below 3 dilemmas or with no
spread; scores clipped to 1-10. The method and its rules: docs/STATISTICS.md, "Intervals".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ebtui.core.analysis.fit import Design, JointFit, fit_clusters, solve_normal, sum_matrix

DEFAULT_SEED = 20261124
DEFAULT_REPLICATES = 400
MIN_CLUSTERS = 3
FEWER = f"fewer than {MIN_CLUSTERS} dilemmas"
NO_SPREAD = "no spread across dilemma resamples"
SCALE = (1.0, 10.0)


def blank_note(dilemmas: int) -> str | None:
    """The note a table gets when its intervals are blank for want of dilemmas (None: they are not)."""
    return f"Intervals blank: {FEWER} ({dilemmas})." if dilemmas < MIN_CLUSTERS else None


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    note: str = ""  # why it is blank (empty when it is not)


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


@lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile for p in (0.5, 1) (what scipy.stats.t.ppf gives;
    tests/unit/analysis/test_analysis_fast.py checks it to 1e-10), by bisection on the upper tail 0.5 * I_{df/(df+t^2)}(df/2, 1/2) — here so that a
    report need not import scipy.special (a third of a second of start-up)."""
    tail = 1.0 - p

    def upper(t: float) -> float:
        return 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))

    lo, hi = 0.0, 1.0
    while upper(hi) > tail:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if upper(mid) > tail:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-14 * hi:
            break
    return (lo + hi) / 2.0


def interval(estimate: float, draws: np.ndarray, clusters: int, *, clip: tuple[float, float] | None = None) -> Interval:
    """The t-based bootstrap interval (see the module docstring) from one quantity's replicate draws."""
    if clusters < MIN_CLUSTERS:
        return Interval(None, None, FEWER)
    if not np.isfinite(estimate):
        return Interval(None, None, "not estimable")
    draws = draws[np.isfinite(draws)]
    if len(draws) < 20:
        return Interval(None, None, "too few usable resamples")
    se = float(np.std(draws, ddof=1)) * np.sqrt(clusters / (clusters - 1))
    if not se > 1e-9:
        return Interval(None, None, NO_SPREAD)
    half = t_quantile(0.975, clusters - 1) * se
    lo, hi = estimate - half, estimate + half
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
        if hi - lo <= 1e-9:
            return Interval(None, None, "outside the 1-10 scale")
    return Interval(float(lo), float(hi))


def replicate_picks(G: int, *, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """[replicates, G]: the clusters each replicate draws (the seeded stream every interval uses)."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, G, size=G) for _ in range(replicates)]) if replicates else \
        np.zeros((0, G), dtype=np.int64)


def replicate_fits(jf: JointFit, *, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Rows: replicates; columns: Estimates.vector() order (models, judges, family, seat gap).

    Each replicate is a refit over G dilemmas drawn with replacement, computed from the per-dilemma
    sufficient statistics (ebtui.core.analysis.fit.ClusterStats), all replicates at once where they hold
    every level. A level (model, judge) a replicate lacks is NaN in that replicate only — the other
    quantities of the replicate stand (the sum-to-zero constraints then run over the levels present); the
    family term is NaN in a replicate without a same-family contrast."""
    d: Design = jf.design
    G = len(d.dilemmas)
    width = len(jf.estimates.vector())
    if G < MIN_CLUSTERS:
        return np.full((0, width), np.nan)
    picks = replicate_picks(G, replicates=replicates, seed=seed)
    st = d.stats
    counts = np.bincount((picks + G * np.arange(replicates)[:, None]).ravel(),
                         minlength=replicates * G).reshape(replicates, G).astype(float)
    pm, pj, pc = st.presence(counts)
    fam_ok = np.zeros(replicates, dtype=bool)
    if d.has_family:
        fam_sum, n = counts @ st.s[:, -1], counts @ st.n
        fam_ok = (fam_sum > 0) & (fam_sum < n)
    complete = pm.all(axis=1) & pj.all(axis=1) & pc.all(axis=1) & (fam_ok == d.has_family)
    out = np.full((replicates, width), np.nan)
    batch = np.flatnonzero(complete)
    if len(batch):
        allm, allj, allc = pm[batch[0]], pj[batch[0]], pc[batch[0]]
        T = d.mapping(allm, allj, allc, G, d.has_family)
        q = st.q
        top = T[:q]  # the one-hot part (the positions are the last G - 1 parameters, sum-coded)
        # X'X = T'WT block by block, W = [[sum of the drawn clusters' A, their s], [their s', diag(n)]]:
        # each block a matrix product over clusters or positions (no q+G square matrix per replicate)
        R = np.matmul(np.matmul(top.T[None], st.A), top).reshape(G, -1)  # T_top' A_g T_top
        U = st.s @ top  # [G, p]: T_top' s_g
        P = picks[batch]
        cb = counts[batch]
        p = T.shape[1]
        k0 = p - (G - 1)  # the dilemma positions' parameters come last (sum-coded: the last position is -1)
        xtx = (cb @ R).reshape(len(batch), p, p)
        UP = U[P]  # [B, G, p]
        cross = (UP[:, : G - 1, :] - UP[:, G - 1:, :]).transpose(0, 2, 1)  # [B, p, G-1]: T_top' S T_bot
        xtx[:, :, k0:] += cross
        xtx[:, k0:, :] += cross.transpose(0, 2, 1)
        nP = st.n[P]
        xtx[:, k0:, k0:] += nP[:, G - 1, None, None]
        idx = np.arange(G - 1)
        xtx[:, k0 + idx, k0 + idx] += nP[:, : G - 1]
        tP = st.t[P]
        xty = cb @ (st.b @ top)
        xty[:, k0:] += tP[:, : G - 1] - tP[:, G - 1:]
        try:
            params = np.linalg.solve(xtx, xty[..., None])[..., 0]
        except np.linalg.LinAlgError:  # a singular replicate: each alone (minimum-norm where singular)
            params = np.stack([solve_normal(xtx[i], xty[i]) for i in range(len(batch))])
        out[batch] = _vectors(d, params)
    for row in np.flatnonzero(~complete).tolist():
        out[row] = fit_clusters(d, picks[row]).vector()
    return out


def _vectors(d: Design, params: np.ndarray) -> np.ndarray:
    """Estimates.vector() of many fits over every level at once (read_estimates, one row per fit)."""
    M, J = len(d.models), len(d.frame.judges)
    out = np.full((len(params), M + J + 2), np.nan)
    k = 1
    out[:, :M] = params[:, :1] + params[:, k:k + M - 1] @ sum_matrix(M).T if M > 1 else params[:, :1]
    k += M - 1
    if d.has_seat:
        out[:, M + J + 1] = 2.0 * params[:, k]
        k += 1
    out[:, M:M + J] = params[:, k:k + J - 1] @ sum_matrix(J).T if J > 1 else 0.0
    k += J - 1
    if d.has_family:
        out[:, M + J] = params[:, k]
    return out


def model_draws(jf: JointFit, draws: np.ndarray) -> np.ndarray:
    """[replicates, models]: each replicate's adjusted mean per model (columns in jf.design.models order)."""
    return draws[:, : len(jf.design.models)]


def cluster_mean(values: Sequence[float] | np.ndarray, clusters: Sequence[str] | np.ndarray, *, seed: int = DEFAULT_SEED,
                 replicates: int = DEFAULT_REPLICATES, clip: tuple[float, float] | None = None) -> tuple[float | None, Interval]:
    """A plain mean with the same cluster-bootstrap interval (for tables outside the joint fit)."""
    if not len(values):
        return None, Interval(None, None, "no data")
    vals = np.asarray(values, dtype=float)
    # clusters: names, or (from the columnar tables) integer codes numbered in the names' sorted order
    if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu":  # renumber the codes used, in order
        present = np.bincount(clusters) > 0
        idx = (np.cumsum(present) - 1)[clusters]
        names = np.flatnonzero(present)
    else:
        names, idx = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    est = float(vals.mean())
    G = len(names)
    if G < MIN_CLUSTERS:
        return est, Interval(None, None, FEWER)
    sums = np.bincount(idx, weights=vals, minlength=G)
    counts = np.bincount(idx, minlength=G).astype(float)
    picks = np.random.default_rng(seed).integers(0, G, size=(replicates, G))
    draws = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)  # the mean of each resample's values
    return est, interval(est, draws, G, clip=clip)
