"""Where the score variation comes from: variance components of a team's score in one judgment (dilemma,
model x dilemma, exchange, judge, judge x model, residual), estimated by Henderson's method III, with
chi-square intervals from each component's own reduction in sums of squares (a dilemma
bootstrap where that has under 2 df); `default_components()` when there are no scores.
The model, the estimator and its rules: docs/STATISTICS.md, "Variance components, precision and planning".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

from ebtui.core.analysis.variance_fits import fitted, indicator_gram
from ebtui.core.facts import exchange_key
from ebtui.core.facts import scores as scores_in_view
from ebtui.core.records import Round, Team
from ebtui.core.views import numbers as num

if TYPE_CHECKING:
    from ebtui.core.analysis.frame import Facts

COMPONENTS: tuple[str, ...] = ("dilemma", "model_dilemma", "exchange", "judge", "judge_model", "residual")
DEFAULT_VC_REPLICATES = 100
DEFAULT_VC_SEED = 20261125
#: components whose levels a dilemma resample redraws (the judges are the same in every resample, so it says
#: nothing of how far the judge and judge x model variances could be off)
RESAMPLED = ("dilemma", "model_dilemma", "exchange", "residual")

#: the documented defaults (score-point variances of a team's mean-of-criteria score in one judgment), used
#: when there is no data. Chosen from this project's simulated and imported tournaments' typical magnitude on
#: the 1-10 rubric: judges differ by about half a point, dilemmas about as much, a model's dilemma-to-dilemma
#: swing about 0.35 point, one exchange's answers about 0.35, one judgment's noise about half a point.
DEFAULTS: dict[str, float] = {
    "dilemma": 0.25,  # sd 0.50
    "model_dilemma": 0.12,  # sd 0.35
    "exchange": 0.12,  # sd 0.35
    "judge": 0.25,  # sd 0.50
    "judge_model": 0.04,  # sd 0.20
    "residual": 0.25,  # sd 0.50
}


@dataclass(frozen=True)
class Row:
    """One team's score in one judgment."""

    dilemma: str
    model: str
    judge: str
    exchange: str  # exchange id + seat: the team's answers in that exchange
    seat: Team
    same_family: bool
    score: float


def judgment_rows(rounds: Sequence[Round], family_of: Callable[[str], str], *,
                  effective: bool = False) -> list[Row]:
    """Per judged round and seat: the mean of the criteria the judge gave (a seat with none is left out)."""
    out: list[Row] = []
    for r in rounds:
        if r.judgment is None:
            continue
        seats: tuple[tuple[Team, str], ...] = (("a", r.team_a_model), ("b", r.team_b_model))
        for team, model in seats:
            s = scores_in_view(r.judgment, team, effective=effective)
            vals = [float(v) for v in s.as_dict().values() if v is not None]
            if not vals:
                continue
            out.append(Row(r.dilemma_id, model, r.judge_model, f"{exchange_key(r)}|{team}", team,
                           family_of(model) == family_of(r.judge_model), float(np.mean(vals))))
    return out


class ComponentJson(TypedDict):
    """A component as `VarianceComponents.json` gives it (`share` added there)."""

    component: str
    variance: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    note: str
    share: NotRequired[float | None]


class BootstrapJson(TypedDict):
    seed: int
    replicates: int


class ComponentsJson(TypedDict):
    """`VarianceComponents.json`: the estimates and how they were made (report --json, plan)."""

    source: str
    unit: str
    n_scores: int
    dilemmas: int
    method: str
    bootstrap: BootstrapJson | None
    components: list[ComponentJson]
    notes: list[str]


@dataclass
class Component:
    name: str
    variance: float | None  # None: not separable in this data
    low: float | None = None
    high: float | None = None
    note: str = ""
    raw: float | None = None  # the moment estimate before a negative one is shown as 0
    #: degrees of freedom of the estimate itself (Satterthwaite: 2 E[v]^2 / var(v), from its reduction's
    #: chi-square); None where there is no reduction with 2+ df. What an interval that adds this component's
    #: part to a bootstrap SE combines its degrees of freedom with (ebtui.core.analysis.pairwise.JudgeSample)
    df: float | None = None

    @property
    def sd(self) -> float | None:
        return None if self.variance is None else float(np.sqrt(self.variance))

    def as_dict(self) -> ComponentJson:
        return {"component": self.name, "variance": self.variance, "sd": self.sd, "ci_low": self.low,
                "ci_high": self.high, "note": self.note}


