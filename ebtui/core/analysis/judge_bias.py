"""Judge bias, measured and controlled: reading order, answer length and formatting (the team's own and relative
to the other team's), agreement with the judge's own view, and the self and same-family preferences, in one
least-squares fit over every judgment of every round (`expand_judgments` turns a round's added judgments into
rows of their own); intervals from the dilemma bootstrap plus a judge x model variance component. Also the
per-judge flip rate between reading orders.
The model, its terms and intervals: docs/STATISTICS.md, "Judge bias and reliability".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ebtui.core.analysis import bootstrap
from ebtui.core.analysis.bias_table import (
    UNITS,
    AgreementMap,
    LongTable,
    Terms,
    build_terms,
    dilemma_sums,
    expand_judgments,
    family_rows,
    judgment_counts,
    long_table,
    relative,
    self_rows,
    style_columns,
)
from ebtui.core.analysis.bias_types import (
    AgreementRow,
    BiasFitInfo,
    BiasJson,
    ExcludedJson,
    FlipRate,
    OrderRow,
    PreferenceRow,
    StyleCoefficient,
    StyleModel,
)
from ebtui.core.analysis.fit import sum_matrix
from ebtui.core.analysis.identify import components, is_estimable, null_space
from ebtui.core.analysis.judge_model import DilemmaSums, JudgeModel, judge_model_component, pair_interval
from ebtui.core.facts import exchange_key
from ebtui.core.facts import scores as scores_in_view
from ebtui.core.families import family_function
from ebtui.core.records import Judgment, Round
from ebtui.core.views import numbers as num

#: the names other modules (and the analysis columns' LongTable builder) import from here
__all__ = ["MIN_PAIRS", "AgreementMap", "BiasFit", "LongTable", "bias_fit", "bias_json", "bias_json_of_fit",
           "expand_judgments", "family_rows", "fit_table", "flip_rates", "flip_rows", "order_counts", "judgment_counts", "long_table", "relative", "self_rows", "style_columns"]


def _effects(coefs: np.ndarray) -> np.ndarray:
    return np.append(coefs, -np.sum(coefs))


def _redundant(S: np.ndarray, order: list[int], scale: np.ndarray, tol: float = 1e-9) -> set[int]:
    """The columns (indices) of a design with Gram matrix S (within dilemmas) that are linear combinations of
    the columns before them in `order`: a pivoted Cholesky of S taken in that order (a column whose remaining
    variance is ~0 of its sum of squares `scale` adds nothing)."""
    from scipy.linalg import solve_triangular

    kept: list[int] = []
    L = np.zeros((0, 0))
    out: set[int] = set()
    for i in order:
        if float(scale[i]) <= 0:
            out.add(i)
            continue
        w = solve_triangular(L, S[kept, i], lower=True) if kept else np.zeros(0)
        d = float(S[i, i]) - float(w @ w)
        if d <= tol * float(scale[i]):
            out.add(i)
            continue
        L = np.block([[L, np.zeros((len(kept), 1))], [w[None, :], np.array([[np.sqrt(d)]])]])
        kept.append(i)
    return out


def _separable(terms: Terms, sums: DilemmaSums, cols: list[int]) -> tuple[Terms, list[int], bool]:
    """Of the columns `cols` (of terms.names, mu first), drop every term the others already explain (tried
    last: the unknown-agreement and family terms, which only absorb; then everything in the order of the
    design, after mu and the dilemmas), so every estimate left is identified. A dropped term of the report
    (an order or agreement effect, a style coefficient) is blank with the reason. Returns the terms kept,
    their columns, and whether the models are identified."""
    names = [terms.names[i] for i in cols]
    k = len(cols)
    nuisance = [p for p, n in enumerate(names) if n.startswith("agree_unknown:") or n in ("family", "self")]
    order = [*[p for p in range(1, k) if p not in nuisance], *nuisance]
    S = sums.A.sum(axis=0)[np.ix_(cols, cols)]
    gone = _redundant(S, order, sums.raw[cols])
    notes = list(terms.notes)
    new_index = {i: n for n, i in enumerate(cols)}
    factors = {f: [new_index[i] for i in cs] for f, cs in terms.factors.items() if all(i in new_index for i in cs)}
    if any(terms.model_cols.start <= p < terms.model_cols.stop or names[p].startswith("judge:") for p in gone):
        notes.append("the design is not of full rank (some models or judges cannot be told apart from the other "
                     "terms): the quantities it does not identify are blank")
        return replace(terms, names=names, notes=notes, factors=factors), cols, False
    keep = [p for p in range(k) if p not in gone]
    for p in sorted(gone):
        name = names[p]
        if name == "family":
            notes.append("same-family preference left out: not separable from the other terms")
        elif name == "self":
            notes.append("self-preference left out: not separable from the other terms")
        elif not name.startswith("agree_unknown:"):
            notes.append(f"{name}: not separable from the other terms, left out")
    new_index = {cols[p]: n for n, p in enumerate(keep)}
    factors = {f: [new_index[i] for i in cs] for f, cs in terms.factors.items() if all(i in new_index for i in cs)}
    out = replace(terms, names=[names[p] for p in keep], notes=notes, dropped=[names[p] for p in sorted(gone)],
                  factors=factors)
    return out, [cols[p] for p in keep], True


def _vector(terms: Terms, beta: np.ndarray, M: int) -> np.ndarray:
    """The bootstrapped quantities: per model mu + skill, then every named term (mu, models excluded)."""
    skill = _effects(beta[terms.model_cols]) if M > 1 else np.zeros(1)
    return np.concatenate([beta[0] + skill, beta[terms.model_cols.stop:len(terms.names)]])


def _vector_map(terms: Terms, M: int, width: int) -> np.ndarray:
    """The matrix L with _vector(beta) = L @ beta (beta: mu and the named terms, `width` columns)."""
    k = len(terms.names)
    rest = k - terms.model_cols.stop
    L = np.zeros((M + rest, width))
    L[:M, 0] = 1.0
    if M > 1:
        L[:M, terms.model_cols] = sum_matrix(M)
    L[M:, terms.model_cols.stop:k] = np.eye(rest)
    return L


#: fewer (judge, model) pairs than this under a self or same-family term: its interval is blank
MIN_PAIRS = 2


@dataclass
class BiasFit:
    table: LongTable
    terms: Terms
    estimate: np.ndarray  # _vector order
    draws: np.ndarray  # replicates x len(estimate)
    full_rank: bool
    base_adjusted: np.ndarray  # the same fit without style, order and agreement terms: mu + skill (NaN: not identified)
    judge_model: JudgeModel | None = None
    #: per estimate: whether the design identifies it (all True at full rank), and the reason when not
    estimable: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    unidentified: str = ""

    def _identified(self, i: int) -> bool:
        return not len(self.estimable) or bool(self.estimable[i])

    def index(self, name: str) -> int | None:
        k = self.terms.col(name)
        return None if k is None else len(self.table.models) + k - self.terms.model_cols.stop

    def term(self, name: str) -> tuple[float | None, bootstrap.Interval]:
        i = self.index(name)
        if i is None:
            why = "not separable from the other terms" if name in self.terms.dropped else "not in the fit"
            return None, bootstrap.Interval(None, None, why)
        est = float(self.estimate[i])
        if not self._identified(i):
            return None, bootstrap.Interval(None, None, self.unidentified)
        if not np.isfinite(est):
            return None, bootstrap.Interval(None, None, "not estimable")
        col = self.draws[:, i] if self.draws.size else np.zeros(0)
        return est, pair_interval(est, col, len(self.table.dilemmas), self.judge_model, i)

    def model(self, i: int) -> tuple[float | None, bootstrap.Interval]:
        if not self._identified(i):
            return None, bootstrap.Interval(None, None, self.unidentified)
        est = float(np.clip(self.estimate[i], *bootstrap.SCALE))
        col = self.draws[:, i] if self.draws.size else np.zeros(0)
        return est, pair_interval(est, col, len(self.table.dilemmas), self.judge_model, i,
                                  clip=bootstrap.SCALE)


def _constraints(terms: Terms, lost: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """For each level a resample lacks, the row c with c'beta = 0 that sets its sum-coded effect to 0 (the
    average of the levels): the other levels' sum-to-zero constraint then runs over the levels present.
    Columns as in _Blocks (mu left out)."""
    width = len(terms.names) - 1
    out = []
    for f, missing in lost.items():
        if not missing.any():
            continue  # (a factor the design left out has no columns: nothing of it to constrain)
        cols = terms.factors[f]
        for lvl in np.flatnonzero(missing).tolist():
            c = np.zeros(width)
            if lvl < len(cols):
                c[cols[lvl] - 1] = 1.0
            else:  # the last level: minus the sum of the others
                c[[k - 1 for k in cols]] = 1.0
            out.append(c)
    return out


def bias_fit(rounds: Sequence[Round], *, families: Mapping[str, str] | None = None,
             agreement: AgreementMap | None = None, effective: bool = False, seed: int = bootstrap.DEFAULT_SEED,
             replicates: int = bootstrap.DEFAULT_REPLICATES) -> BiasFit | None:
    """The fit of the module docstring with its dilemma-bootstrap draws (None: no score at all)."""
    t = long_table(rounds, family_function(families), agreement=agreement, effective=effective)
    return fit_table(t, seed=seed, replicates=replicates)


_STYLE_OR_JUDGE_TERMS = ("order:", "agree:", "agree_unknown:", *UNITS)


def fit_table(t: LongTable, *, seed: int = bootstrap.DEFAULT_SEED, replicates: int = bootstrap.DEFAULT_REPLICATES,
              style: bool = True) -> BiasFit | None:
    """bias_fit on a LongTable (from rounds or from the analysis columns). The fit, its bootstrap and its judge
    x model component all work from the per-dilemma sums (dilemma_sums): memory and time grow with the
    units, not with a dense row x column design. style False: without the style, order and agreement terms
    (the joint fit's terms, self-preference apart from family: the report's section 2)."""
    if len(t.y) == 0:
        return None
    full = build_terms(t, style=style, order=style, agreement=style)
    sums = dilemma_sums(t, full)
    full.A = np.zeros((0, 0))  # (the per-unit columns are in the sums now)
    terms, cols, full_rank = _separable(full, sums, list(range(len(full.names))))
    M = len(t.models)
    G = len(t.dilemmas)
    blocks = _Blocks(sums, cols, exact=full_rank)
    est = _vector(terms, blocks.solve(np.arange(G)), M)
    base_cols = [i for i, n in enumerate(full.names) if not n.startswith(_STYLE_OR_JUDGE_TERMS)]
    base_terms, base_kept, base_rank = _separable(full, sums, base_cols)
    base = _vector(base_terms, _Blocks(sums, base_kept, exact=base_rank).solve(np.arange(G)), M)[:M]
    estimable = np.ones(len(est), dtype=bool)
    why = ""
    if not full_rank:
        estimable = _estimable(terms, sums, cols, M)
        base[~_estimable(base_terms, sums, base_kept, M)[:M]] = np.nan
        why = _unidentified_reason(t)
    jm = judge_model_component(sums.take(cols), len(t.judges), M,
                               _vector_map(terms, M, len(cols)))
    draws = np.full((0, len(est)), np.nan)
    if G >= bootstrap.MIN_CLUSTERS:
        has = {}
        for f, idx, K in (("model", t.model, M), ("judge", t.judge, len(t.judges)),
                          ("criterion", t.crit, len(t.criteria))):
            h = np.zeros((G, K), bool)
            h[t.dilemma, idx] = True
            has[f] = h
        rng = np.random.default_rng(seed)
        draws = np.full((replicates, len(est)), np.nan)
        for b in range(replicates):
            picks = rng.integers(0, G, size=G)
            lost: dict[str, np.ndarray] = {f: ~np.any(h[picks], axis=0) for f, h in has.items()}
            if any(v.any() and f not in terms.factors for f, v in lost.items()):
                continue  # a level lost whose columns the design left out: nothing to constrain
            draws[b] = _vector(terms, blocks.solve(picks, _constraints(terms, lost)), M)
            if lost["model"].any():
                draws[b, :M][lost["model"]] = np.nan  # that model alone is missing from this replicate
    return BiasFit(t, terms, est, draws, full_rank, base, jm, estimable, why)


def _estimable(terms: Terms, sums: DilemmaSums, cols: list[int], M: int) -> np.ndarray:
    """Per _vector entry: whether the design identifies it. With the dilemmas' terms absorbed (Frisch-Waugh),
    c'beta (mu: the mean of the dilemmas' intercepts) is identified iff c's terms part minus c_mu x the mean
    over dilemmas of their column means is orthogonal to the null space of the within-dilemma X'X."""
    x = cols[1:]
    null = null_space(sums.A.sum(axis=0)[np.ix_(x, x)])
    L = _vector_map(terms, M, len(cols))
    V = L[:, 1:] - np.outer(L[:, 0], sums.xbar[:, x].mean(axis=0))
    return np.array([is_estimable(null, v) for v in V], dtype=bool)


