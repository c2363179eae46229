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


@dataclass
class DilemmaSums:
    """The bias fit's sufficient statistics, centred within each dilemma (the fit has a difficulty term per
    dilemma): per dilemma its rows `n`, the mean of each fixed column `xbar` (mu first) and of y `ybar`,
    `A` = sum (x - xbar)(x - xbar)' and `b` = sum (x - xbar)(y - ybar); `raw` = each column's sum of squares
    over all rows; and per (dilemma, (judge, model) pair) cell with rows: its dilemma `cell_g`, pair
    `cell_c` (0..pairs-1), rows `cell_n`, sum of y - ybar `cell_y` and of x - xbar `cell_x`."""

    n: np.ndarray
    xbar: np.ndarray
    ybar: np.ndarray
    A: np.ndarray
    b: np.ndarray
    raw: np.ndarray
    cell_g: np.ndarray
    cell_c: np.ndarray
    cell_n: np.ndarray
    cell_y: np.ndarray
    cell_x: np.ndarray
    pairs: int

    def take(self, cols: list[int]) -> DilemmaSums:
        """The same sums over the columns `cols` only."""
        return DilemmaSums(self.n, self.xbar[:, cols], self.ybar, self.A[:, cols][:, :, cols], self.b[:, cols],
                           self.raw[cols], self.cell_g, self.cell_c, self.cell_n, self.cell_y, self.cell_x[:, cols],
                           self.pairs)


def judge_model_component(s: DilemmaSums, J: int, M: int, L: np.ndarray) -> JudgeModel:
    """A moment estimate of the judge x model variance on the fit's own design (columns: mu first, then the
    fit's terms; a difficulty term per dilemma). With Z the (judge, model) pair indicators and H the fit's hat
    matrix, Q = r'Z S^+ Z'r (r: the fit's residuals, S = Z'(I - H)Z) is the sum of squares the pairs add
    beyond the fit; E[Q] = tr(S) var + the noise's share, the noise's share estimated from the pairs' residual
    sums per dilemma (the full fit's residuals, clustered on dilemmas, so a model's dilemma-to-dilemma swing
    and every within-dilemma correlation count as noise, not as judge x model). Each quantity c'beta then has
    var x ||c'(X'X)^-1 X'Z||^2 of variance from the pairs (exact for least squares). Everything from the
    per-dilemma sums (Frisch-Waugh: the difficulty terms absorbed by the centring)."""
    C = s.pairs
    zero = np.zeros(L.shape[0])
    if J < 2 or C < 2:
        return JudgeModel(None, 0, C, zero, "one judge: judge x model variation cannot be told from the models' "
                                            "skill")
    G = len(s.n)
    Sx = s.A[:, 1:, 1:].sum(axis=0)  # X'(I - H_dilemmas)X of the terms
    bx = s.b[:, 1:].sum(axis=0)
    cx = s.cell_x[:, 1:]
    ZX = np.zeros((C, Sx.shape[0]))
    np.add.at(ZX, s.cell_c, cx)
    Wx = np.linalg.lstsq(Sx, ZX.T, rcond=None)[0]  # the terms' part of (X'X)^-1 X'Z
    beta = np.linalg.lstsq(Sx, bx, rcond=None)[0]
    N = np.zeros((G, C))  # rows per dilemma and pair
    np.add.at(N, (s.cell_g, s.cell_c), s.cell_n)
    zbar = N / s.n[:, None]
    W = np.vstack([(zbar - s.xbar[:, 1:] @ Wx).mean(axis=0), Wx])  # mu's row: the mean of the dilemmas' intercepts
    S = np.diag(N.sum(axis=0)) - N.T @ zbar - ZX @ Wx
    S = (S + S.T) / 2
    ev, vec = np.linalg.eigh(S)
    keep = ev > max(float(ev.max()), 0.0) * 1e-9
    df = int(keep.sum())
    share = np.sum((L @ W) ** 2, axis=1)
    if df < 1:
        return JudgeModel(None, 0, C, share, "the design's terms leave no (judge, model) variation to estimate")
    Sp = (vec[:, keep] / ev[keep]) @ vec[:, keep].T  # S^+
    zr = np.bincount(s.cell_c, weights=s.cell_y - cx @ beta, minlength=C)
    Q = float(zr @ Sp @ zr)
    # the fit with a term per pair: its residuals, summed per dilemma and pair (u) and against x per dilemma (v)
    gamma = Sp @ zr
    bstar = beta - Wx @ gamma
    noise = 0.0
    if G >= 2:
        u = np.zeros((G, C))
        np.add.at(u, (s.cell_g, s.cell_c), s.cell_y - cx @ bstar - s.cell_n * (gamma[s.cell_c] - (zbar @ gamma)[s.cell_g]))
        v = s.b[:, 1:] - s.A[:, 1:, 1:] @ bstar
        np.add.at(v, s.cell_g, -cx * gamma[s.cell_c][:, None])
        sg = u - v @ Wx  # per dilemma: the pairs' residualised indicators times the residuals
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
    # (with no judge x model part the sum's df is G - 1 exactly: the ratio below can round to just under it)
    df = G - 1 if not vu > 0 else v * v / (vb * vb / (G - 1) + (vu * vu / jm.df if jm is not None else 0.0))
    half = bootstrap.t_quantile(0.975, max(1, int(df + 1e-9))) * float(np.sqrt(v))
    lo, hi = est - half, est + half
    if clip is not None:
        lo, hi = max(lo, clip[0]), min(hi, clip[1])
        if hi - lo <= 1e-9:
            return bootstrap.Interval(None, None, "outside the 1-10 scale")
    return bootstrap.Interval(float(lo), float(hi))
