"""The joint model: every score explained at once by who was scored, who judged, and on what (model skill,
seat, judge severity, same-family preference, dilemma difficulty, criterion level), fitted by least squares
from per-dilemma sufficient statistics so that a bootstrap replicate or a subset costs almost nothing.
`mu + skill[m]` is model m's adjusted mean. The model and how it is computed: docs/STATISTICS.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ebtui.core.analysis.frame import Facts, ScoreFrame
from ebtui.core.analysis.identify import Identification, identify_design
from ebtui.core.records import CRITERIA, Round, Team

SEAT_LABEL: dict[Team, str] = {"a": "A", "b": "B"}
#: an eigenvalue of X'X below this fraction of the largest counts as zero (rank of the design)
RANK_TOL = 1e-10


@dataclass
class Excluded:
    """What did not go into the fit, and why."""

    rounds: int = 0  # rounds given
    without_judgment: int = 0  # failed or incomplete rounds: no judgment to read
    without_scores: int = 0  # a judgment that gave (in this view) no score at all
    scores_expected: int = 0  # 2 teams x 7 criteria per judged round
    scores_missing: int = 0

    def describe(self) -> str:
        return (f"{self.without_judgment + self.without_scores} of {self.rounds} rounds excluded "
                f"({self.without_judgment} without a judgment — failed or incomplete —, {self.without_scores} "
                f"whose judgment gave no score); {self.scores_missing} of {self.scores_expected} scores missing "
                "and left out (never counted as 0)")

    @classmethod
    def of_facts(cls, facts: Facts, effective: bool) -> Excluded:
        """The counts analysis.common.coverage gives, from the columns."""
        s = facts.scores(effective)[facts.judged]
        missing = (s == 0).sum(axis=(1, 2))
        return cls(rounds=len(facts), without_judgment=int((~facts.judged).sum()),
                   without_scores=int((missing == 2 * len(CRITERIA)).sum()),
                   scores_expected=int(2 * len(CRITERIA) * len(s)), scores_missing=int(missing.sum()))

    def as_dict(self) -> dict[str, int]:
        return {"rounds": self.rounds, "rounds_without_judgment": self.without_judgment,
                "rounds_without_scores": self.without_scores, "scores_expected": self.scores_expected,
                "scores_missing": self.scores_missing}


def sum_code(idx: np.ndarray, k: int) -> np.ndarray:
    """Deviation (sum-to-zero) coding of level indices 0..k-1: k-1 columns; the last level is -1 everywhere."""
    out = np.zeros((len(idx), max(k - 1, 0)))
    if k <= 1:
        return out
    for j in range(k - 1):
        out[idx == j, j] = 1.0
    out[idx == k - 1, :] = -1.0
    return out


def sum_matrix(k: int) -> np.ndarray:
    """k x (k-1): level effects from sum-coded coefficients (the last level is minus the sum)."""
    m = np.zeros((k, max(k - 1, 0)))
    if k > 1:
        m[: k - 1] = np.eye(k - 1)
        m[k - 1] = -1.0
    return m


def effects(coefs: np.ndarray) -> np.ndarray:
    """All k level effects from the k-1 sum-coded coefficients (the last is minus the sum of the others)."""
    return np.append(coefs, -np.sum(coefs))


def least_squares(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """OLS coefficients of a row-level design through the normal equations (singular: minimum norm)."""
    return solve_normal(X.T @ X, X.T @ y)


def solve_normal(xtx: np.ndarray, xty: np.ndarray) -> np.ndarray:
    try:
        params: np.ndarray = np.linalg.solve(xtx, xty)
    except np.linalg.LinAlgError:
        params = np.linalg.lstsq(xtx, xty, rcond=None)[0]
    return params


def _rank(xtx: np.ndarray) -> int:
    if xtx.size == 0:
        return 0
    ev = np.linalg.eigvalsh(xtx)
    top = float(ev.max()) if ev.size else 0.0
    return int((ev > top * RANK_TOL).sum()) if top > 0 else 0


@dataclass
class ClusterStats:
    """Per dilemma (cluster) g: the one-hot cross products A[g] = Z_g'Z_g, b[g] = Z_g'y_g, s[g] = Z_g'1,
    n[g] rows, t[g] = sum y, yy[g] = sum y^2; Z columns: models, judges, criteria, seat, family."""

    A: np.ndarray  # [G, q, q]
    b: np.ndarray  # [G, q]
    s: np.ndarray  # [G, q]
    n: np.ndarray  # [G]
    t: np.ndarray  # [G]
    yy: np.ndarray  # [G]
    M: int
    J: int
    C: int

    @property
    def q(self) -> int:
        return self.M + self.J + self.C + 2

    @classmethod
    def of(cls, f: ScoreFrame) -> ClusterStats:
        G, M, J, C = len(f.dilemmas), len(f.models), len(f.judges), len(f.criteria)
        q = M + J + C + 2
        g = f.dilemma_idx
        cats = ((f.model_idx, M, 0), (f.judge_idx, J, M), (f.crit_idx, C, M + J))
        nums = ((f.seat, q - 2), (f.family, q - 1))
        A = np.zeros((G, q, q))
        b = np.zeros((G, q))
        s = np.zeros((G, q))
        for a_i, (ia, ka, oa) in enumerate(cats):
            base = g * ka + ia
            cnt = np.bincount(base, minlength=G * ka).reshape(G, ka).astype(float)
            s[:, oa:oa + ka] = cnt
            b[:, oa:oa + ka] = np.bincount(base, weights=f.y, minlength=G * ka).reshape(G, ka)
            for ib, kb, ob in cats[a_i:]:
                blk = np.bincount(base * kb + ib, minlength=G * ka * kb).reshape(G, ka, kb).astype(float)
                A[:, oa:oa + ka, ob:ob + kb] = blk
                A[:, ob:ob + kb, oa:oa + ka] = blk.transpose(0, 2, 1)
            for w, ow in nums:
                col = np.bincount(base, weights=w, minlength=G * ka).reshape(G, ka)
                A[:, oa:oa + ka, ow] = col
                A[:, ow, oa:oa + ka] = col
        for i1, (w1, o1) in enumerate(nums):
            s[:, o1] = np.bincount(g, weights=w1, minlength=G)
            b[:, o1] = np.bincount(g, weights=w1 * f.y, minlength=G)
            for w2, o2 in nums[i1:]:
                v = np.bincount(g, weights=w1 * w2, minlength=G)
                A[:, o1, o2] = v
                A[:, o2, o1] = v
        n = np.bincount(g, minlength=G).astype(float)
        return cls(A, b, s, n, np.bincount(g, weights=f.y, minlength=G), np.bincount(g, weights=f.y * f.y,
                                                                                      minlength=G), M, J, C)

    def presence(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For cluster multiplicities [B, G]: which models, judges and criteria each replicate holds."""
        occ = counts @ self.s  # [B, q]
        M, J, C = self.M, self.J, self.C
        return occ[:, :M] > 0, occ[:, M:M + J] > 0, occ[:, M + J:M + J + C] > 0