def _unidentified_reason(t: LongTable) -> str:
    parts = components(t.model, t.judge, len(t.models), len(t.judges))
    groups: dict[int, list[str]] = {}
    for k, p in enumerate(parts):
        groups.setdefault(p, []).append(t.models[k])
    if len(groups) > 1:
        listed = "; ".join("{" + ", ".join(g) + "}" for g in groups.values())
        return (f"not identified: the models fall into {len(groups)} groups never scored by a common judge "
                f"({listed}), so the average judge, and a model's mean against it, cannot be told")
    return "not identified: confounded with the other terms of this design"


class _Blocks:
    """The fit by dilemma blocks, for the estimate and the bootstrap's many refits. Each drawn dilemma has its
    own difficulty term, so (Frisch–Waugh) the other coefficients come from the data centred within each
    dilemma: beta = (sum of the drawn dilemmas' X'X) \\ (sum of their X'y), all per-dilemma sums precomputed
    (dilemma_sums), and mu = the mean over the drawn dilemmas of (mean y - mean x . beta) — the estimates of
    the least-squares fit with sum-coded difficulty over the resampled clusters, at a cost that does not grow
    with the rows."""

    def __init__(self, sums: DilemmaSums, cols: Sequence[int], *, exact: bool = True) -> None:
        self.exact = exact  # False: the design is not of full rank, least squares of minimum norm
        x = list(cols[1:])  # mu left out
        self.xbar = sums.xbar[:, x]
        self.ybar = sums.ybar
        self.A = sums.A[:, x][:, :, x]
        self.b = sums.b[:, x]

    def solve(self, picks: np.ndarray, constraints: Sequence[np.ndarray] = ()) -> np.ndarray:
        """The refit over the drawn dilemmas; `constraints`: rows c with c'beta = 0 (a lost level's effect at
        the average). A term with no variation in the resample drops out (NaN)."""
        w = np.bincount(picks, minlength=len(self.ybar)).astype(float)  # how often each dilemma is drawn
        A = np.tensordot(w, self.A, axes=1)
        bb = w @ self.b
        p = A.shape[0]
        dead = np.diag(A) <= 1e-9
        rows = [np.eye(p)[i] for i in np.flatnonzero(dead)] + list(constraints)
        if rows:
            _, sv, vt = np.linalg.svd(np.array(rows))
            rank = int((sv > 1e-9).sum())
            N = vt[rank:].T  # the directions the constraints leave free
        else:
            N = np.eye(p)
        An, bn = N.T @ A @ N, N.T @ bb
        try:
            if not self.exact:
                raise np.linalg.LinAlgError
            g = np.linalg.solve(An, bn)
        except np.linalg.LinAlgError:
            g = np.linalg.lstsq(An, bn, rcond=None)[0]
        beta = N @ g
        mu = float(w @ (self.ybar - self.xbar @ beta)) / float(w.sum())
        beta[dead] = np.nan
        return np.concatenate([[mu], beta])