@dataclass
class VarianceComponents:
    components: dict[str, Component]
    source: str  # "estimated" or "defaults"
    n_rows: int = 0
    dilemmas: int = 0
    notes: list[str] = field(default_factory=list)
    replicates: int = 0
    seed: int = DEFAULT_VC_SEED

    def value(self, name: str) -> float:
        """The variance to plan with: the estimate, else 0 for a component the data cannot separate (its
        variance is then inside another one: exchange inside residual, judge_model inside residual)."""
        c = self.components.get(name)
        return float(c.variance) if c is not None and c.variance is not None else 0.0

    def values(self) -> dict[str, float]:
        return {k: self.value(k) for k in COMPONENTS}

    def json(self) -> ComponentsJson:
        total = sum(self.values().values())
        rows: list[ComponentJson] = []
        for k in COMPONENTS:
            d = self.components[k].as_dict()
            d["share"] = (self.value(k) / total) if total > 0 and d["variance"] is not None else None
            rows.append(d)
        return {"source": self.source, "unit": "a team's mean-of-criteria score in one judgment",
                "n_scores": self.n_rows, "dilemmas": self.dilemmas,
                "method": "Henderson method III (fitting constants); 95% chi-square intervals from each "
                          "component's reduction in sums of squares" + ("; percentile cluster bootstrap over "
                          "dilemmas where a reduction has under 2 df" if self.replicates else "")
                if self.source == "estimated" else "documented defaults (no data)",
                "bootstrap": {"seed": self.seed, "replicates": self.replicates} if self.replicates else None,
                "components": rows, "notes": list(self.notes)}


def default_components(reason: str = "no scores to estimate from") -> VarianceComponents:
    comps = {k: Component(k, v, note="default") for k, v in DEFAULTS.items()}
    return VarianceComponents(comps, "defaults",
                              notes=[f"Documented defaults, not estimates: {reason} (docs/STATISTICS.md)."])


# ---- the estimator --------------------------------------------------------------------------------------


def _codes(values: Sequence[str]) -> tuple[np.ndarray, int]:
    names = sorted(set(values))
    pos = {n: i for i, n in enumerate(names)}
    return np.array([pos[v] for v in values], dtype=int), len(names)


@dataclass
class _Data:
    y: np.ndarray
    fixed: np.ndarray  # intercept, model dummies, seat, family
    codes: dict[str, tuple[np.ndarray, int]]  # factor -> (codes, levels)


def _prepare(rows: Sequence[Row], dil_of_row: Sequence[str] | None = None) -> _Data:
    dil = list(dil_of_row) if dil_of_row is not None else [r.dilemma for r in rows]
    y = np.array([r.score for r in rows])
    mi, M = _codes([r.model for r in rows])
    cols = [np.ones(len(rows))]
    cols += [(mi == k).astype(float) for k in range(1, M)]
    seat = np.array([1.0 if r.seat == "a" else -1.0 for r in rows])
    if len(set(seat.tolist())) == 2:
        cols.append(seat)
    fam = np.array([1.0 if r.same_family else 0.0 for r in rows])
    if 0 < fam.sum() < len(fam):
        cols.append(fam)
    codes = {
        "dilemma": _codes(dil),
        "model_dilemma": _codes([f"{r.model}\x1f{d}" for r, d in zip(rows, dil, strict=True)]),
        "exchange": _codes([f"{r.exchange}\x1f{d}" for r, d in zip(rows, dil, strict=True)]),
        "judge": _codes([r.judge for r in rows]),
        "judge_model": _codes([f"{r.judge}\x1f{r.model}" for r in rows]),
    }
    return _Data(y, np.column_stack(cols), codes)


