"""The reliability panel: do the judgments agree with each other (`alpha_by_criterion`: Krippendorff's
alpha over every judgment of a transcript), does each judge agree with itself (`test_retest`: its repeats
in the same reading order), and how far the seven criteria measure one thing (`criteria`).
Definitions: docs/STATISTICS.md, "Judge bias and reliability".
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import TypedDict, TypeVar

import krippendorff
import numpy as np

from ebtui.core.analysis.bias_types import AlphaRow, ReliabilityJson, RetestRow
from ebtui.core.analysis.bootstrap import DEFAULT_SEED, MIN_CLUSTERS, interval
from ebtui.core.analysis.common import SEATS
from ebtui.core.analysis.judge_bias import expand_judgments
from ebtui.core.facts import exchange_key
from ebtui.core.facts import scores as scores_in_view
from ebtui.core.records import CRITERIA, Round

MEAN = "mean_of_criteria"
ALPHA_LEVEL = "interval"
Unit = tuple[str, str]  # (exchange id, team)
#: what identifies a unit of the alpha (a Unit, or a Unit and a reading order)
K = TypeVar("K", bound=Hashable)


class _Scored(TypedDict):
    """One expanded judgment of one team (`_values`)."""

    unit: Unit
    dilemma: str
    judge: str
    order: str
    scores: dict[str, int | None]


def _values(rounds: Sequence[Round], effective: bool = False) -> list[_Scored]:
    """One record per expanded judgment x team: unit, dilemma, judge, order, the 7 scores."""
    out: list[_Scored] = []
    for r in expand_judgments(rounds):
        j = r.judgment
        if j is None:
            continue
        for team in SEATS:
            s = scores_in_view(j, team, effective=effective).as_dict()
            out.append({"unit": (exchange_key(r), team), "dilemma": r.dilemma_id, "judge": r.judge_model,
                        "order": j.order, "scores": s})
    return out


def _score(rec: _Scored, criterion: str) -> float | None:
    s = rec["scores"]
    if criterion == MEAN:
        vals = [v for v in s.values() if v is not None]
        return float(np.mean(vals)) if vals else None
    v = s[criterion]
    return None if v is None else float(v)


def reliability_matrix(units: Mapping[K, Sequence[float]]) -> np.ndarray:
    """The coders x units matrix krippendorff takes: unit u's values down its column, NaN below them."""
    if not units:
        return np.zeros((0, 0))
    depth = max(len(v) for v in units.values())
    m = np.full((depth, len(units)), np.nan)
    for k, vals in enumerate(units.values()):
        m[: len(vals), k] = vals
    return m


def alpha(units: Mapping[K, Sequence[float]]) -> float | None:
    """Krippendorff's alpha (interval metric) of the units' values; None when nothing is pairable or there is
    no variation. Closed form of the coincidence-matrix definition: with n pairable values, unit u holding
    m_u >= 2 of them with sum of squares about its mean SS_u, D_o = (2/n) sum_u m_u SS_u / (m_u - 1),
    D_e = 2 SS_total / (n - 1), alpha = 1 - D_o / D_e — the value of the `krippendorff` package
    (level "interval"), which tests/unit/analysis/test_judge_bias.py checks on the same data."""
    stats_ = _unit_stats(units)
    return _alpha_from(stats_.sum(axis=0)) if len(stats_) else None


def _unit_stats(units: Mapping[K, Sequence[float]]) -> np.ndarray:
    """Per pairable unit: [m, sum, sum of squares, m * SS / (m - 1)] (SS: squares about the unit's mean)."""
    vals = [v for v in units.values() if len(v) >= 2]
    if not vals:
        return np.zeros((0, 4))
    m = np.array([len(v) for v in vals], dtype=float)
    idx = np.repeat(np.arange(len(vals)), m.astype(int))
    flat = np.fromiter((x for v in vals for x in v), dtype=float, count=int(m.sum()))
    s1 = np.bincount(idx, weights=flat, minlength=len(vals))
    s2 = np.bincount(idx, weights=flat * flat, minlength=len(vals))
    ss = np.maximum(s2 - s1 * s1 / m, 0.0)
    return np.column_stack([m, s1, s2, m * ss / (m - 1)])