@dataclass
class Design:
    """The fit's data in numbers: the long table (frame), its levels, which optional terms the fit has, notes."""

    frame: ScoreFrame
    has_seat: bool = False
    has_family: bool = False
    notes: list[str] = field(default_factory=list)
    _stats: ClusterStats | None = field(default=None, repr=False)

    # the level names every caller asks for (the columns themselves: `frame`)
    @property
    def models(self) -> list[str]:
        return self.frame.models

    @property
    def dilemmas(self) -> list[str]:
        return self.frame.dilemmas

    @property
    def stats(self) -> ClusterStats:
        if self._stats is None:
            self._stats = ClusterStats.of(self.frame)
        return self._stats

    #: what the design identifies (ebtui.core.analysis.identify.Identification), set by `fit`
    identification: Identification | None = field(default=None, repr=False)

    @classmethod
    def build(cls, frame: ScoreFrame) -> Design:
        d = cls(frame)
        d.has_seat = len(set(frame.seat.tolist())) == 2
        fam_sum = float(frame.family.sum())
        d.has_family = 0 < fam_sum < len(frame.family)
        if not d.has_family:
            d.notes.append("same-family preference not estimable: "
                           + ("no team was scored by a judge of its own family" if fam_sum == 0
                              else "every team was scored by a judge of its own family"))
        return d

    def fixed_part(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The row-level design without the dilemma block (for checks against a plain fit): intercept, model,
        seat, judge, family, criterion, in the parameter order `Estimates.params` uses."""
        parts = [np.ones((len(self.frame.y[rows]), 1)), sum_code(self.frame.model_idx[rows], len(self.models))]
        if self.has_seat:
            parts.append(self.frame.seat[rows][:, None])
        parts.append(sum_code(self.frame.judge_idx[rows], len(self.frame.judges)))
        if self.has_family:
            parts.append(self.frame.family[rows][:, None])
        parts.append(sum_code(self.frame.crit_idx[rows], len(self.frame.criteria)))
        return np.hstack(parts)

    def row_design(self) -> np.ndarray:
        """The whole row-level design X (fixed part, then the sum-coded dilemmas)."""
        return np.hstack([self.fixed_part(), sum_code(self.frame.dilemma_idx, len(self.dilemmas))])

    # ---- the fit from sufficient statistics ---------------------------------------------------------

    def mapping(self, models: np.ndarray, judges: np.ndarray, crits: np.ndarray, positions: int,
                family: bool) -> np.ndarray:
        """T: sum-coded parameters -> one-hot coefficients ([q + positions] x p) over the present levels."""
        st = self.stats
        q = st.q
        pm, pj, pc = np.flatnonzero(models), np.flatnonzero(judges), np.flatnonzero(crits)
        p = 1 + max(len(pm) - 1, 0) + (1 if self.has_seat else 0) + max(len(pj) - 1, 0) + (1 if family else 0) \
            + max(len(pc) - 1, 0) + max(positions - 1, 0)
        T = np.zeros((q + positions, p))
        T[pm, 0] = 1.0  # the intercept: every row has exactly one model indicator
        k = 1
        S = sum_matrix(len(pm))
        T[np.ix_(pm, np.arange(k, k + S.shape[1]))] = S
        k += S.shape[1]
        if self.has_seat:
            T[q - 2, k] = 1.0
            k += 1
        S = sum_matrix(len(pj))
        T[np.ix_(st.M + pj, np.arange(k, k + S.shape[1]))] = S
        k += S.shape[1]
        if family:
            T[q - 1, k] = 1.0
            k += 1
        S = sum_matrix(len(pc))
        T[np.ix_(st.M + st.J + pc, np.arange(k, k + S.shape[1]))] = S
        k += S.shape[1]
        S = sum_matrix(positions)
        T[q:, k:k + S.shape[1]] = S
        return T

    def normal_equations(self, picks: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """X'X and X'y of the design over the clusters `picks` (each one position with its own difficulty)."""
        st = self.stats
        P = len(picks)
        q = st.q
        counts = np.bincount(picks, minlength=len(st.n)).astype(float)
        W = np.zeros((q + P, q + P))
        W[:q, :q] = np.tensordot(counts, st.A, axes=1)
        W[:q, q:] = st.s[picks].T
        W[q:, :q] = st.s[picks]
        W[q:, q:] = np.diag(st.n[picks])
        w = np.concatenate([counts @ st.b, st.t[picks]])
        return T.T @ W @ T, T.T @ w


@dataclass
class Estimates:
    """The quantities the report shows, from one fit."""

    adjusted: np.ndarray  # per model: mu + skill (NaN: the model is absent from this fit)
    offsets: np.ndarray  # per judge: severity (sums to 0 over the judges present)
    family_pref: float  # nan when not estimable
    seat_gap: float  # Team A minus Team B, other things equal (nan without both seats)
    difficulty: np.ndarray  # per dilemma (of the fitted sample)
    params: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    def vector(self) -> np.ndarray:
        """The bootstrapped quantities in a fixed order: models, judges, family, seat gap."""
        return np.concatenate([self.adjusted, self.offsets, [self.family_pref, self.seat_gap]])


def read_estimates(d: Design, params: np.ndarray, models: np.ndarray, judges: np.ndarray, crits: np.ndarray,
                   positions: int, family: bool) -> Estimates:
    """The named quantities from the sum-coded parameters (levels absent from the fit: NaN)."""
    pm, pj = np.flatnonzero(models), np.flatnonzero(judges)
    M, J = len(d.models), len(d.frame.judges)
    k = 1
    adjusted = np.full(M, np.nan)
    adjusted[pm] = params[0] + (sum_matrix(len(pm)) @ params[k:k + len(pm) - 1] if len(pm) > 1 else 0.0)
    k += max(len(pm) - 1, 0)
    seat_gap = float("nan")
    if d.has_seat:
        seat_gap = 2.0 * float(params[k])
        k += 1
    offsets = np.full(J, np.nan)
    offsets[pj] = sum_matrix(len(pj)) @ params[k:k + len(pj) - 1] if len(pj) > 1 else 0.0
    k += max(len(pj) - 1, 0)
    fam = float("nan")
    if family:
        fam = float(params[k])
        k += 1
    k += max(int(crits.sum()) - 1, 0)
    difficulty = sum_matrix(positions) @ params[k:k + positions - 1] if positions > 1 else np.zeros(1)
    return Estimates(adjusted, offsets, fam, seat_gap, difficulty, params)


def fit_clusters(d: Design, picks: np.ndarray, *, family: bool | None = None) -> Estimates:
    """One least-squares fit over the clusters `picks` (a cluster drawn twice enters twice, with its own
    difficulty term); levels absent from them are NaN. `family`: fit the same-family term (default: the
    design's, dropped when the clusters hold no contrast for it)."""
    st = d.stats
    counts = np.bincount(picks, minlength=len(st.n)).astype(float)[None, :]
    models, judges, crits = (x[0] for x in st.presence(counts))
    fam = d.has_family if family is None else family
    if fam:
        fam_sum, n = float(counts[0] @ st.s[:, -1]), float(counts[0] @ st.n)
        fam = 0 < fam_sum < n
    T = d.mapping(models, judges, crits, len(picks), fam)
    xtx, xty = d.normal_equations(picks, T)
    return read_estimates(d, solve_normal(xtx, xty), models, judges, crits, len(picks), fam)


@dataclass
class JointFit:
    design: Design
    estimates: Estimates
    excluded: Excluded
    full_rank: bool
    residual_sd: float

    def predict_gap(self) -> float:
        """What the fit expects Team A minus Team B to be when the same model plays both seats."""
        return self.estimates.seat_gap if self.design.has_seat else 0.0

    def fitted(self) -> np.ndarray:
        """The fitted value of every row of the long table."""
        d, e = self.design, self.estimates
        p = e.params
        C = len(d.frame.criteria)
        crit = sum_matrix(C) @ p[len(p) - (len(d.dilemmas) - 1) - (C - 1): len(p) - (len(d.dilemmas) - 1)] \
            if C > 1 else np.zeros(1)
        out = e.adjusted[d.frame.model_idx] + e.offsets[d.frame.judge_idx] + crit[d.frame.crit_idx] + e.difficulty[d.frame.dilemma_idx]
        if d.has_seat:
            out = out + d.frame.seat * e.seat_gap / 2.0
        if d.has_family:
            out = out + d.frame.family * e.family_pref
        return np.asarray(out)

    def refit(self, *, dilemmas: Sequence[str] | None = None, judges: Sequence[str] | None = None) -> Estimates:
        """The same model over a subset — only these dilemmas and/or only these judges (e.g. leave one out) —
        with its estimates aligned to this fit's levels (a level the subset lacks: NaN)."""
        d = self.design
        keep_d = np.ones(len(d.dilemmas), dtype=bool) if dilemmas is None else np.isin(d.dilemmas, list(dilemmas))
        if judges is None:
            return fit_clusters(d, np.flatnonzero(keep_d))
        rows = keep_d[d.frame.dilemma_idx] & np.isin(np.asarray(d.frame.judges), list(judges))[d.frame.judge_idx]
        sub = Design.build(d.frame.take(rows))
        sub.has_seat, sub.has_family = sub.has_seat and d.has_seat, sub.has_family and d.has_family
        est = fit_clusters(sub, np.arange(len(sub.dilemmas)))
        adjusted = np.full(len(d.models), np.nan)
        offsets = np.full(len(d.frame.judges), np.nan)
        adjusted[[d.models.index(m) for m in sub.models]] = est.adjusted
        offsets[[d.frame.judges.index(j) for j in sub.frame.judges]] = est.offsets
        return Estimates(adjusted, offsets, est.family_pref, est.seat_gap, est.difficulty, est.params)


def _frame(data: Sequence[Round] | Facts | ScoreFrame, family_of: Callable[[str], str],
           effective: bool) -> tuple[ScoreFrame, Excluded]:
    if isinstance(data, ScoreFrame):
        return data, Excluded(scores_expected=len(data))
    facts = data if isinstance(data, Facts) else Facts.from_rounds(data)
    return ScoreFrame.build(facts, family_of, effective=effective), Excluded.of_facts(facts, effective)


def fit(data: Sequence[Round] | Facts | ScoreFrame, family_of: Callable[[str], str], *,
        effective: bool = False) -> JointFit | None:
    """The joint fit over the scores (rounds, their facts, or a long table); None: no score at all."""
    frame, excluded = _frame(data, family_of, effective)
    if not len(frame):
        return None
    d = Design.build(frame)
    allm, allj, allc = (np.ones(len(x), dtype=bool) for x in (d.models, d.frame.judges, d.frame.criteria))
    G = len(d.dilemmas)
    picks = np.arange(G)

    def equations() -> tuple[np.ndarray, np.ndarray, bool]:
        T = d.mapping(allm, allj, allc, G, d.has_family)
        xtx, xty = d.normal_equations(picks, T)
        return xtx, xty, _rank(xtx) == xtx.shape[0]

    # a term is dropped only when its own coefficient is not identified, and the note says why
    # (ebtui.core.analysis.identify); a disconnected design keeps its terms and blanks what it cannot identify
    ident = identify_design(d.frame, has_seat=d.has_seat, has_family=d.has_family)
    d.has_seat, d.has_family = ident.has_seat, ident.has_family
    d.notes.extend(ident.notes)
    d.identification = ident
    xtx, xty, full_rank = equations()
    if not full_rank and ident.connected:
        d.notes.append("the design is not of full rank: the contrasts it cannot identify are left blank")
    params = solve_normal(xtx, xty) if full_rank else np.linalg.lstsq(xtx, xty, rcond=None)[0]
    est = read_estimates(d, params, allm, allj, allc, G, d.has_family)
    jf = JointFit(d, est, excluded, full_rank, 0.0)
    resid = d.frame.y - jf.fitted()
    dof = max(len(d.frame.y) - xtx.shape[0], 1)
    jf.residual_sd = float(np.sqrt(resid @ resid / dof))
    return jf