def _group_sums(codes: np.ndarray, k: int, Q: np.ndarray) -> np.ndarray:
    """Z'Q for the indicator Z of `codes`: the sums of Q's rows per level."""
    if Q.shape[1] == 0:
        return np.zeros((k, 0))
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
    out = np.zeros((k, Q.shape[1]))
    out[sc[starts]] = np.add.reduceat(Q[order], starts, axis=0)
    return out


def _pair_sq_over_group(g: np.ndarray, codes: np.ndarray) -> float:
    """sum over groups g and levels l of n_gl^2 / n_g."""
    n_g = np.bincount(g).astype(float)
    key = g.astype(np.int64) * (int(codes.max()) + 1) + codes
    uniq, n_gl = np.unique(key, return_counts=True)
    grp = uniq // (int(codes.max()) + 1)
    return float(np.sum(n_gl.astype(float) ** 2 / n_g[grp]))


def _basis(X: np.ndarray, gram: np.ndarray | None = None) -> np.ndarray:
    """An orthonormal basis of X's column space (from the eigen-decomposition of X'X, or `gram` if given)."""
    if X.shape[1] == 0:
        return np.zeros((X.shape[0], 0))
    w, V = np.linalg.eigh(X.T @ X if gram is None else gram)
    top = float(w[-1]) if w.size else 0.0
    keep = w > max(top * 1e-10, 1e-12)
    out: np.ndarray = (X @ V[:, keep]) / np.sqrt(w[keep])
    return out


def _demean(X: np.ndarray, g: np.ndarray, k: int) -> np.ndarray:
    """X minus its mean within the groups g (the projection off the group indicators)."""
    counts = np.bincount(g, minlength=k).astype(float)
    if X.ndim == 1:
        sums = np.bincount(g, weights=X, minlength=k)
        out: np.ndarray = X - (sums / counts)[g]
        return out
    means = np.zeros((k, X.shape[1]))
    np.add.at(means, g, X)
    means /= counts[:, None]
    res: np.ndarray = X - means[g]
    return res


def _dummies(codes: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(codes), k))
    out[np.arange(len(codes)), codes] = 1.0
    return out


def _fit_terms(d: _Data, included: Sequence[str], absorb_exchange: bool,
               random: Sequence[str]) -> tuple[float, int, dict[str, float]]:
    """One fit: its residual sum of squares, rank, and for each random factor not in the fit the
    coefficient tr(Z'(I-P)Z) of its variance in E[SSE]."""
    n = len(d.y)
    if absorb_exchange:  # the exchange indicators absorb the fixed part, dilemma and model x dilemma
        g, kg = d.codes["exchange"]
        W = [_dummies(*d.codes[f]) for f in included if f not in ("exchange", "dilemma", "model_dilemma")]
        if d.fixed.shape[1] > 1:
            W.append(d.fixed[:, 1:])  # seat/model are constant within a team-exchange: demeaned to 0
        Wt = _demean(np.hstack(W), g, kg) if W else np.zeros((n, 0))
        Q = _basis(Wt)
        yt = _demean(d.y, g, kg)
        sse = float(yt @ yt - np.sum((Q.T @ yt) ** 2))
        rank = kg + Q.shape[1]
        coef: dict[str, float] = {}
        for f in random:
            if f in included or f in ("dilemma", "model_dilemma", "exchange"):
                continue
            codes, k = d.codes[f]
            within = n - _pair_sq_over_group(g, codes)
            coef[f] = within - float(np.sum(_group_sums(codes, k, Q) ** 2))
        return sse, rank, coef
    X = np.hstack([d.fixed, *[_dummies(*d.codes[f]) for f in included]])
    Q = _basis(X, indicator_gram(d.fixed, [d.codes[f] for f in included]))
    sse = float(d.y @ d.y - np.sum((Q.T @ d.y) ** 2))
    coef = {}
    for f in random:
        if f in included:
            continue
        codes, k = d.codes[f]
        coef[f] = n - float(np.sum(_group_sums(codes, k, Q) ** 2))
    return sse, Q.shape[1], coef


