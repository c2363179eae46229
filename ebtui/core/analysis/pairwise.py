"""Which model is better, and how sure: judge-adjusted pairwise differences (contrasts of the joint fit)
with simultaneous intervals and Holm-adjusted p-values, rank intervals, and leave-one-dilemma-out /
leave-one-judge-out robustness; a difference is blank, with the reason, when it cannot be trusted.
`STANDARD` is the one interval standard (what a printed interval and a plan's promise mean); `JudgeSample`
adds the judge-level variation a dilemma bootstrap cannot see, so that claims hold for judges like these.
The rules and the JSON: docs/STATISTICS.md, "Which model is better" and "The interval standard".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TypedDict

import numpy as np
from scipy import special

from ebtui.core.analysis.common import Cell
from ebtui.core.analysis.frame import ScoreFrame
from ebtui.core.analysis.identify import (
    MIN_DILEMMAS,
    Identification,
    cell_keys,
    design_entries,
    dilemmas_per_level,
    gram,
    identify,
    sparse_reason,
)
from ebtui.core.analysis.standard import ALPHA as ALPHA
from ebtui.core.analysis.standard import CROSSED as CROSSED
from ebtui.core.analysis.standard import MIN_JUDGES as MIN_JUDGES
from ebtui.core.analysis.standard import STANDARD as STANDARD
from ebtui.core.analysis.standard import IntervalStandard as IntervalStandard
from ebtui.core.analysis.standard import JudgeSample as JudgeSample
from ebtui.core.analysis.standard import crossed_coefficients as crossed_coefficients
from ebtui.core.analysis.standard import judge_part as judge_part
from ebtui.core.analysis.standard import satterthwaite as satterthwaite
from ebtui.core.views import numbers as num

DEFAULT_SEED = 20261124
DEFAULT_REPLICATES = 400
MIN_USABLE = 20
MIN_EFFECTIVE = 2.0  # effective number of dilemmas below which an interval is blank (see Blocks.effective)
ROBUSTNESS_REPLICATES = 200  # each leave-one-out refit re-tests every pair: fewer replicates, same seed
TOL = 1e-9
FEWER = f"fewer than {MIN_DILEMMAS} dilemmas"
@dataclass
class Data:
    """The numbers one comparison needs (a subset of ebtui.core.analysis.fit.Design's public fields)."""

    models: list[str]
    judges: list[str]
    dilemmas: list[str]
    n_criteria: int
    y: np.ndarray
    model_idx: np.ndarray
    judge_idx: np.ndarray
    dilemma_idx: np.ndarray
    crit_idx: np.ndarray
    seat: np.ndarray
    family: np.ndarray
    #: rows are distinct design cells: `y` is a cell's mean score and `w` how many scores it holds (the
    #: normal equations need no more, so the comparison costs the same whatever the number of rounds)
    w: np.ndarray | None = None

    @classmethod
    def of(cls, d: ScoreFrame) -> Data:
        """The distinct cells of a joint fit's long table."""
        mi, ji, di, ci = d.model_idx, d.judge_idx, d.dilemma_idx, d.crit_idx
        seat, fam, y = np.asarray(d.seat, float), np.asarray(d.family, float), np.asarray(d.y, float)
        first, cell = cell_keys(mi, ji, ci, di, seat, fam)
        w = np.bincount(cell, minlength=len(first)).astype(float)
        ymean = np.bincount(cell, weights=y, minlength=len(first)) / w
        return cls(list(d.models), list(d.judges), list(d.dilemmas), len(d.criteria), ymean,
                   mi[first], ji[first], di[first], ci[first], seat[first], fam[first], w)

    @property
    def weights(self) -> np.ndarray:
        return np.ones(len(self.y)) if self.w is None else self.w

    def subset(self, rows: np.ndarray) -> Data:
        """The rows given, with the levels that remain re-indexed (names keep their order)."""
        def reindex(idx: np.ndarray, names: list[str]) -> tuple[list[str], np.ndarray]:
            keep = sorted(set(idx[rows].tolist()))
            pos = {old: new for new, old in enumerate(keep)}
            return [names[k] for k in keep], np.array([pos[i] for i in idx[rows].tolist()], dtype=int)

        models, mi = reindex(self.model_idx, self.models)
        judges, ji = reindex(self.judge_idx, self.judges)
        dilemmas, di = reindex(self.dilemma_idx, self.dilemmas)
        crits = sorted(set(self.crit_idx[rows].tolist()))
        cpos = {old: new for new, old in enumerate(crits)}
        ci = np.array([cpos[i] for i in self.crit_idx[rows].tolist()], dtype=int)
        return Data(models, judges, dilemmas, len(crits), self.y[rows], mi, ji, di, ci, self.seat[rows],
                    self.family[rows], self.weights[rows])

    def identification(self, *, has_seat: bool | None = None, has_family: bool | None = None) -> Identification:
        seat_any = len(set(self.seat.tolist())) == 2
        fam_any = bool(0 < self.family.sum() < len(self.family))
        return identify(self.model_idx, self.judge_idx, self.crit_idx, self.dilemma_idx, self.seat, self.family,
                        self.models, self.judges, self.n_criteria, len(self.dilemmas),
                        has_seat=seat_any if has_seat is None else (has_seat and seat_any),
                        has_family=fam_any if has_family is None else (has_family and fam_any))


class Blocks:
    """Per-dilemma blocks of the dilemma-centred design (models, judges, seat, family, criteria columns)."""

    def __init__(self, data: Data, ident: Identification) -> None:
        self.layout = replace(ident.layout, with_dilemmas=False)
        p = self.layout.width
        cols, vals = design_entries(data.model_idx, data.judge_idx, data.crit_idx, data.dilemma_idx, data.seat,
                                    data.family, self.layout)
        G = len(data.dilemmas)
        self.G = G
        g = np.asarray(data.dilemma_idx, np.int64)
        self._cells = (cols, vals, data, g)
        w = data.weights  # a row stands for w scores of one cell, y their mean
        xtx = gram(cols, vals * np.sqrt(w)[:, None], p, g, G)
        n = np.bincount(g, weights=w, minlength=G).astype(float)
        flat = (g[:, None] * p + cols).ravel()
        colsum = np.bincount(flat, weights=(vals * w[:, None]).ravel(), minlength=G * p).reshape(G, p)
        xty = np.bincount(flat, weights=(vals * (data.y * w)[:, None]).ravel(), minlength=G * p).reshape(G, p)
        ysum = np.bincount(g, weights=data.y * w, minlength=G)
        safe = np.maximum(n, 1.0)
        # centring within each dilemma absorbs its difficulty term: Z'Z = X'X - n xbar xbar', Z'y likewise
        self._centre = colsum / safe[:, None]  # per dilemma: the mean design row (what centring takes off)
        self.A = xtx - colsum[:, :, None] * colsum[:, None, :] / safe[:, None, None]
        self.b = xty - colsum * (ysum / safe)[:, None]

    def solve(self, weights: np.ndarray, K: np.ndarray) -> np.ndarray:
        """Contrast estimates K beta for each row of weights (B x G dilemma counts); NaN where the weighted
        data do not identify the contrast."""
        W = np.atleast_2d(weights).astype(float)
        p = self.A.shape[1]
        A = (W @ self.A.reshape(self.G, -1)).reshape(-1, p, p)
        b = W @ self.b
        w, V = np.linalg.eigh(A)
        top = np.maximum(w.max(axis=1, keepdims=True), 1.0)
        keep = w > TOL * top
        inv = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
        coef = np.einsum("bkj,bk->bj", V, b) * inv
        beta = np.einsum("bij,bj->bi", V, coef)
        est = beta @ K.T  # (B, P)
        proj = np.einsum("pk,bkj->bpj", K, V)  # components of each contrast on the eigenvectors
        null_norm = np.sqrt(np.sum(proj ** 2 * (~keep)[:, None, :], axis=2))
        ok = null_norm <= 1e-6 * np.maximum(np.linalg.norm(K, axis=1), 1e-12)[None, :]
        out: np.ndarray = np.where(ok, est, np.nan)
        return out


    def crossed(self, K: np.ndarray) -> dict[str, np.ndarray]:
        """Per random judge term (CROSSED) and contrast (row of K): the coefficient of the term's variance in
        the part of the estimate's variance that the dilemma bootstrap does not see. The estimate is
        sum_i r_i y_i (r = centred X v, v = A^+ c); with S_l the sum of r over level l's scores and a_dl the
        sum within dilemma d, the estimate's variance has var x sum_l S_l^2 and the bootstrap's expected SE^2
        var x G/(G-1) sum_l sum_d (a_dl - S_l/G)^2; the difference is G/(G-1) sum_l (S_l^2 - sum_d a_dl^2)
        (clipped at 0). ebtui.core.analysis.precision.predict_pairs uses the same algebra for a plan."""
        cols, vals, data, g = self._cells
        A = self.A.sum(axis=0)
        V = np.linalg.pinv(A, rcond=TOL, hermitian=True) @ K.T  # (p, P)
        xv = _rows_times(vals, cols, V)  # each cell's x'v
        r = (xv - (self._centre @ V)[g]) * data.weights[:, None]  # summed over the cell's scores
        return crossed_coefficients(r, g, self.G, data.judge_idx, data.model_idx, len(data.models))

    def effective(self, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per contrast (row of K): the effective number of dilemmas behind its estimate, and the dilemma that
        carries the most of it. Under independent errors dilemma g contributes a_g = v' A_g v (v = A^+ c) to
        the estimate's variance; G* = (sum a_g)^2 / sum a_g^2 (Carter, Schnepel & Steigerwald 2017) is G when
        every dilemma carries the same share and near 1 when one dilemma carries it all."""
        A = self.A.sum(axis=0)
        V = np.linalg.pinv(A, rcond=TOL, hermitian=True) @ K.T  # (p, P)
        a = np.einsum("pk,gpq,qk->kg", V, self.A, V)  # (P, G)
        tot = a.sum(axis=1)
        sq = (a ** 2).sum(axis=1)
        geff = np.where(sq > 0, tot ** 2 / np.where(sq > 0, sq, 1.0), 0.0)
        return geff, np.argmax(a, axis=1)


#: cells per block of `_rows_times` (its gathered rows: block x entries x contrasts floats)
ROWS_BLOCK = 4096


def _rows_times(vals: np.ndarray, cols: np.ndarray, V: np.ndarray) -> np.ndarray:
    """einsum("nk,nkp->np", vals, V[cols]) — each sparse design row (its entries' columns and values) times V —
    a block of rows at a time: the same sums in the same order (each row's own), without the rows x entries x
    contrasts array of the whole design at once (640 MB at 100,000 rounds)."""
    n = len(vals)
    out = np.empty((n, V.shape[1]))
    starts = list(range(0, n, ROWS_BLOCK))
    if len(starts) > 1 and n - starts[-1] < 2:  # no block of one row (einsum would see other shapes)
        starts.pop()
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else n
        out[s:e] = np.einsum("nk,nkp->np", vals[s:e], V[cols[s:e]])
    return out


def pair_matrix(M: int, p: int) -> tuple[list[tuple[int, int]], np.ndarray]:
    pairs = [(i, j) for i in range(M) for j in range(i + 1, M)]
    K = np.zeros((len(pairs), p))
    for k, (i, j) in enumerate(pairs):
        K[k, i], K[k, j] = 1.0, -1.0
    return pairs, K


def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values over the entries that are not None (None stays None)."""
    idx = [i for i, v in enumerate(p) if v is not None]
    vals = np.array([p[i] for i in idx], dtype=float)
    out: list[float | None] = [None] * len(p)
    if not idx:
        return out
    order = np.argsort(vals, kind="stable")
    m = len(vals)
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * vals[order]))
    for rank, k in enumerate(order):
        out[idx[k]] = float(adj[rank])
    return out


@dataclass
class Pair:
    a: str
    b: str
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    p_holm: float | None
    n_dilemmas: int
    reason: str = ""
    #: the interval's parts (None: blank): the dilemma bootstrap's SE and its degrees of freedom, the judge
    #: terms' variance added to it (0 when the judges are not taken as a sample) and its degrees of freedom,
    #: and the combined SE and Satterthwaite degrees of freedom the interval and p use
    se_dilemmas: float | None = None
    df_dilemmas: float | None = None
    judge_var: float = 0.0
    judge_df: float = float("inf")
    se: float | None = None
    df: float | None = None

    @property
    def significant(self) -> bool:
        return self.p_holm is not None and self.p_holm < ALPHA

    def as_dict(self) -> dict[str, Cell]:
        return {"a": self.a, "b": self.b, "diff": self.diff, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "p": self.p, "p_holm": self.p_holm, "n_dilemmas": self.n_dilemmas, "reason": self.reason}


@dataclass
class Rank:
    model: str
    rank: int | None
    rank_low: int | None
    rank_high: int | None
    reason: str = ""

    def as_dict(self) -> dict[str, Cell]:
        return {"model": self.model, "rank": self.rank, "rank_low": self.rank_low, "rank_high": self.rank_high,
                "reason": self.reason}


@dataclass
class Comparison:
    """Every pair once (a before b in name order), the ranks, and the fit's identification."""

    data: Data
    ident: Identification
    pairs: list[Pair]
    ranks: list[Rank] = field(default_factory=list)
    estimates: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per model: skill (min-norm)

    def pair(self, a: str, b: str) -> Pair | None:
        for p in self.pairs:
            if (p.a, p.b) == (a, b):
                return p
            if (p.a, p.b) == (b, a):
                return _flip(p)
        return None

    def significant(self) -> set[tuple[str, str]]:
        """Holm-significant pairs as (better, worse)."""
        out = set()
        for p in self.pairs:
            if p.significant and p.diff is not None:
                out.add((p.a, p.b) if p.diff > 0 else (p.b, p.a))
        return out

    def order(self) -> list[str] | None:
        """Models from best to worst by the point estimates (None: not every pair is identified)."""
        if any(p.diff is None for p in self.pairs):
            return None
        return [self.data.models[i] for i in np.argsort(-self.estimates, kind="stable")]


def _flip(p: Pair) -> Pair:
    def neg(v: float | None) -> float | None:
        return -v if v is not None else None

    return replace(p, a=p.b, b=p.a, diff=neg(p.diff), ci_low=neg(p.ci_high), ci_high=neg(p.ci_low))


def common_dilemmas(data: Data, a: int, b: int) -> int:
    da = set(data.dilemma_idx[data.model_idx == a].tolist())
    db = set(data.dilemma_idx[data.model_idx == b].tolist())
    return len(da & db)


def compare_all(data: Data, *, ident: Identification | None = None, replicates: int = DEFAULT_REPLICATES,
                seed: int = DEFAULT_SEED, with_ranks: bool = True, simultaneous: bool = True,
                judges: JudgeSample | None = None, standard: IntervalStandard = STANDARD,
                tests: int | None = None) -> Comparison:
    """Every pair's judge-adjusted difference with its interval and Holm-adjusted p-value, and the ranks.
    The interval: the dilemma bootstrap's SE, plus the judge terms' part it cannot see when `judges` takes
    the judges as a sample, on Satterthwaite degrees of freedom; `standard` (`simultaneous`): Bonferroni over
    the pairs that have a p (or `tests`: the size of the table a promise is about), so an interval that
    excludes 0 is also Holm-significant; `simultaneous=False`: each pair's own 95%."""
    ident = ident or data.identification()
    blocks = Blocks(data, ident)
    M, G = len(data.models), len(data.dilemmas)
    pairs_idx, K = pair_matrix(M, blocks.layout.width)
    est = blocks.solve(np.ones(G), K)[0] if pairs_idx else np.zeros(0)
    skill_K = np.eye(M, blocks.layout.width)
    skill_K[:, 0] -= 1.0  # each model against the first: identified when the design is connected
    skill = blocks.solve(np.ones(G), skill_K)[0] if M else np.zeros(0)
    n_dil = dilemmas_per_level(data.model_idx, data.dilemma_idx, M)
    draws = _draws(blocks, K, G, replicates, seed) if G >= MIN_DILEMMAS and pairs_idx else None
    geff, top = blocks.effective(K) if pairs_idx else (np.zeros(0), np.zeros(0, dtype=int))
    extra, extra_df = _judge_part(blocks, K, judges) if pairs_idx else (np.zeros(0), np.zeros(0))
    pairs: list[Pair] = []
    for k, (i, j) in enumerate(pairs_idx):
        a, b = data.models[i], data.models[j]
        n_common = common_dilemmas(data, i, j)
        why = ident.pair_reason(i, j)
        if why or not np.isfinite(est[k]):
            pairs.append(Pair(a, b, None, None, None, None, None, n_common, why or "not identified"))
            continue
        diff = float(est[k])
        reason = FEWER if G < MIN_DILEMMAS else (sparse_reason(f"{a}'s score", n_dil[i])
                                                 or sparse_reason(f"{b}'s score", n_dil[j]))
        if not reason:
            reason = concentrated_reason(float(geff[k]), data.dilemmas[int(top[k])])
        pr = Pair(a, b, diff, None, None, None, None, n_common, reason)
        if not reason and draws is not None:
            pr = bootstrap_pair(pr, draws[:, k], G, df=min(G - 1.0, float(geff[k]) - 1.0),
                                judge_var=float(extra[k]), judge_df=float(extra_df[k]), standard=standard)
        pairs.append(pr)
    for pr, ph in zip(pairs, holm([pr.p for pr in pairs]), strict=True):
        pr.p_holm = ph
    m = tests if tests is not None else sum(1 for pr in pairs if pr.p is not None)
    if simultaneous and standard.simultaneous:  # intervals that hold together, like p_holm
        for pr in pairs:
            set_interval(pr, standard, m)
    comp = Comparison(data, ident, pairs, estimates=skill)
    if with_ranks:
        comp.ranks = ranks(comp)
    return comp


def _judge_part(blocks: Blocks, K: np.ndarray, judges: JudgeSample | None) -> tuple[np.ndarray, np.ndarray]:
    if judges is None or not judges.applies:
        return np.zeros(K.shape[0]), np.full(K.shape[0], np.inf)
    return judge_part(blocks.crossed(K), judges)


def bootstrap_pair(pr: Pair, draws: np.ndarray, G: int, *, df: float, judge_var: float = 0.0,
                   judge_df: float = float("inf"), standard: IntervalStandard = STANDARD) -> Pair:
    """The pair with its SE (dilemma bootstrap + the judge part), degrees of freedom, own 95% interval and p;
    or blank with the reason."""
    good = draws[np.isfinite(draws)]
    if len(good) < MIN_USABLE:
        pr.reason = "too few dilemma resamples identify it"
        return pr
    se_b = float(np.std(good, ddof=1)) * np.sqrt(G / (G - 1))
    if not se_b > 1e-9:
        pr.reason = "no spread across dilemma resamples"
        return pr
    df_b = max(1.0, min(df, G - 1.0))
    pr.se_dilemmas, pr.df_dilemmas, pr.judge_var, pr.judge_df = se_b, df_b, judge_var, judge_df
    pr.se, pr.df = satterthwaite(se_b, df_b, judge_var, judge_df)
    assert pr.diff is not None
    pr.p = float(2 * special.stdtr(pr.df, -abs(pr.diff) / pr.se))
    set_interval(pr, standard, 1)
    return pr


def set_interval(pr: Pair, standard: IntervalStandard, tests: int) -> None:
    """The pair's interval under `standard` for a table of `tests` intervals (nothing for a blank pair)."""
    if pr.se is None or pr.df is None or pr.diff is None:
        return
    half = standard.critical(pr.df, tests) * pr.se
    pr.ci_low, pr.ci_high = pr.diff - half, pr.diff + half


def _draws(blocks: Blocks, K: np.ndarray, G: int, replicates: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, G, size=(replicates, G))
    W = np.zeros((replicates, G))
    np.add.at(W, (np.repeat(np.arange(replicates), G), picks.ravel()), 1.0)
    out = np.full((replicates, K.shape[0]), np.nan)
    for start in range(0, replicates, 200):  # bounded memory on large designs
        out[start:start + 200] = blocks.solve(W[start:start + 200], K)
    return out


def concentrated_reason(geff: float, top: str) -> str:
    """The blank reason when a quantity's information comes from fewer than MIN_EFFECTIVE effective dilemmas."""
    if geff >= MIN_EFFECTIVE:
        return ""
    return (f"its information comes mostly from one dilemma (chiefly {top}; effective number of dilemmas "
            f"{num.fixed(geff, 1)}, an interval needs {num.fixed(MIN_EFFECTIVE, 0)})")


def ranks(comp: Comparison) -> list[Rank]:
    """Rank 1 = best by the point estimate; the interval counts the models Holm-significantly better (for
    rank_low) and worse (for rank_high). Blank when the model cannot be compared with every other one."""
    models = comp.data.models
    M = len(models)
    sig = comp.significant()
    have_p = any(p.p_holm is not None for p in comp.pairs)
    out = []
    for i, m in enumerate(models):
        missing = [p for p in comp.pairs if m in (p.a, p.b) and p.diff is None]
        if missing:
            others = sorted({p.b if p.a == m else p.a for p in missing})
            out.append(Rank(m, None, None, None, f"not comparable with {', '.join(others)}: "
                            + missing[0].reason))
            continue
        rank = 1 + int(np.sum(comp.estimates > comp.estimates[i] + 1e-9))
        if not have_p:
            why = next((p.reason for p in comp.pairs if m in (p.a, p.b) and p.reason), "no pairwise test")
            out.append(Rank(m, rank, None, None, f"no rank interval: {why}"))
            continue
        better = sum(1 for _, loser in sig if loser == m)
        worse = sum(1 for winner, _ in sig if winner == m)
        out.append(Rank(m, rank, 1 + better, M - worse, ""))
    return out


# ---- robustness -----------------------------------------------------------------------------------------


class LeftOut(TypedDict):
    """One refit of a leave-one-out check: what was left out and what changed."""

    left_out: str
    top_model: str | None
    order: list[str] | None
    significant_pairs: list[str] | None
    lost: list[str]
    gained: list[str]
    top_model_changes: bool | None
    reason: str


class RobustnessCheck(TypedDict):
    """Leave one dilemma (or one judge) out: every refit and what they show together."""

    top_model: str | None
    top_model_changes: bool | None
    significant_pairs_change: bool | None
    decisive: list[str]
    runs: list[LeftOut]
    reason: str


class Robustness(TypedDict):
    """`robustness`: both leave-one-out checks and the Holm-significant pairs of the full data."""

    leave_one_dilemma_out: RobustnessCheck
    leave_one_judge_out: RobustnessCheck
    significant_pairs: list[str]


def _pair_names(s: set[tuple[str, str]]) -> list[str]:
    return sorted(f"{a} > {b}" for a, b in s)


def same_size_baseline(full: Comparison, kind: str, n: int) -> set[tuple[str, str]]:
    """The Holm-significant pairs the full data would give with one `kind` fewer and nothing else changed
    (the same estimates, their spread grown to one unit fewer): a pair that the full data find but this
    baseline does not is lost merely through size, and leaving a unit out is not blamed for it. One dilemma
    fewer: the bootstrap part x G/(G-1), one degree of freedom fewer; one judge fewer: the whole variance x
    J/(J-1) (each judge carries about 1/J of the judgments and of the judge x model average)."""
    if n < 2:
        return set()
    ps: list[float | None] = []
    for pr in full.pairs:
        if pr.p is None or pr.se_dilemmas is None or pr.df_dilemmas is None or pr.diff is None:
            ps.append(None)
            continue
        if kind == "dilemma":
            if pr.df_dilemmas <= 1.0:
                ps.append(None)
                continue
            se, df = satterthwaite(pr.se_dilemmas * np.sqrt(n / (n - 1)), pr.df_dilemmas - 1.0, pr.judge_var,
                                   pr.judge_df)
        else:
            se = (pr.se or 0.0) * np.sqrt(n / (n - 1))
            df = pr.df or 1.0
        ps.append(float(2 * special.stdtr(df, -abs(pr.diff) / se)))
    out = set()
    for pr, ph in zip(full.pairs, holm(ps), strict=True):
        if ph is not None and ph < ALPHA and pr.diff is not None:
            out.add((pr.a, pr.b) if pr.diff > 0 else (pr.b, pr.a))
    return out


def robustness(data: Data, full: Comparison, *, replicates: int = DEFAULT_REPLICATES,
               seed: int = DEFAULT_SEED, judges: JudgeSample | None = None) -> Robustness:
    """Leave one dilemma out, and leave one judge out: does the top model or any Holm-significant pair change?
    A pair counts as lost only when the same-size baseline (`same_size_baseline`) keeps it."""
    base_order = full.order()
    base_top = base_order[0] if base_order else None
    base_sig = full.significant()

    def run(kind: str, names: list[str], idx: np.ndarray) -> RobustnessCheck:
        expected = same_size_baseline(full, kind, len(names))
        if base_top is None:
            return {"top_model": None, "top_model_changes": None, "significant_pairs_change": None,
                    "decisive": [], "runs": [],
                    "reason": "the full data do not rank every model (" + next(
                        p.reason for p in full.pairs if p.diff is None) + ")"}
        if len(names) < 2:
            return {"top_model": base_top, "top_model_changes": None, "significant_pairs_change": None,
                    "decisive": [], "runs": [], "reason": f"only one {kind}: nothing to leave out"}
        runs: list[LeftOut] = []
        for k, name in enumerate(names):
            rows = np.flatnonzero(idx != k)
            sub = data.subset(rows)
            missing = sorted(set(data.models) - set(sub.models))
            r: LeftOut = {"left_out": name, "top_model": None, "order": None, "significant_pairs": None,
                                 "lost": [], "gained": [], "top_model_changes": None, "reason": ""}
            if missing:
                r["reason"] = f"without {name}, {', '.join(missing)} has no score"
                runs.append(r)
                continue
            comp = compare_all(sub, replicates=min(replicates, ROBUSTNESS_REPLICATES), seed=seed, with_ranks=False,
                               judges=judges)
            order = comp.order()
            if order is None:
                r["reason"] = "without " + name + ", not every pair is identified (" + next(
                    p.reason for p in comp.pairs if p.diff is None) + ")"
            else:
                r["order"] = order
                r["top_model"] = order[0]
                r["top_model_changes"] = order[0] != base_top
            if any(p.p_holm is not None for p in comp.pairs):
                sig = comp.significant()
                r["significant_pairs"] = _pair_names(sig)
                r["lost"] = _pair_names((base_sig & expected) - sig)  # not lost merely through size
                r["gained"] = _pair_names(sig - base_sig)
            elif not r["reason"]:
                r["reason"] = "without " + name + ", no pair has a test (" + next(
                    (p.reason for p in comp.pairs if p.reason), "no interval") + ")"
            runs.append(r)
        decisive = [r["left_out"] for r in runs if r["top_model_changes"] or r["lost"] or r["gained"]]
        tested = [r for r in runs if r["significant_pairs"] is not None]
        return {"top_model": base_top,
                "top_model_changes": any(bool(r["top_model_changes"]) for r in runs),
                "significant_pairs_change": (any(r["lost"] or r["gained"] for r in tested) if tested else None),
                "decisive": decisive, "runs": runs,
                "reason": "" if tested else f"leaving one {kind} out leaves too little for a test"}

    return {"leave_one_dilemma_out": run("dilemma", data.dilemmas, data.dilemma_idx),
            "leave_one_judge_out": run("judge", data.judges, data.judge_idx),
            "significant_pairs": _pair_names(base_sig)}


def describe_robustness(rob: Robustness) -> list[str]:
    """One plain sentence per check (for the Markdown report and the TUI)."""
    lines = []
    for r, what in ((rob["leave_one_dilemma_out"], "dilemma"), (rob["leave_one_judge_out"], "judge")):
        if r["top_model"] is None or r["top_model_changes"] is None:
            lines.append(f"Leave one {what} out: not checked — {r['reason']}.")
            continue
        top = ("the top model stays " + r["top_model"]) if not r["top_model_changes"] else (
            "the top model changes when leaving out "
            + ", ".join(x["left_out"] for x in r["runs"] if x["top_model_changes"]))
        if r["significant_pairs_change"] is None:
            sig = "significance not re-tested (" + r["reason"] + ")"
        elif r["significant_pairs_change"]:
            sig = "the significant pairs change when leaving out " + ", ".join(
                x["left_out"] for x in r["runs"] if x["lost"] or x["gained"])
        else:
            sig = "no significant pair changes"
        decides = (f"decided by: {', '.join(r['decisive'])}" if r["decisive"]
                   else f"no single {what} decides the ranking")
        lines.append(f"Leave one {what} out: {top}; {sig}; {decides}.")
    return lines