def _alpha_from(tot: np.ndarray) -> float | None:
    n, s1, s2, within = (float(x) for x in tot)
    if n < 2:
        return None
    ss_total = s2 - s1 * s1 / n
    if not ss_total > 1e-12:
        return None
    d_o = 2.0 * within / n
    d_e = 2.0 * ss_total / (n - 1)
    return 1.0 - d_o / d_e


def krippendorff_alpha(units: Mapping[K, Sequence[float]]) -> float | None:
    """The same alpha from the `krippendorff` package (for checking; slower)."""
    pairable = {u: v for u, v in units.items() if len(v) >= 2}
    if len(pairable) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = float(krippendorff.alpha(reliability_data=reliability_matrix(pairable), level_of_measurement="interval"))
    return a if np.isfinite(a) else None


def _boot_alpha(units: Mapping[K, Sequence[float]], dilemma_of: Mapping[K, str], seed: int,
                replicates: int) -> tuple[float | None, float | None, float | None, str]:
    pairable = {u: v for u, v in units.items() if len(v) >= 2}
    est = alpha(pairable) if len(pairable) >= 2 else None
    if est is None:
        return None, None, None, "fewer than 2 transcripts with 2 or more judgments, or no variation"
    dils = sorted({dilemma_of[u] for u in pairable})
    G = len(dils)
    if G < MIN_CLUSTERS:
        return est, None, None, f"fewer than {MIN_CLUSTERS} dilemmas"
    per_d = np.array([_unit_stats({u: v for u, v in pairable.items() if dilemma_of[u] == d}).sum(axis=0)
                      for d in dils])
    picks = np.random.default_rng(seed).integers(0, G, size=(replicates, G))
    draws = np.array([np.nan if (a := _alpha_from(per_d[row].sum(axis=0))) is None else a for row in picks])
    iv = interval(est, draws, G, clip=(-1.0, 1.0))
    return est, iv.low, iv.high, iv.note


#: the closed-form alpha and its dilemma bootstrap, for the same panel computed from the analysis columns
#: (ebtui.core.analysis.bias_source.reliability_of_facts)
alpha_from = _alpha_from



def criteria_structure(mat: np.ndarray) -> tuple[np.ndarray, float | None, str]:
    """The criteria's pairwise correlations over a (judgment team x criterion) score matrix (NaN: no score; a
    pair needs 3 common scores and variation in both) and the first principal component's share of them, or
    None with the reason."""
    k = mat.shape[1]
    corr = np.full((k, k), np.nan)
    fin = np.isfinite(mat)
    for i in range(k):
        for j in range(k):
            ok = fin[:, i] & fin[:, j] if len(mat) else np.zeros(0, bool)
            if ok.sum() >= 3 and np.std(mat[ok, i]) > 0 and np.std(mat[ok, j]) > 0:
                corr[i, j] = float(np.corrcoef(mat[ok, i], mat[ok, j])[0, 1])
    if np.isfinite(corr).all():
        eig = np.linalg.eigvalsh(corr)
        return corr, float(eig[-1] / eig.sum()), ""
    return corr, None, "some criterion has no variation or too few scores"

def alpha_row(criterion: str, fit: tuple[float | None, float | None, float | None, str], n_units: int,
              n_values: int, left_out: int) -> AlphaRow:
    """One criterion's row of `alpha_by_criterion`: its (alpha, ci_low, ci_high, note) and what it rests on."""
    est, lo, hi, note = fit
    return {"criterion": criterion, "alpha": est, "ci_low": lo, "ci_high": hi, "n_units": n_units,
            "n_values": n_values, "n_units_left_out": left_out, "interval_note": note}