def _separable(rows: Sequence[Row]) -> tuple[list[str], dict[str, str]]:
    """Which components this data can separate, and why the others are not."""
    why: dict[str, str] = {}
    dil = {r.dilemma for r in rows}
    models = {r.model for r in rows}
    judges = {r.judge for r in rows}
    per_ex: dict[str, int] = {}
    for r in rows:
        per_ex[r.exchange] = per_ex.get(r.exchange, 0) + 1
    if len(dil) < 2:
        why["dilemma"] = "one dilemma"
        why["model_dilemma"] = "one dilemma"
    if max(per_ex.values(), default=0) < 2:
        why["exchange"] = ("no exchange was scored by two judges (or judged twice): inside the residual")
    if len(judges) < 2:
        why["judge"] = "one judge"
        why["judge_model"] = "one judge"
    elif len(models) < 2:
        why["judge_model"] = "one model"
    return [c for c in COMPONENTS[:-1] if c not in why], why


@dataclass
class _Equations:
    """Henderson III's moment equations: E[s] = A @ (components, residual); `drop[c]`: the rows of the fit with c
    and of the fit without it, and the rank (degrees of freedom) c's reduction has."""

    unknowns: list[str]
    A: np.ndarray
    s: np.ndarray
    drop: dict[str, tuple[int, int, int]]


def _equations(d: _Data, comps: Sequence[str]) -> _Equations:
    """The fits leave out, in turn, exchange; then model x dilemma; then dilemma (nested chain); judge x model;
    then judge (crossed chain)."""
    n = len(d.y)
    nested = [c for c in ("exchange", "model_dilemma", "dilemma") if c in comps]
    crossed = [c for c in ("judge_model", "judge") if c in comps]
    has_ex = "exchange" in comps
    full = [*nested, *crossed]
    fits: list[tuple[list[str], bool]] = [(full, has_ex)]
    for i in range(len(nested)):
        fits.append(([*nested[i + 1:], *crossed], False))
    for i in range(len(crossed)):
        fits.append(([*nested, *crossed[i + 1:]], has_ex))
    unknowns = [*comps, "residual"]
    A = np.zeros((len(fits), len(unknowns)))
    s = np.zeros(len(fits))
    ranks: list[int] = []
    for row, (sse, rank, coef) in enumerate(fitted(lambda f: _fit_terms(d, *f, comps), fits, d.fixed, d.codes)):
        s[row] = sse
        ranks.append(rank)
        for f, value in coef.items():
            A[row, unknowns.index(f)] = value
        A[row, -1] = n - rank
    drop: dict[str, tuple[int, int, int]] = {}
    for i, name in enumerate(nested):
        drop[name] = (i, i + 1, ranks[i] - ranks[i + 1])
    for i, name in enumerate(crossed):
        with_c = 0 if i == 0 else len(nested) + i
        drop[name] = (with_c, len(nested) + 1 + i, ranks[with_c] - ranks[len(nested) + 1 + i])
    return _Equations(unknowns, A, s, drop)


def _solve(eq: _Equations) -> dict[str, float] | None:
    A, s = eq.A, eq.s
    if A[0, -1] <= 0 or np.linalg.matrix_rank(A) < len(eq.unknowns):
        return None
    sol = np.linalg.solve(A, s) if A.shape[0] == A.shape[1] else np.linalg.lstsq(A, s, rcond=None)[0]
    return dict(zip(eq.unknowns, (float(v) for v in sol), strict=True))


def _estimate(d: _Data, comps: Sequence[str]) -> dict[str, float] | None:
    """Henderson III's raw (possibly negative) estimates, or None when the equations are singular."""
    return _solve(_equations(d, comps))


