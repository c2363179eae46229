"""Prediction-powered calibration (PPI++, Angelopoulos, Duchi & Zrnic 2024) of the joint fit's adjusted model
means to the human scale: theta = lambda * fit(judges, all judgments) + [fit(human, audited) - lambda *
fit(judges, audited)], lambda in [0, 1] chosen per quantity by the dilemma bootstrap's variance (lambda = 0 is the
human-only fit, so an interval is never wider than its). Method and validation: docs/STATISTICS.md."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ebtui.core.analysis.bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    MIN_CLUSTERS,
    SCALE,
    Interval,
    interval,
    replicate_fits,
    replicate_picks,
)
from ebtui.core.analysis.fit import Design, JointFit, fit, fit_clusters
from ebtui.core.analysis.frame import Facts, ScoreFrame
from ebtui.core.analysis.judge_bias import expand_judgments
from ebtui.core.audit.records import PRIMARY, Audit, Cell, HumanRating, judgment_ref
from ebtui.core.records import Round

METHOD = ("PPI++ (prediction-powered inference with power tuning) on the joint fit's adjusted means; "
          "95% intervals from a cluster bootstrap over dilemmas")
#: below this many human-scored judgments the section is blank (with the reason)
MIN_JUDGMENTS = 10
#: a model or judge needs this many human-scored team scorings (judgment x team) for a number
MIN_TEAMS = 3


@dataclass
class Quantity:
    """One calibrated number with its draws (what the plan reads)."""

    estimate: float | None
    interval: Interval
    lam: float | None = None
    human_only: float | None = None
    human_only_interval: Interval = Interval(None, None)
    reason: str = ""


@dataclass
class Calibration:
    n_judgments: int = 0
    n_scores: int = 0
    reason: str = ""
    judges: list[dict[str, Any]] = field(default_factory=list)
    models: list[dict[str, Any]] = field(default_factory=list)
    pairwise: list[dict[str, Any]] = field(default_factory=list)
    audits: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: per model, its estimate's variance in two parts (what `ebtui plan` scales): the part that falls as the
    #: audit grows (1/n, with the finite-population correction) and the part a complete audit would still have
    parts: dict[str, tuple[float, float]] = field(default_factory=dict)
    dilemmas: int = 0  # dilemmas the human-scored judgments are on
    clusters: int = 0  # dilemmas the intervals resample (0: intervals blank)
    population: int = 0  # scored judgments of the rounds

    def json(self) -> dict[str, Any]:
        return {"n_judgments": self.n_judgments, "n_scores": self.n_scores, "method": METHOD,
                "reason": self.reason, "audits": self.audits, "judges": self.judges, "models": self.models,
                "pairwise": self.pairwise, "notes": self.notes}


def ref_of(r: Round) -> str:
    """The judgment ref of an expanded round (ebtui.core.analysis.judge_bias.expand_judgments)."""
    return r.id if "#" in r.id else judgment_ref(r.id, PRIMARY)


def ratings_in_force(audits: Sequence[Audit]) -> dict[Cell, HumanRating]:
    """The latest rating per cell over the audits (a cell rated in two audits: the later rating)."""
    out: dict[Cell, HumanRating] = {}
    for r in sorted((r for a in audits for r in a.ratings), key=lambda r: r.time):
        out[(r.round_id, r.judgment_id, r.team, r.criterion)] = r
    return out


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def tuned(point_h: float, point_a: float, point_j: float, H: np.ndarray, A: np.ndarray, J: np.ndarray,
          clusters: int, clip: tuple[float, float] | None, hint: float | None = None) -> Quantity:
    """The PPI++ estimate of one quantity from its human-only, all-judgments and audited-judgments fits and
    their dilemma-bootstrap draws. lambda: `hint` (the audit's own sampling design's choice) when the dilemma
    bootstrap's variance at it is no larger than at 0 (human-only), else the lambda in [0, 1] that minimises
    that variance — either way the interval is never wider than the human-only one."""
    ok = np.isfinite(H) & np.isfinite(A) & np.isfinite(J)
    h, g = H[ok], (A - J)[ok]
    lam = 1.0 if hint is None else hint
    if len(h) >= 2:
        var_g = float(np.var(g, ddof=1))
        cov = float(np.cov(h, g, ddof=1)[0, 1])
        best = float(np.clip(-cov / var_g, 0.0, 1.0)) if var_g > 1e-12 else 1.0
        if hint is None or hint * hint * var_g + 2 * hint * cov > 1e-12:  # Var(h + lam g) - Var(h) > 0
            lam = best
    est = point_h + lam * (point_a - point_j)
    draws = np.where(ok, H + lam * (A - J), np.nan)
    return Quantity(_finite(est), interval(est, draws, clusters, clip=clip), lam, _finite(point_h),
                    interval(point_h, np.where(ok, H, np.nan), clusters, clip=clip))


def design_lambda(Hs: np.ndarray, Js: np.ndarray) -> float | None:
    """lambda from the audit's own sampling design: resampling which judgments were audited (the judges' fit
    over every judgment stays fixed), Var(H - lambda J) is least at Cov(H, J) / Var(J), clipped to [0, 1]."""
    ok = np.isfinite(Hs) & np.isfinite(Js)
    if ok.sum() < 20:
        return None
    var_j = float(np.var(Js[ok], ddof=1))
    if var_j <= 1e-12:
        return None
    return float(np.clip(np.cov(Hs[ok], Js[ok], ddof=1)[0, 1] / var_j, 0.0, 1.0))


def judgment_draws(fit_h: JointFit, fit_j: JointFit, models: Sequence[str], *, seed: int,
                   replicates: int) -> tuple[np.ndarray, np.ndarray]:
    """[replicates, models] adjusted means of the human and the judges' fits over the audited judgments
    resampled with replacement (a judgment drawn twice enters twice) — the audit's own sampling design."""
    sub_h, sub_j = fit_h.design.frame, fit_j.design.frame
    judgments, inv = np.unique(sub_h.round_idx, return_inverse=True)
    rows_of = [np.flatnonzero(inv == k) for k in range(len(judgments))]
    rng = np.random.default_rng(seed + 1)
    H = np.full((replicates, len(models)), np.nan)
    J = np.full((replicates, len(models)), np.nan)
    for b in range(replicates):
        rows = np.concatenate([rows_of[k] for k in rng.integers(0, len(judgments), len(judgments))])
        for src, base, out in ((sub_h, fit_h, H), (sub_j, fit_j, J)):
            d = Design.build(src.take(rows))
            d.has_seat, d.has_family = d.has_seat and base.design.has_seat, d.has_family and base.design.has_family
            out[b] = _aligned(fit_clusters(d, np.arange(len(d.dilemmas))).adjusted, d.models, models)
    return H, J