# ---- the report's parts -------------------------------------------------------------------------------


def _winner(j: Judgment, effective: bool) -> str | None:
    a = scores_in_view(j, "a", effective=effective).mean()
    b = scores_in_view(j, "b", effective=effective).mean()
    if a is None or b is None:
        return None
    return "a" if a > b else "b" if b > a else "tie"


#: one judgment's winner: (judge, exchange, dilemma, reading order, "a" / "b" / "tie")
Winner = tuple[str, str, str, str, str]


def flip_rates(rounds: Sequence[Round], *, effective: bool = False, seed: int = bootstrap.DEFAULT_SEED,
               replicates: int = bootstrap.DEFAULT_REPLICATES) -> dict[str, FlipRate]:
    """Per judge: the share of its opposite-order judgment pairs on one exchange whose winner differs."""
    winners: list[Winner] = []
    for r in expand_judgments(rounds):
        if r.judgment is None:
            continue
        w = _winner(r.judgment, effective)
        if w is not None:
            winners.append((r.judge_model, exchange_key(r), r.dilemma_id, r.judgment.order, w))
    return flip_rows(winners, seed=seed, replicates=replicates)


def flip_rows(winners: Sequence[Winner], *, seed: int = bootstrap.DEFAULT_SEED,
              replicates: int = bootstrap.DEFAULT_REPLICATES) -> dict[str, FlipRate]:
    """flip_rates from each judgment's winner, in the judgments' order."""
    by: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: {"ab": [], "ba": []})
    dil: dict[str, str] = {}
    for judge, ex, dilemma, order, w in winners:
        dil[ex] = dilemma
        by[(judge, ex)][order].append(w)
    per_judge: dict[str, list[tuple[float, str]]] = defaultdict(list)
    pairs: dict[str, int] = defaultdict(int)
    for (judge, ex), o in by.items():
        if o["ab"] and o["ba"]:
            flips = [float(x != y) for x in o["ab"] for y in o["ba"]]
            per_judge[judge].append((float(np.mean(flips)), dil[ex]))
            pairs[judge] += len(flips)
    out: dict[str, FlipRate] = {}
    for judge, vals in per_judge.items():
        est, iv = bootstrap.cluster_mean([v for v, _ in vals], [d for _, d in vals], seed=seed,
                                         replicates=replicates, clip=(0.0, 1.0))
        out[judge] = {"flip_rate": est, "flip_ci_low": iv.low, "flip_ci_high": iv.high, "flip_pairs": pairs[judge],
                      "flip_exchanges": len(vals), "flip_note": iv.note}
    return out