def _reduction(eq: _Equations, name: str) -> tuple[float, np.ndarray, int] | None:
    """(Q, E[Q]'s coefficients on the unknowns, df) of a component's own reduction in sums of squares."""
    if name == "residual":  # the full fit's own residual sum of squares
        return float(eq.s[0]), eq.A[0], int(round(float(eq.A[0, -1])))
    if name in eq.drop:
        with_c, without, df = eq.drop[name]
        return float(eq.s[without] - eq.s[with_c]), eq.A[without] - eq.A[with_c], df
    return None


def estimate_df(eq: _Equations, est: Mapping[str, float], name: str) -> float | None:
    """Degrees of freedom of a component's moment estimate v = (Q - rest) / k: Q / E[Q] is about
    chi-square(df) / df, so var(v) is about 2 E[Q]^2 / (df k^2) and 2 v^2 / var(v) = df (k v / E[Q])^2
    (E[Q] taken at the estimates). None without a reduction of 2+ df; 0 for an estimate of 0."""
    red = _reduction(eq, name)
    if red is None or red[2] < 2:
        return None
    _q, coef, df = red
    k = float(coef[eq.unknowns.index(name)])
    expected = sum(float(coef[i]) * max(est[u], 0.0) for i, u in enumerate(eq.unknowns))
    if not k > 0 or not expected > 0:
        return None
    return float(df * (k * max(est[name], 0.0) / expected) ** 2)


def reduction_interval(eq: _Equations, est: Mapping[str, float], name: str,
                       level: float = 0.95) -> tuple[float, float, int] | None:
    """A component's interval from its own reduction in sum of squares Q (the fit with it minus the fit
    without it, rank df): Q / E[Q] is about chi-square(df) / df, and E[Q] = k var + the other components' part
    (taken at their estimates), so var lies in [(df Q / q_hi - rest) / k, (df Q / q_lo - rest) / k], clipped at 0.
    The lower end reaches 0 when the data cannot tell the component from nothing (a component at 0 is
    covered). None when the reduction has fewer than 2 df."""
    if name == "residual":  # the full fit's own residual sum of squares
        q, coef, df = float(eq.s[0]), eq.A[0], int(round(float(eq.A[0, -1])))
    elif name in eq.drop:
        with_c, without, df = eq.drop[name]
        q, coef = float(eq.s[without] - eq.s[with_c]), eq.A[without] - eq.A[with_c]
    else:
        return None
    if df < 2:
        return None
    from scipy.special import chdtri  # chi-square quantiles (upper tail) without scipy.stats

    k = float(coef[eq.unknowns.index(name)])
    if not k > 0:
        return None
    rest = sum(float(coef[i]) * max(est[u], 0.0) for i, u in enumerate(eq.unknowns) if u != name)
    a = (1 - level) / 2
    lo = (df * max(q, 0.0) / float(chdtri(df, a)) - rest) / k
    hi = (df * max(q, 0.0) / float(chdtri(df, 1 - a)) - rest) / k
    return max(lo, 0.0), max(hi, 0.0), df