def _aligned(values: np.ndarray, names: Sequence[str], to: Sequence[str]) -> np.ndarray:
    out = np.full(len(to), np.nan)
    pos = {n: i for i, n in enumerate(names)}
    for k, n in enumerate(to):
        if n in pos:
            out[k] = values[pos[n]]
    return out


def _ci(q: Interval) -> tuple[float | None, float | None]:
    return q.low, q.high


def calibrate(rounds: Sequence[Round], audits: Sequence[Audit], family_of: Callable[[str], str], *,
              seed: int = DEFAULT_SEED, replicates: int = DEFAULT_REPLICATES) -> Calibration:
    """The `human_audit` section over the rounds (whole rounds; every judgment counts), from the audits whose
    draw covers them (the caller checks that: ebtui.core.usecases.audit)."""
    cal = Calibration(audits=[a.id for a in audits])
    exp = expand_judgments(rounds)
    jf = fit(Facts.from_rounds(exp), family_of) if exp else None
    if jf is None:
        cal.reason = "no judged round with a score"
        return cal
    f = jf.design.frame
    refs = [ref_of(r) for r in exp]
    cal.population = len({int(i) for i in f.round_idx})
    latest = ratings_in_force(audits)
    human = np.full(len(f), np.nan)
    teams = np.where(f.seat > 0, "a", "b")
    for i in range(len(f)):
        rid, _, jid = refs[int(f.round_idx[i])].partition("#")
        got = latest.get((rid, jid, str(teams[i]), f.criteria[int(f.crit_idx[i])]))
        if got is not None:
            human[i] = got.score
    rows = np.flatnonzero(np.isfinite(human))
    cal.n_scores = len(rows)
    cal.n_judgments = len({int(f.round_idx[i]) for i in rows})
    if cal.n_judgments < MIN_JUDGMENTS:
        cal.reason = (f"{cal.n_judgments} human-scored judgments: at least {MIN_JUDGMENTS} are needed "
                      "(ebtui audit draw, then score them in the app or with ebtui audit sheet/import)")
        return cal
    sub = f.take(rows)
    fit_h = fit(dataclasses.replace(sub, y=human[rows]), family_of)
    fit_j = fit(sub, family_of)
    assert fit_h is not None and fit_j is not None
    G, GS = len(f.dilemmas), len(sub.dilemmas)
    cal.dilemmas = GS
    if GS < MIN_CLUSTERS:
        cal.notes.append(f"intervals blank: the human-scored judgments are on fewer than {MIN_CLUSTERS} dilemmas")
    draws_a, draws_h, draws_j = _draws(jf, fit_h, fit_j, seed=seed, replicates=replicates)
    clusters = G if GS >= MIN_CLUSTERS else 0
    cal.clusters = clusters
    hs, js = judgment_draws(fit_h, fit_j, jf.design.models, seed=seed, replicates=min(replicates, 200))
    _models(cal, jf, fit_h, fit_j, sub, (draws_a, draws_h, draws_j), (hs, js), clusters)
    _judges(cal, jf, sub, human[rows], seed=seed, replicates=replicates)
    return cal