def _finite(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def _excluded(t: LongTable) -> ExcludedJson:
    return {"rounds": t.rounds, "judgments": t.judgments, "rounds_without_own_judgment": t.without_judgment,
            "scores_missing": t.scores_missing}


def order_counts(rounds: Sequence[Round]) -> dict[str, dict[str, int]]:
    """Per judge: its judgments read in order "ab" and in order "ba"."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"ab": 0, "ba": 0})
    for r in expand_judgments(rounds):
        if r.judgment is not None:
            out[r.judge_model][r.judgment.order] += 1
    return out


def bias_json(rounds: Sequence[Round], *, families: Mapping[str, str] | None = None,
              agreement: AgreementMap | None = None, effective: bool = False, seed: int = bootstrap.DEFAULT_SEED,
              replicates: int = bootstrap.DEFAULT_REPLICATES) -> BiasJson:
    """`style`, `order` and `agreement_bias` of `report --json` (see the module docstring)."""
    bf = bias_fit(rounds, families=families, agreement=agreement, effective=effective, seed=seed,
                  replicates=replicates)
    return bias_json_of_fit(bf, flip_rates(rounds, effective=effective, seed=seed, replicates=replicates),
                            order_counts(rounds))


def bias_json_of_fit(bf: BiasFit | None, flips: Mapping[str, FlipRate],
                     n_by_judge: Mapping[str, Mapping[str, int]]) -> BiasJson:
    """bias_json from the fit, the judges' flip rates and their judgments per reading order (order_counts)."""
    if bf is None:
        note = "no score to fit"
        return {"style": {"coefficients": [], "models": [], "n_scores": 0, "note": note}, "order": [],
                "agreement_bias": [], "self_and_family": [], "judge_bias_fit": {"n_scores": 0, "note": note}}
    t = bf.table
    G = len(t.dilemmas)
    blank = bootstrap.blank_note(G)
    notes = [*bf.terms.notes, *([blank] if blank else [])]
    excluded = _excluded(t)
    coefs: list[StyleCoefficient] = []
    for name, col in style_columns(t)[0]:
        est, iv = bf.term(name)
        if col is None:
            iv = bootstrap.Interval(None, None, "the other team's text is not in the data: not estimable")
        elif bf.terms.col(name) is None and name not in bf.terms.dropped:
            iv = bootstrap.Interval(None, None, "no variation across the teams' texts: not estimable")
        what = np.zeros(0) if col is None else col[np.isfinite(col)]
        coefs.append({"term": name, "estimate": est, "ci_low": iv.low, "ci_high": iv.high, "unit": UNITS[name],
                      "mean": float(np.mean(what)) if len(what) else 0.0,
                      "sd": float(np.std(what)) if len(what) else 0.0, "n": int(len(what)),
                      "interval_note": iv.note})
    # (scores are whole numbers: their float sums are exact in any order)
    raw_n = np.bincount(t.model, minlength=len(t.models))
    raw_sum = np.bincount(t.model, weights=t.y, minlength=len(t.models))
    models: list[StyleModel] = []
    for i, m in enumerate(t.models):
        est, iv = bf.model(i)
        models.append({"model": m, "raw_mean": float(raw_sum[i] / raw_n[i]), "mean_without_style": _finite(bf.base_adjusted[i]),
                       "adjusted_mean": est, "mean": est, "ci_low": iv.low, "ci_high": iv.high, "n_scores": int(raw_n[i]),
                       "interval_note": iv.note})
    order: list[OrderRow] = []
    none = {"ab": 0, "ba": 0}
    for name in t.judges:
        est, iv = bf.term(f"order:{name}")
        f = flips.get(name)
        note = iv.note if name in bf.terms.order_judges else "read in one order only: not separable from the seat"
        note = note or ("" if est is not None else iv.note)
        order.append({"judge": name, "effect": est, "ci_low": iv.low, "ci_high": iv.high,
                      "flip_rate": f["flip_rate"] if f else None, "flip_ci_low": f["flip_ci_low"] if f else None,
                      "flip_ci_high": f["flip_ci_high"] if f else None, "flip_pairs": f["flip_pairs"] if f else 0,
                      "n": n_by_judge.get(name, none)["ab"] + n_by_judge.get(name, none)["ba"],
                      "n_ab": n_by_judge.get(name, none)["ab"], "n_ba": n_by_judge.get(name, none)["ba"],
                      "interval_note": note})
    agree: list[AgreementRow] = []
    for j, name in enumerate(t.judges):
        mine = t.judge == j
        known = mine & np.isfinite(t.agree)
        est, iv = bf.term(f"agree:{name}")
        if name in bf.terms.agree_judges:
            note = iv.note
        elif not known.any():
            note = "no agreement data (no own view or no team conclusion classified)"
        else:
            note = "every team it scored agreed (or every one disagreed): not estimable"
        n_teams = int(known.sum() // max(len(t.criteria), 1))
        agree.append({"judge": name, "effect": est, "ci_low": iv.low, "ci_high": iv.high, "n": n_teams,
                      "n_scores": int(known.sum()), "n_agree_scores": int((t.agree[known] == 1).sum()),
                      "interval_note": note})
    jm = bf.judge_model
    if jm is not None and jm.variance is not None:
        notes.append(f"Intervals include judge x model variation (sd {num.shown(jm.sd, '.2f')} points, estimated from {jm.pairs} "
                     f"(judge, model) pairs, {jm.df} df): they are about judges like these, not only these judges.")
    else:
        why = jm.note if jm is not None else "the design is not of full rank"
        notes.append(f"Intervals resample dilemmas only ({why}): they are about these judges' preferences.")
    fit_info: BiasFitInfo = {"n_scores": int(len(t.y)), "judgments": t.judgments, "dilemmas": G, "models": len(t.models),
                "judges": len(t.judges), "terms": list(bf.terms.names), "full_rank": bf.full_rank,
                "replicates_used": int(np.isfinite(bf.draws).any(axis=1).sum()) if bf.draws.size else 0,
                "judge_model_sd": jm.sd if jm is not None else None, "judge_model_df": jm.df if jm is not None else 0,
                "judge_model_pairs": jm.pairs if jm is not None else 0, "excluded": excluded, "notes": notes}
    return {
        "style": {"coefficients": coefs, "models": models, "n_scores": int(len(t.y)), "excluded": excluded,
                  "notes": notes},
        "order": order,
        "agreement_bias": agree,
        "self_and_family": preference_rows(bf),
        "judge_bias_fit": fit_info,
    }


def preference_rows(bf: BiasFit) -> list[PreferenceRow]:
    """The self-preference and the same-family preference, each with the (judge, model) pairs it rests on."""
    t = bf.table
    out: list[PreferenceRow] = []
    jm = bf.judge_model
    for term, name, rows in (("self", "self", self_rows(t)), ("same_family", "family", family_rows(t))):
        cells = sorted({(int(j), int(m)) for j, m in zip(t.judge[rows].tolist(), t.model[rows].tolist(),
                                                          strict=True)})
        pairs = [f"{t.judges[j]} -> {t.models[m]}" for j, m in cells]
        est, iv = bf.term(name)
        note = iv.note
        if not cells:
            note = ("no judge scored its own model's team (ebtui rejudge --allow-own)" if term == "self" else
                    "no judge scored a model of its own family")
        elif len(cells) == len(np.unique(t.judge * len(t.models) + t.model)):
            note = "every (judge, model) pair is of this kind: nothing to compare with"
        elif est is not None and iv.low is not None and len(cells) < MIN_PAIRS:
            iv = bootstrap.Interval(None, None)
            note = (f"rests on {len(cells)} (judge, model) pair: that judge's liking for that model cannot be told "
                    "from the preference")
        elif est is not None and iv.low is not None and (jm is None or jm.variance is None):
            iv = bootstrap.Interval(None, None)
            note = ("judge x model variation not estimable (" + (jm.note if jm is not None else "design not of "
                    "full rank") + "): the preference cannot be told from these pairs' own liking")
        out.append({"term": term, "estimate": est, "ci_low": iv.low, "ci_high": iv.high, "n": len(cells),
                    "pairs": pairs, "n_scores": int(rows.sum()), "interval_note": note})
    return out