def estimate_components(rows: Sequence[Row], *, replicates: int = DEFAULT_VC_REPLICATES,
                        seed: int = DEFAULT_VC_SEED) -> VarianceComponents:
    """The components with 95% intervals: chi-square from each component's reduction in sums of squares, the
    dilemma bootstrap (`replicates`) only for a component whose reduction has under 2 df and whose levels a
    dilemma resample redraws (else blank, saying why); blank below 3 dilemmas. (Kept beside a store's analysis
    columns by ebtui.core.analysis.variance_cache.)"""
    if not rows:
        return default_components()
    comps, why = _separable(rows)
    eq = _equations(_prepare(rows), comps)
    est = _solve(eq)
    if est is None:
        return default_components("the scores cannot separate the components (too few scores per factor)")
    G = len({r.dilemma for r in rows})
    notes: list[str] = []
    reduced = {k: reduction_interval(eq, est, k) for k in est} if G >= 3 else {}
    boot = [k for k in est if reduced.get(k) is None and k in RESAMPLED] if G >= 3 and replicates > 0 else []
    draws = _bootstrap(rows, comps, replicates, seed) if boot else {k: [] for k in est}
    if G < 3:
        notes.append("intervals blank: fewer than 3 dilemmas")
    out: dict[str, Component] = {}
    for k in COMPONENTS:
        if k not in est:
            out[k] = Component(k, None, note=f"not separable: {why.get(k, '')}")
            continue
        v = est[k]
        note = ""
        if v < 0:
            note = f"estimate {num.fixed(v, 3)} < 0, reported as 0"
            v = 0.0
        lo = hi = None
        red = reduced.get(k)
        if red is not None:
            # the chi-square interval of the component's own reduction (the other components' part taken off;
            # its lower end reaches 0 when the data cannot rule 0 out). The percentile dilemma bootstrap it
            # replaced was too narrow: it held a planted dilemma variance (6 dilemmas) or model x dilemma
            # variance far less often than 95% (docs/STATISTICS.md)
            lo, hi, df = red
            note = note or f"chi-square interval, {df} df"
        elif len(draws[k]) >= 20:
            lo, hi = (float(x) for x in np.percentile(draws[k], [2.5, 97.5]))
            if k == "dilemma" and v == 0:
                note = note or "estimate 0: upper end from the dilemma resamples"
        else:  # blank: say why, beside a note on the estimate
            blank = ("interval blank: fewer than 3 dilemmas" if G < 3 else
                    "interval blank: too few usable dilemma resamples" if k in RESAMPLED else
                    "interval blank: its reduction has under 2 df (too few judges), and dilemma resamples keep "
                    "the same judges")
            note = f"{note}; {blank}" if note else blank
        out[k] = Component(k, v, lo, hi, note, est[k], estimate_df(eq, est, k) if G >= 3 else None)
    if "exchange" not in est:
        notes.append("exchange (answer) variance not separable: every exchange was scored once, so it is counted "
                     "in the residual; a plan will then overrate what extra judges buy.")
    return VarianceComponents(out, "estimated", len(rows), G, notes, replicates if boot else 0, seed)


def planned_reduction(rows: Sequence[Row], components: Mapping[str, float], name: str, *,
                      scale: float = 1.0) -> tuple[int, float, float] | None:
    """On a planned design (the rows' scores are not used), component `name`'s reduction in sums of squares:
    (df, k, rest) with E[Q] = k var + rest at the given components. `scale`: the rows are the first dilemmas of
    a design `scale` times as long (k grows with the dilemmas, the rest stays with its df), so a long plan is
    not refitted at full size. None when the component is not separable or its reduction has under 2 df."""
    comps, eq = _planned_equations(tuple(rows))
    if eq is None or name not in comps:
        return None
    red = _reduction(eq, name)
    if red is None or red[2] < 2:
        return None
    _q, coef, df = red
    k = float(coef[eq.unknowns.index(name)])
    seen = seen_components(components, comps)
    rest = sum(float(coef[i]) * seen[u] for i, u in enumerate(eq.unknowns) if u != name)
    return (df, scale * k, rest) if k > 0 else None


@functools.lru_cache(maxsize=128)  # one plan: ~66 designs of ~400 rows
def _planned_equations(rows: tuple[Row, ...]) -> tuple[list[str], _Equations | None]:
    """A design's separable components and Henderson equations, once a design (read per judge component)."""
    comps = _separable(rows)[0]
    return comps, (_equations(_prepare(rows), comps) if comps else None)


def seen_components(components: Mapping[str, float], separable: Sequence[str]) -> dict[str, float]:
    """The components as the estimator will see them on a design that separates only `separable`: an
    exchange variance there is inside the residual when every exchange is scored once (its level is then the
    team score itself), so a plan of such a design counts it in the residual its estimates are made against
    (negative values as 0)."""
    out = {k: max(float(components.get(k, 0.0)), 0.0) for k in COMPONENTS}
    if "exchange" not in separable:
        out["residual"] += out["exchange"]
        out["exchange"] = 0.0
    return out