def retest_row(judge: str, units_m: Mapping[K, Sequence[float]], dilemma_of: Mapping[K, str], diffs: list[float],
               n: int, *, crossed: bool, seed: int, replicates: int) -> RetestRow:
    """One judge's test-retest row from its repeated (transcript, order) groups: alpha of their means (blank,
    saying why, when it has none: repeats in opposite orders only (`crossed`), or none at all), the score
    differences between repeats, and n = the repeated groups."""
    if units_m:
        est, lo, hi, note = _boot_alpha(units_m, dilemma_of, seed, replicates)
    else:
        est = lo = hi = None
        note = ("its repeats of a transcript are in opposite orders only (see the order table); "
                "ebtui rejudge --order same --repeats 2" if crossed else
                "no repeat judgments (ebtui rejudge --repeats 2)")
    return {"judge": judge, "alpha_mean_of_criteria": est, "ci_low": lo, "ci_high": hi,
            "mean_abs_diff": float(np.mean(diffs)) if diffs else None,
            "exact_agreement": float(np.mean([d == 0 for d in diffs])) if diffs else None,
            "n": n, "n_score_pairs": len(diffs), "interval_note": note}


def reliability_section(alphas: list[AlphaRow], retest: list[RetestRow], mat: np.ndarray) -> ReliabilityJson:
    """The `reliability` object from its alpha and test-retest rows and the (judgment team x criterion) score
    matrix (NaN: no score) the criteria's structure is read from."""
    corr, share, share_note = criteria_structure(mat)
    return {
        "alpha_by_criterion": {a["criterion"]: a for a in alphas},
        "alpha_level": ALPHA_LEVEL,
        "test_retest": retest,
        "criteria_first_component_share": share,
        "criteria_correlations": {"criteria": list(CRITERIA),
                                  "matrix": [[None if not np.isfinite(v) else float(v) for v in row] for row in corr]},
        "n_judgment_teams": len(mat), "n_complete": int(np.isfinite(mat).all(axis=1).sum()) if len(mat) else 0,
        "note": share_note,
    }


def reliability_json(rounds: Sequence[Round], *, effective: bool = False, seed: int = DEFAULT_SEED,
                     replicates: int = 200) -> ReliabilityJson:
    """`reliability` of `report --json` (see the module docstring)."""
    recs = _values(rounds, effective)
    dilemma_of = {rec["unit"]: rec["dilemma"] for rec in recs}
    alphas: list[AlphaRow] = []
    for c in (*CRITERIA, MEAN):
        units: dict[Unit, list[float]] = defaultdict(list)
        for rec in recs:
            v = _score(rec, c)
            if v is not None:
                units[rec["unit"]].append(v)
        est, lo, hi, note = _boot_alpha(dict(units), dilemma_of, seed, replicates)
        pairable = {u: v for u, v in units.items() if len(v) >= 2}
        alphas.append(alpha_row(c, (est, lo, hi, note), len(pairable), int(sum(len(v) for v in pairable.values())),
                                len(units) - len(pairable)))

    # test-retest: per judge, its repeats of one transcript in one order
    retest: list[RetestRow] = []
    for judge in sorted({rec["judge"] for rec in recs}):
        mine = [rec for rec in recs if rec["judge"] == judge]
        groups: dict[tuple[Unit, str], list[_Scored]] = defaultdict(list)
        for rec in mine:
            groups[(rec["unit"], rec["order"])].append(rec)
        rep = {k: v for k, v in groups.items() if len(v) >= 2}
        diffs: list[float] = []
        units_m: dict[tuple[Unit, str], list[float]] = {}
        for (u, o), rs in rep.items():
            vals = [_score(r, MEAN) for r in rs]
            units_m[(u, o)] = [v for v in vals if v is not None]
            for r1, r2 in combinations(rs, 2):
                for c in CRITERIA:
                    v1, v2 = _score(r1, c), _score(r2, c)
                    if v1 is not None and v2 is not None:
                        diffs.append(abs(v1 - v2))
        per_unit = Counter(u for (u, _o), rs in groups.items() for _ in rs)
        retest.append(retest_row(judge, units_m, {k: dilemma_of[k[0]] for k in units_m}, diffs, len(rep),
                                 crossed=not units_m and any(n >= 2 for n in per_unit.values()), seed=seed,
                                 replicates=replicates))

    # criteria: correlations and the first principal component
    mat = np.array([[np.nan if (v := rec["scores"][c]) is None else float(v) for c in CRITERIA]
                    for rec in recs]) if recs else np.zeros((0, len(CRITERIA)))
    return reliability_section(alphas, retest, mat)