def _draws(jf: JointFit, fit_h: JointFit, fit_j: JointFit, *, seed: int,
           replicates: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[replicates, models] adjusted means of the three fits over the same dilemma resamples (the audited
    judgments drawn with their dilemmas), in jf's model order."""
    models = jf.design.models
    G = len(jf.design.dilemmas)
    if G < MIN_CLUSTERS:
        empty = np.full((0, len(models)), np.nan)
        return empty, empty, empty
    A = replicate_fits(jf, replicates=replicates, seed=seed)[:, : len(models)]
    picks = replicate_picks(G, replicates=replicates, seed=seed)
    sub_d = fit_h.design.dilemmas
    pos = np.array([sub_d.index(d) if d in sub_d else -1 for d in jf.design.dilemmas])
    H = np.full((replicates, len(models)), np.nan)
    J = np.full((replicates, len(models)), np.nan)
    for b in range(replicates):
        sp = pos[picks[b]]
        sp = sp[sp >= 0]
        if len(sp) < 2:
            continue
        H[b] = _aligned(fit_clusters(fit_h.design, sp).adjusted, fit_h.design.models, models)
        J[b] = _aligned(fit_clusters(fit_j.design, sp).adjusted, fit_j.design.models, models)
    return A, H, J


def _models(cal: Calibration, jf: JointFit, fit_h: JointFit, fit_j: JointFit, sub: ScoreFrame,
            dilemma_draws: tuple[np.ndarray, np.ndarray, np.ndarray], judgment: tuple[np.ndarray, np.ndarray],
            clusters: int) -> None:
    A, H, J = dilemma_draws
    hs, js = judgment
    models = jf.design.models
    ph = _aligned(fit_h.estimates.adjusted, fit_h.design.models, models)
    pj = _aligned(fit_j.estimates.adjusted, fit_j.design.models, models)
    pa = jf.estimates.adjusted
    ident = fit_h.design.identification
    sub_models = fit_h.design.models
    a_draws = A
    teams_of = {m: len({(int(r), float(s)) for r, s, mi in zip(sub.round_idx, sub.seat, sub.model_idx, strict=True)
                        if sub.models[mi] == m}) for m in models}
    n_of = {m: int(sum(sub.models[mi] == m for mi in sub.model_idx)) for m in models}
    qs: dict[str, Quantity] = {}
    for k, m in enumerate(models):
        reason = ""
        if teams_of[m] < MIN_TEAMS:
            reason = f"{teams_of[m]} human-scored team scorings of {m}: at least {MIN_TEAMS} are needed"
        elif not np.isfinite(ph[k]) or (ident is not None and ident.adjusted_reason(sub_models.index(m))):
            reason = "the human-scored judgments do not identify its adjusted mean"
        elif not np.isfinite(pa[k]):
            reason = "the judges' fit does not identify its adjusted mean"
        if reason:
            q = Quantity(None, Interval(None, None, reason), reason=reason)
        else:
            q = tuned(float(ph[k]), float(pa[k]), float(pj[k]), H[:, k] if len(H) else H, A[:, k] if len(A) else A,
                      J[:, k] if len(J) else J, clusters, SCALE, hint=design_lambda(hs[:, k], js[:, k]))
            _parts(cal, m, q, H[:, k] + (q.lam or 0.0) * (A[:, k] - J[:, k]) if len(H) else H,
                   A[:, k] if len(A) else A)
        qs[m] = q
        jo = interval(float(pa[k]), a_draws[:, k] if len(a_draws) else a_draws, clusters, clip=SCALE) \
            if np.isfinite(pa[k]) else Interval(None, None, "not estimable")
        lo, hi = _ci(q.interval)
        ho_lo, ho_hi = _ci(q.human_only_interval)
        cal.models.append({"model": m, "mean": q.estimate, "ci_low": lo, "ci_high": hi,
                           "judge_only_mean": _finite(pa[k]), "judge_only_ci_low": jo.low,
                           "judge_only_ci_high": jo.high, "n_human": n_of[m], "lambda": q.lam,
                           "human_only_mean": q.human_only, "human_only_ci_low": ho_lo, "human_only_ci_high": ho_hi,
                           "reason": q.reason or q.interval.note})
    for i, a in enumerate(models):
        for b in models[i + 1:]:
            qa, qb = qs[a], qs[b]
            if qa.estimate is None or qb.estimate is None:
                cal.pairwise.append({"a": a, "b": b, "diff": None, "ci_low": None, "ci_high": None,
                                     "reason": qa.reason or qb.reason})
                continue
            ka, kb = models.index(a), models.index(b)
            def col(X: np.ndarray, ka: int = ka, kb: int = kb) -> np.ndarray:
                return X[:, ka] - X[:, kb] if len(X) else X

            q = tuned(float(ph[ka] - ph[kb]), float(pa[ka] - pa[kb]), float(pj[ka] - pj[kb]), col(H), col(A),
                      col(J), clusters, None, hint=design_lambda(col(hs), col(js)))
            cal.pairwise.append({"a": a, "b": b, "diff": q.estimate, "ci_low": q.interval.low,
                                 "ci_high": q.interval.high, "lambda": q.lam, "reason": q.interval.note})


def _parts(cal: Calibration, model: str, q: Quantity, calibrated: np.ndarray, judges_only: np.ndarray) -> None:
    """The estimate's dilemma-bootstrap variance split (docs/STATISTICS.md, "Planning an audit"): what a fit of
    every judgment has (the judges' fit's, standing in for a complete audit's) stays whatever is audited; the
    rest falls as the audit grows."""
    c, a = calibrated[np.isfinite(calibrated)], judges_only[np.isfinite(judges_only)]
    if q.estimate is None or len(c) < 20 or len(a) < 20:
        return
    stays = float(np.var(a, ddof=1))
    cal.parts[model] = (max(float(np.var(c, ddof=1)) - stays, 0.0), stays)


def _centre(terms: np.ndarray) -> float:
    """Where the model terms of judge - human are centred: their mean without the one farthest from their median
    (a preference the judges share for one model is left out of every judge's bias); with 2 models, the mean."""
    t = terms[np.isfinite(terms)]
    if len(t) >= 3:
        t = np.delete(t, int(np.argmax(np.abs(t - np.median(t)))))
    return float(t.mean()) if len(t) else 0.0


def _judges(cal: Calibration, jf: JointFit, sub: ScoreFrame, human: np.ndarray, *, seed: int, replicates: int) -> None:
    """Per judge: its constant deviation from the human scores (judge minus human), from a least-squares fit of
    the differences on judge + model over the human-scored scores, the model terms centred on their mean without
    the most outlying one (`_centre`) — a preference the judges share for one model stays in that model's term
    (`models[].preference`) instead of being spread over every judge's bias; `mean_difference` is the plain mean. Intervals: the same dilemma
    resamples as the model means."""
    d = sub.y - human
    G = len(jf.design.dilemmas)
    K, M = len(sub.judges), len(sub.models)
    dil = np.array([jf.design.dilemmas.index(x) for x in sub.dilemmas])[sub.dilemma_idx]
    X = np.zeros((len(d), K + M - 1))
    X[np.arange(len(d)), sub.judge_idx] = 1.0
    ref = sub.model_idx > 0
    X[np.flatnonzero(ref), K + sub.model_idx[ref] - 1] = 1.0
    xtx = np.stack([X[dil == g].T @ X[dil == g] for g in range(G)])
    xtd = np.stack([X[dil == g].T @ d[dil == g] for g in range(G)])

    def solve(counts: np.ndarray) -> np.ndarray:
        a, b = np.tensordot(counts, xtx, axes=1), counts @ xtd
        seen = np.diag(a) > 0
        out = np.full(K + M, np.nan)
        if not seen[:K].any():
            return out
        idx = np.flatnonzero(seen)
        coef = np.linalg.lstsq(a[np.ix_(idx, idx)], b[idx], rcond=None)[0]
        full = np.full(K + M - 1, np.nan)
        full[idx] = coef
        model_terms = np.concatenate([[0.0], full[K:]])
        model_terms[1:][~seen[K:]] = np.nan
        centre = _centre(model_terms)
        out[:K] = full[:K] + centre
        out[K:] = model_terms - centre
        return out

    full_counts = np.ones(G)
    point = solve(full_counts)
    ev = np.linalg.eigvalsh(np.tensordot(full_counts, xtx, axes=1))
    rank_ok = bool(ev.min() > 1e-9 * max(float(ev.max()), 1.0))
    if not rank_ok:
        cal.notes.append("judge biases are plain means: the human-scored judgments do not link every judge "
                         "and model")
    picks = replicate_picks(G, replicates=replicates, seed=seed) if G >= MIN_CLUSTERS else np.zeros((0, G), int)
    draws = np.stack([solve(np.bincount(p, minlength=G).astype(float)) for p in picks]) if len(picks) \
        else np.zeros((0, K + M))
    for k, judge in enumerate(sub.judges):
        mine = sub.judge_idx == k
        n_teams = len({(int(r), float(s)) for r, s in zip(sub.round_idx[mine], sub.seat[mine], strict=True)})
        row: dict[str, Any] = {"judge": judge, "bias": None, "ci_low": None, "ci_high": None, "n": int(mine.sum()),
                               "n_judgments": len(set(sub.round_idx[mine].tolist())),
                               "mean_difference": float(d[mine].mean()), "reason": ""}
        if n_teams < MIN_TEAMS:
            row["reason"] = f"{n_teams} human-scored team scorings by {judge}: at least {MIN_TEAMS} are needed"
            cal.judges.append(row)
            continue
        est = float(point[k]) if rank_ok else float(d[mine].mean())
        row["bias"] = est
        if len(set(dil[mine].tolist())) < MIN_CLUSTERS:
            row["reason"] = f"interval blank: its human-scored scores are on fewer than {MIN_CLUSTERS} dilemmas"
        elif rank_ok:
            iv = interval(est, draws[:, k] if len(draws) else np.zeros(0), G)
            row["ci_low"], row["ci_high"], row["reason"] = iv.low, iv.high, iv.note
        cal.judges.append(row)
    for row in cal.models:
        m = row["model"]
        row["preference"] = _finite(point[K + sub.models.index(m)]) if rank_ok and m in sub.models else None