def planned_df(rows: Sequence[Row], components: Mapping[str, float], name: str, *,
               scale: float = 1.0) -> float | None:
    """`estimate_df` of component `name` on a planned design with the components at the given values: how
    many degrees of freedom its estimate will have (see planned_reduction)."""
    if (red := planned_reduction(rows, components, name, scale=scale)) is None:
        return None
    df, k, rest = red
    v = max(float(components.get(name, 0.0)), 0.0)
    return float(df * (k * v / (k * v + rest)) ** 2) if k * v + rest > 0 else None


def _bootstrap(rows: Sequence[Row], comps: Sequence[str], replicates: int, seed: int) -> dict[str, list[float]]:
    """Per component: its (truncated) estimates over dilemma resamples (for a component without a reduction
    interval)."""
    by_dil: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_dil.setdefault(r.dilemma, []).append(i)
    names = sorted(by_dil)
    G = len(names)
    draws: dict[str, list[float]] = {k: [] for k in [*comps, "residual"]}
    rng = np.random.default_rng(seed)
    for _ in range(replicates):
        picks = rng.integers(0, G, size=G)
        idx = np.concatenate([by_dil[names[p]] for p in picks])
        labels = [f"{names[p]}#{k}" for k, p in enumerate(picks) for _ in by_dil[names[p]]]
        try:
            rep = _estimate(_prepare([rows[i] for i in idx], labels), comps)
        except np.linalg.LinAlgError:
            rep = None
        if rep is not None:
            for k, v in rep.items():
                draws[k].append(max(v, 0.0))
    return draws


def judgment_rows_of_facts(facts: Facts, family_of: Callable[[str], str], *, effective: bool = False,
                           sample: Callable[[list[str]], np.ndarray] | None = None) -> list[Row]:
    """`judgment_rows` from the analysis columns (ebtui.core.analysis.frame.Facts) instead of whole rounds:
    per judged round and seat, the mean of the criteria the judge gave (0 in the columns: missing), in the
    rounds' order (seat a, then b). `sample(keys)`: given each row's exchange key, which rows to keep (a boolean
    mask; ebtui.core.analysis.precision.sample_exchanges' rule), so only the kept rows are built."""
    values = (facts.effective if effective else facts.parsed)
    judged = np.flatnonzero(facts.judged)
    got = values[judged].astype(np.int64)  # [n, 2, 7]
    count = (got > 0).sum(axis=2)
    # a seat's mean of the criteria given (integers: the float sum is exact, as numpy's mean of the given ones)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = got.sum(axis=2) / np.where(count > 0, count, 1)
    r_idx, seat = np.nonzero(count > 0)  # row-major: a round's seat a before its seat b
    rows = judged[r_idx]
    keys = [str(e or i) for e, i in zip(facts.exchange[rows].tolist(), facts.id[rows].tolist(), strict=True)]
    keep = np.ones(len(rows), dtype=bool) if sample is None else np.asarray(sample(keys), dtype=bool)
    fam: dict[str, str] = {}

    def family(name: str) -> str:
        if name not in fam:
            fam[name] = family_of(name)
        return fam[name]

    out: list[Row] = []
    teams: tuple[Team, Team] = ("a", "b")
    for k in np.flatnonzero(keep).tolist():
        i, s = int(rows[k]), int(seat[k])
        team = teams[s]
        model = str(facts.team_a[i] if s == 0 else facts.team_b[i])
        judge = str(facts.judge[i])
        out.append(Row(str(facts.dilemma[i]), model, judge, f"{keys[k]}|{team}", team,
                       family(model) == family(judge), float(mean[r_idx[k], s])))
    return out


def variance_components(data: Sequence[Round] | Facts, family_of: Callable[[str], str], *,
                        effective: bool = False, replicates: int = DEFAULT_VC_REPLICATES,
                        seed: int = DEFAULT_VC_SEED) -> VarianceComponents:
    """From saved rounds (any number of tournaments) or their analysis columns: the estimated components,
    else the defaults."""
    rows = (judgment_rows(data, family_of, effective=effective) if isinstance(data, Sequence)
            else judgment_rows_of_facts(data, family_of, effective=effective))
    return estimate_components(rows, replicates=replicates, seed=seed)
