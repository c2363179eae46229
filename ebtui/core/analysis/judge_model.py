"""The judge x model variance component of the bias fit: how much a judge's liking for a model varies from
pair to pair beyond the fit's terms (a moment estimate on the fit's own design), and the intervals that add
each quantity's share of it to the dilemma bootstrap's variance. docs/STATISTICS.md, "Judge bias and
reliability" ("Intervals of the bias fit, with judges as a sample").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ebtui.core.analysis import bootstrap


@dataclass
class JudgeModel:
    """The judge x model variance component: how much a judge's liking for a model varies from pair to pair,
    beyond what the fit's terms explain. A pair's liking does not change between dilemmas, so resampling
    dilemmas cannot see it; each reported quantity's interval adds its share (`share[i]` x `variance`)."""

    variance: float | None  # score points squared; None: not estimable
    df: int  # the degrees of freedom of the interaction it is estimated from
    pairs: int  # (judge, model) pairs with scores
    share: np.ndarray  # per _vector entry: its variance per unit of `variance`
    note: str = ""

    @property
    def sd(self) -> float | None:
        return None if self.variance is None else float(np.sqrt(self.variance))


def judge_model_component(judge: np.ndarray, model: np.ndarray, dilemma: np.ndarray, J: int, M: int, G: int,
                          X: np.ndarray, y: np.ndarray, L: np.ndarray) -> JudgeModel:
    """A moment estimate of the judge x model variance on the fit's own design. With Z the (judge, model) pair
    indicators and H the fit's hat matrix, Q = r'Z S^+ Z'r (r: the fit's residuals, S = Z'(I - H)Z) is the sum
    of squares the pairs add beyond the fit; E[Q] = tr(S) var + the noise's share, the noise's share estimated
    from the pairs' residual sums per dilemma (the full fit's residuals, clustered on dilemmas, so a model's
    dilemma-to-dilemma swing and every within-dilemma correlation count as noise, not as judge x model). Each
    quantity c'beta then has var x ||c'(X'X)^-1 X'Z||^2 of variance from the pairs (exact for least squares)."""
    cell = judge.astype(np.int64) * max(M, 1) + model
    pairs, ci = np.unique(cell, return_inverse=True)
    C = len(pairs)
    zero = np.zeros(L.shape[0])
    if J < 2 or C < 2:
        return JudgeModel(None, 0, C, zero, "one judge: judge x model variation cannot be told from the models' "
                                            "skill")
    ZX = np.zeros((C, X.shape[1]))
    np.add.at(ZX, ci, X)
    xtx = X.T @ X
    W = np.linalg.lstsq(xtx, ZX.T, rcond=None)[0]  # (X'X)^-1 X'Z
    beta = np.linalg.lstsq(xtx, X.T @ y, rcond=None)[0]
    r = y - X @ beta
    S = np.diag(np.bincount(ci, minlength=C).astype(float)) - ZX @ W
    S = (S + S.T) / 2
    ev, vec = np.linalg.eigh(S)
    keep = ev > max(float(ev.max()), 0.0) * 1e-9
    df = int(keep.sum())
    share = np.sum((L @ W) ** 2, axis=1)
    if df < 1:
        return JudgeModel(None, 0, C, share, "the design's terms leave no (judge, model) variation to estimate")
    Sp = (vec[:, keep] / ev[keep]) @ vec[:, keep].T  # S^+
    zr = np.bincount(ci, weights=r, minlength=C)
    Q = float(zr @ Sp @ zr)
    # the fit with a term per pair: its residuals
    gamma = Sp @ zr
    rf = r - gamma[ci] + X @ (W @ gamma)
    noise = 0.0
    if G >= 2:
        sz = np.zeros((G, C))
        np.add.at(sz, (dilemma, ci), rf)
        sx = np.zeros((G, X.shape[1]))
        np.add.at(sx, dilemma, X * rf[:, None])
        sg = sz - sx @ W  # per dilemma: the pairs' residualised indicators times the residuals
        noise = float(np.einsum("gc,cd,gd->", sg, Sp, sg)) * G / (G - 1)
    var = max(0.0, (Q - noise) / float(np.trace(S)))
    return JudgeModel(var, df, C, share)


def pair_interval(est: float, draws: np.ndarray, G: int, jm: JudgeModel | None, i: int, *,
              clip: tuple[float, float] | None = None) -> bootstrap.Interval:
    """The dilemma bootstrap's variance (as bootstrap.interval: SD x sqrt(G / (G-1))) plus the quantity's
    judge x model variance, with Student's t at the Welch-Satterthwaite degrees of freedom of the sum."""
    if G < bootstrap.MIN_CLUSTERS:
        return bootstrap.Interval(None, None, bootstrap.FEWER)
    if not np.isfinite(est):
        return bootstrap.Interval(None, None, "not estimable")
    d = draws[np.isfinite(draws)]
    if len(d) < 20:
        return bootstrap.Interval(None, None, "too few usable resamples")
    vb = float(np.var(d, ddof=1)) * G / (G - 1)
    vu = float(jm.variance * jm.share[i]) if jm is not None and jm.variance is not None else 0.0
    v = vb + vu
    if not v > 1e-18:
        return bootstrap.Interval(None, None, bootstrap.NO_SPREAD)
    df = v * v / (vb * vb / (G - 1) + (vu * vu / jm.df if jm is not None and vu > 0 else 0.0))
    half = bootstrap.t_quantile(0.975, max(1, int(df))) * float(np.sqrt(v))
    lo, hi = est - half, est + half
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
        if hi - lo <= 1e-9:
            return bootstrap.Interval(None, None, "outside the 1-10 scale")
    return bootstrap.Interval(float(lo), float(hi))
