"""How precise a tournament's pairwise comparisons are, or will be: predicted and obtained interval
half-widths, power, and the smallest detectable gap, for a design (who plays, who judges what, on how many
dilemmas, how often) given variance components (ebtui.core.analysis.variance).
The formulas: docs/STATISTICS.md, "Variance components, precision and planning".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, Protocol, TypedDict, TypeVar

import numpy as np
from scipy import special

from ebtui.core.analysis.common import Table, view_name
from ebtui.core.analysis.fit import JointFit, sum_code
from ebtui.core.analysis.frame import Facts, levels
from ebtui.core.analysis.pairwise import MIN_JUDGES, STANDARD, Comparison, IntervalStandard
from ebtui.core.records import Round
from ebtui.core.views import numbers as num

if TYPE_CHECKING:
    from ebtui.core.analysis.variance import ComponentsJson
    from ebtui.core.analysis.variance import Row as VarianceRow

R = TypeVar("R", bound="HasExchange")
ALPHA = 0.05
POWER = 0.8
NESTED = ("model_dilemma", "exchange", "residual")
#: a plan's judge x model estimate's degrees of freedom are worked out on at most this many of its dilemmas
PLANNED_DF_DILEMMAS = 6
PLANNED_DF_ROWS = 2000  # ... and on about this many of its team scores (each of its fits is dense)
CROSSED = ("judge", "judge_model")


@dataclass(frozen=True)
class DesignRow:
    """One team's score in one judgment, as a design (no score)."""

    dilemma: str
    model: str
    seat: str  # "a" / "b"
    judge: str
    exchange: str  # exchange key + seat


class HasExchange(Protocol):
    """A row that knows its exchange (and seat: "key|a")."""

    @property
    def exchange(self) -> str: ...


class PlannedExchange(Protocol):
    """What the design needs of a schedule's exchange (ebtui.core.tournament.schedule.Exchange)."""

    @property
    def dilemma_id(self) -> str: ...
    @property
    def team_a(self) -> str: ...
    @property
    def team_b(self) -> str: ...
    @property
    def judges(self) -> Sequence[str]: ...
    @property
    def exchange_key(self) -> str: ...


def rows_of_exchanges(exchanges: Sequence[PlannedExchange]) -> list[DesignRow]:
    """Design rows from schedule exchanges: per judge, one row per team."""
    out: list[DesignRow] = []
    for ex in exchanges:
        key = ex.exchange_key
        for j in ex.judges:
            out.append(DesignRow(ex.dilemma_id, ex.team_a, "a", j, key + "|a"))
            out.append(DesignRow(ex.dilemma_id, ex.team_b, "b", j, key + "|b"))
    return out


@dataclass
class PairPrediction:
    a: str
    b: str
    se: float  # sqrt(E[SE^2]) of the SE the report's interval will use (dilemma bootstrap + the judge part)
    half_width: float  # expected half-width of the report's interval (the standard: simultaneous over `tests`)
    #: the estimate's actual standard deviation (every component, also those constant across dilemmas, such as
    #: a judge's liking for a model, which resampling dilemmas cannot see)
    se_true: float = float("nan")
    df: float = float("nan")  # the interval's (Satterthwaite) degrees of freedom
    tests: int = 1  # the intervals the table holds together
    se_dilemmas: float = float("nan")  # the dilemma bootstrap's part alone


def c4(n: float) -> float:
    """E[s] / σ for a sample standard deviation with n - 1 degrees of freedom (n >= 2; n need not be whole)."""
    if n < 2:
        return float("nan")
    return float(math.sqrt(2.0 / (n - 1)) * math.exp(math.lgamma(n / 2) - math.lgamma((n - 1) / 2)))


def t_crit(G: int, alpha: float = ALPHA) -> float:
    from ebtui.core.analysis.bootstrap import t_quantile  # (no scipy.stats import at report time)

    return t_quantile(1 - alpha / 2, G - 1)


def _variance_rows(rows: Sequence[DesignRow]) -> list[VarianceRow]:
    from ebtui.core.analysis.variance import Row

    return [Row(r.dilemma, r.model, r.judge, r.exchange, "a" if r.seat == "a" else "b", False, 0.0) for r in rows]


def predict_pairs(rows: Sequence[DesignRow], components: Mapping[str, float],
                  pairs: Sequence[tuple[str, str]] | None = None, *, standard: IntervalStandard = STANDARD,
                  tests: int | None = None) -> list[PairPrediction]:
    """The predicted SE and half-width of every pairwise difference (or the given pairs) for a design, as the
    report's pairwise table will print them: the dilemma bootstrap's expected SE^2, plus (with 3+ judges:
    judges as a sample) the judge terms' part it cannot see, on Satterthwaite degrees of freedom, under the
    interval standard over `tests` pairs (default: every pair of the design's models)."""
    if not rows:
        return []
    models, mi = levels([r.model for r in rows])
    judges, ji = levels([r.judge for r in rows])
    dilemmas, di = levels([r.dilemma for r in rows])
    G, M = len(dilemmas), len(models)
    if G < 2 or M < 2:
        return []
    seat = np.array([1.0 if r.seat == "a" else -1.0 for r in rows])
    parts = [np.ones((len(rows), 1)), sum_code(mi, M)]
    if len(set(seat.tolist())) == 2:
        parts.append(seat[:, None])
    parts += [sum_code(ji, len(judges)), sum_code(di, G)]
    X = np.hstack(parts)
    L = np.vstack([np.eye(M - 1), -np.ones((1, M - 1))])  # effects from the sum-coded coefficients
    wanted = pairs if pairs is not None else [(models[i], models[j]) for i in range(M) for j in range(i + 1, M)]
    C = np.zeros((X.shape[1], len(wanted)))
    for p, (a, b) in enumerate(wanted):
        C[1:M, p] = L[models.index(a)] - L[models.index(b)]
    W = X @ np.linalg.lstsq(X.T @ X, C, rcond=None)[0]  # n x pairs: the estimate's weights on the scores
    factors = {
        "model_dilemma": levels([f"{r.model}\x1f{r.dilemma}" for r in rows])[1],
        "exchange": levels([r.exchange for r in rows])[1],
        "residual": np.arange(len(rows)),
        "judge": ji,
        "judge_model": levels([f"{r.judge}\x1f{r.model}" for r in rows])[1],
    }
    se2 = np.zeros(len(wanted))
    true2 = np.zeros(len(wanted))
    unseen: dict[str, np.ndarray] = {}
    for k, codes in factors.items():
        var = float(components.get(k, 0.0))
        if var <= 0:
            continue
        nl = int(codes.max()) + 1
        sums = np.zeros((nl, len(wanted)))
        np.add.at(sums, codes, W)
        true2 += var * np.sum(sums ** 2, axis=0)
        if k in NESTED:
            se2 += var * np.sum(sums ** 2, axis=0)
        else:
            a3 = np.zeros((G, nl, len(wanted)))
            np.add.at(a3, (di, codes), W)
            dev = a3 - a3.mean(axis=0, keepdims=True)
            seen = var * G / (G - 1) * np.sum(dev ** 2, axis=(0, 1))
            se2 += seen
            unseen[k] = np.maximum(var * np.sum(sums ** 2, axis=0) - seen, 0.0)
    # judges as a sample (as pairwise.JudgeSample in the report): the judge terms' unseen part, its estimate's
    # degrees of freedom on this design
    sample = len(judges) >= MIN_JUDGES
    extra = np.zeros(len(wanted))
    denom = np.zeros(len(wanted))
    jparts: list[tuple[np.ndarray, float, tuple[int, float, float] | None]] = []
    if sample and unseen:
        from ebtui.core.analysis.variance import planned_reduction

        per = len(rows) / G  # (a long plan: its first dilemmas, scaled; planned_df; a big one: at least 2)
        first = set(dilemmas[:max(2, min(PLANNED_DF_DILEMMAS, int(PLANNED_DF_ROWS // max(per, 1.0))))])
        vrows = _variance_rows([r for r in rows if r.dilemma in first])
        for k, part in unseen.items():
            red = planned_reduction(vrows, components, k, scale=G / len(first))
            v = float(components.get(k, 0.0))
            dfk = red[0] * (red[1] * v / (red[1] * v + red[2])) ** 2 if red is not None else 1.0
            extra += part
            denom += part ** 2 / max(dfk, 1.0)
            jparts.append((part, v, red))
    m = tests if tests is not None else M * (M - 1) // 2
    # the effective number of dilemmas (pairwise.Blocks.effective: each dilemma's share of the estimate's
    # variance under independent errors), which caps the bootstrap's degrees of freedom as in the report
    share = np.zeros((G, len(wanted)))
    np.add.at(share, di, W ** 2)
    geff = share.sum(axis=0) ** 2 / np.maximum((share ** 2).sum(axis=0), 1e-300)
    out: list[PairPrediction] = []
    for p, (a, b) in enumerate(wanted):
        se_b2, x = float(se2[p]), float(extra[p])
        total = se_b2 + x
        df_b = max(1.0, min(G - 1.0, float(geff[p]) - 1.0))
        d = se_b2 ** 2 / df_b + float(denom[p])
        df = max(1.0, min(total ** 2 / d, df_b)) if d > 0 else df_b  # as pairwise.satterthwaite
        se = float(np.sqrt(total))
        half = standard.critical(df, m) * c4(df + 1) * se
        if jparts:  # the report's SE and df vary with its estimates: the mean of what it will print
            half = _mean_half_width(se_b2, df_b, [(float(pt[p]), v, red) for pt, v, red in jparts], standard, m)
        out.append(PairPrediction(a, b, se, half, float(np.sqrt(true2[p])), df, m, float(np.sqrt(se_b2))))
    return out


#: draws of the sampling distribution behind `_mean_half_width` (fixed: a plan is deterministic)
HALF_WIDTH_DRAWS = 400


def _mean_half_width(se_b2: float, df_b: float, parts: Sequence[tuple[float, float, tuple[int, float, float] | None]],
                     standard: IntervalStandard, tests: int) -> float:
    """E[critical(df) × SE] of the report's interval: the bootstrap's SE^2 drawn as se_b2 × chi2(df_b) / df_b;
    each judge component's reduction Q as E[Q] × chi2(df) / df, its estimate (Q - rest) / k (0 when negative:
    nothing added) with its own df df × (k v / Q)^2; combined as the report does (pairwise.satterthwaite,
    capped at df_b). The critical value of a simultaneous interval on few df is so convex that the plug-in
    t(E[df]) × E[SE] runs short (by up to a fifth at 16 dilemmas with 4 judges)."""
    rng = np.random.default_rng(20261129)
    n = HALF_WIDTH_DRAWS
    sb2 = se_b2 * rng.chisquare(df_b, n) / df_b
    total = sb2.copy()
    denom = sb2 ** 2 / df_b
    for part, v, red in parts:
        if red is None or not v > 0 or not part > 0:
            total += part
            continue
        df, k, rest = red
        q = (k * v + rest) * rng.chisquare(df, n) / df
        est = np.maximum((q - rest) / k, 0.0)
        x = part * est / v
        dfx = df * (k * est / q) ** 2
        total += x
        denom += np.where(est > 0, x ** 2 / np.maximum(dfx, 1e-12), 0.0)
    dfs = np.clip(np.where(denom > 0, total ** 2 / np.maximum(denom, 1e-300), df_b), 1.0, df_b)
    crit = special.stdtrit(dfs, 1.0 - (1.0 - standard.level(tests)) / 2.0)
    return float(np.mean(crit * np.sqrt(total)))


def power(delta: float, se: float, G: int, alpha: float = ALPHA, *, se_true: float | None = None,
          df: float | None = None, tests: int = 1, standard: IntervalStandard | None = None) -> float:
    """Chance that the interval for a true gap `delta` excludes 0. The interval's SE has `df` degrees of freedom
    (default G-1) around `se`; the estimate's own standard deviation is `se_true` (default `se`); the interval
    is one of `tests` held together by the standard. |estimate| > t × SE is then a noncentral t
    (noncentrality delta / se_true) beyond t × se / se_true."""
    if G < 2 or not se > 0:
        return float("nan")
    st = se if se_true is None or not se_true > 0 else se_true
    dof = float(G - 1) if df is None or not df > 0 else float(df)
    std = standard or IntervalStandard(alpha=alpha)
    tc = std.critical(dof, tests) * se / st
    nc = delta / st
    from scipy.special import nctdtr  # the noncentral t's distribution function (scipy.stats.nct's)

    upper = float(1.0 - nctdtr(dof, abs(nc), tc))
    lower = float(nctdtr(dof, abs(nc), -tc))  # the wrong side: tiny, and nctdtr can give NaN far in its tail
    if not math.isfinite(upper):
        return 1.0 if abs(nc) > tc else 0.0
    return upper + (lower if math.isfinite(lower) else 0.0)


def detectable_gap(se: float, G: int, *, target: float = POWER, alpha: float = ALPHA,
                   se_true: float | None = None, df: float | None = None, tests: int = 1) -> float | None:
    """The smallest true gap the interval (one of `tests` held together) excludes 0 for with probability
    `target` (None: G < 3, or the interval excludes 0 that often even with no gap)."""
    if G < 3 or not se > 0 or not math.isfinite(se):
        return None
    big = max(se, se_true or 0.0)

    def pw(d: float) -> float:
        return power(d, se, G, alpha, se_true=se_true, df=df, tests=tests)

    if pw(0.0) >= target:
        return None
    dof = float(G - 1) if df is None or not df > 0 else float(df)
    hi = big * 4 * (IntervalStandard(alpha=alpha).critical(dof, tests) + 2)
    lo = 0.0  # power rises with the gap: bisection to 1e-6 SE (as scipy.optimize.brentq's xtol was)
    while hi - lo > 1e-6 * se:
        mid = (lo + hi) / 2.0
        if pw(mid) < target:
            lo = mid
        else:
            hi = mid
    return float((lo + hi) / 2.0)


# ---- what an actual fit obtained ---------------------------------------------------------------------------


@dataclass
class ObtainedPair:
    a: str
    b: str
    estimate: float
    se: float | None  # the interval's SE, None: blank interval
    half_width: float | None
    note: str = ""
    df: float | None = None  # the interval's degrees of freedom (None: G - 1)


def reported_pairs(comp: Comparison) -> list[ObtainedPair]:
    """Every pair as the report's pairwise table prints it (ebtui.core.analysis.pairwise.compare_all under the
    interval standard, judges as a sample): its SE and half-width, or the reason it is blank. What a plan's
    predicted half-width and power are about, and what an adaptive run's stopping rule should read."""
    out: list[ObtainedPair] = []
    for p in comp.pairs:
        if p.diff is None or p.ci_low is None or p.ci_high is None:
            out.append(ObtainedPair(p.a, p.b, float("nan") if p.diff is None else p.diff, None, None, p.reason))
            continue
        out.append(ObtainedPair(p.a, p.b, p.diff, p.se, (p.ci_high - p.ci_low) / 2, df=p.df))
    return out


def obtained_pairs(models: Sequence[str], adjusted: np.ndarray, draws: np.ndarray, G: int) -> list[ObtainedPair]:
    """Every pairwise difference of adjusted means with a per-pair dilemma-bootstrap interval (t-based, G-1 df,
    no judge part): its SE and half-width. `draws`: replicate_fits' rows (the first len(models) columns are
    the adjusted means). Not the report's pairwise interval (that is `reported_pairs`: simultaneous, judges
    as a sample); kept for callers that want the bootstrap alone."""
    from ebtui.core.analysis.bootstrap import interval

    out: list[ObtainedPair] = []
    M = len(models)
    for i in range(M):
        for j in range(i + 1, M):
            est = float(adjusted[i] - adjusted[j])
            col = draws[:, i] - draws[:, j] if draws.size else np.zeros(0)
            iv = interval(est, col, G)
            if iv.low is None or iv.high is None:
                out.append(ObtainedPair(models[i], models[j], est, None, None, iv.note))
                continue
            half = (iv.high - iv.low) / 2
            out.append(ObtainedPair(models[i], models[j], est, half / t_crit(G), half))
    return out


# ---- what a report states ----------------------------------------------------------------------------------


#: dilemma resamples behind a report's variance-component intervals (each refits five projections; `ebtui plan
#: --from` uses the full DEFAULT_VC_REPLICATES): enough for a rough 95% percentile interval, and it keeps a
#: report of a few hundred rounds within its start-up budget
REPORT_VC_REPLICATES = 40
#: the most team scores a report's variance components are estimated from (each fit projects on the design's
#: dummy columns: the cost grows with rows x columns squared); more are sampled by whole exchanges
REPORT_VC_MAX_ROWS = 4000
#: up to this many team scores the report's component intervals are bootstrapped
REPORT_VC_BOOTSTRAP_ROWS = 1200


def sample_exchanges(rows: Sequence[R], limit: int, seed: int = 20261125) -> list[R]:
    """At most about `limit` of the rows, whole exchanges at a time (an exchange's two teams and every
    judgment of it stay together), drawn with a fixed seed; all rows when there are no more than `limit`."""
    rows = list(rows)
    keep = exchange_sample([str(r.exchange).rsplit("|", 1)[0] for r in rows], limit, seed)
    return [r for r, k in zip(rows, keep.tolist(), strict=True) if k]


def exchange_sample(keys: Sequence[str], limit: int, seed: int = 20261125) -> np.ndarray:
    """`sample_exchanges`' rule on the rows' exchange keys: which rows to keep (a boolean mask)."""
    if len(keys) <= limit:
        return np.ones(len(keys), dtype=bool)
    names = sorted(set(keys))
    rng = np.random.default_rng(seed)
    take = rng.choice(len(names), size=max(1, int(len(names) * limit / len(keys))), replace=False)
    chosen = {names[i] for i in take.tolist()}
    return np.array([k in chosen for k in keys], dtype=bool)


class DetectableGap(TypedDict):
    """`detectable_gap` of `report --json` (the se and half-width figures where the fit has pairs, else a note)."""

    delta: float | None
    power: float
    alpha: float
    dilemmas: int
    basis: str
    se: NotRequired[float]
    se_true: NotRequired[float]
    pairs: NotRequired[int]
    half_width_median: NotRequired[float]
    half_width_max: NotRequired[float]
    note: NotRequired[str]


class PrecisionJson(TypedDict):
    """What `report_precision` adds to the as-judged analysis's JSON."""

    variance_components: ComponentsJson
    detectable_gap: DetectableGap


def report_rows(rounds: Sequence[Round] | Facts, family_of: Callable[[str], str], *,
                effective: bool = False) -> tuple[list[VarianceRow], int, int]:
    """The team scores a report's variance components are estimated from (at most about REPORT_VC_MAX_ROWS, a
    seeded sample of whole exchanges), how many there were before the sample, and the bootstrap replicates
    their intervals get (0 above REPORT_VC_BOOTSTRAP_ROWS): `report_precision`'s rows, which a fork computing
    them ahead (ebtui.core.analysis.ahead) builds the same."""
    from ebtui.core.analysis.variance import judgment_rows, judgment_rows_of_facts

    if isinstance(rounds, Sequence):
        vc_rows = judgment_rows(rounds, family_of, effective=effective)
        all_rows = len(vc_rows)
        vc_rows = sample_exchanges(vc_rows, REPORT_VC_MAX_ROWS)
    else:  # the sample is drawn on the keys: only its rows are built
        counted: list[int] = []

        def sample(keys: list[str]) -> np.ndarray:
            counted.append(len(keys))
            return exchange_sample(keys, REPORT_VC_MAX_ROWS)

        vc_rows = judgment_rows_of_facts(rounds, family_of, effective=effective, sample=sample)
        all_rows = counted[0]
    return vc_rows, all_rows, REPORT_VC_REPLICATES if len(vc_rows) <= REPORT_VC_BOOTSTRAP_ROWS else 0


def report_precision(rounds: Sequence[Round] | Facts, jf: JointFit | None, draws: np.ndarray,
                     family_of: Callable[[str], str], *, effective: bool = False,
                     comparison: Comparison | None = None,
                     cache: Path | None = None) -> tuple[PrecisionJson, Table, str]:
    """For a report: the variance components (JSON and a Table), and its smallest detectable gap — from the
    report's own pairwise intervals (`comparison`, the pairwise table's; computed here when not given): the
    median over model pairs of their SE and degrees of freedom, turned into the gap whose interval (the
    standard: simultaneous over the table's pairs) excludes 0 with 80% power at α = 0.05 (noncentral t).
    Returns (JSON keys, the components Table, the sentence shown beside the model table)."""
    from ebtui.core.analysis.variance_cache import estimate_components_cached

    vc_rows, all_rows, reps = report_rows(rounds, family_of, effective=effective)
    vc = estimate_components_cached(vc_rows, replicates=reps, cache=cache)
    if not reps and any(c.variance is not None and c.low is None for c in vc.components.values()) \
            and vc.dilemmas >= 3:
        vc.notes.append(f"intervals of components whose reduction has under 2 df left out above "
                        f"{REPORT_VC_BOOTSTRAP_ROWS:,} team scores (each dilemma resample refits every "
                        "projection); `ebtui plan --from` gives them")
    if len(vc_rows) < all_rows:
        vc.notes.append(f"estimated from a seeded sample of whole exchanges: {len(vc_rows):,} of {all_rows:,} team "
                        "scores; `ebtui plan --from` uses them all")
    rows = [[c["component"], c["variance"], c["sd"], c["ci_low"], c["ci_high"], c["share"], c["note"]]
            for c in vc.json()["components"]]
    notes = ["variance: of a team's mean-of-criteria score in one judgment (score points squared); 95% interval: "
             "chi-square from the component's own reduction in sums of squares, the other components' part taken "
             "off (a dilemma bootstrap only where that has under 2 df); share: of the total. Henderson method III "
             "(docs/STATISTICS.md). model_dilemma and exchange shrink only with more dilemmas or exchanges; "
             "more judges average only judge_model and residual.", *vc.notes]
    table = Table("variance_components", f"Variance components ({vc.source})",
                  ["component", "variance", "sd", "ci_low", "ci_high", "share", "note"], rows,
                  view=view_name(effective), notes=notes)
    G = len(jf.design.dilemmas) if jf is not None else 0
    gap: DetectableGap = {"delta": None, "power": POWER, "alpha": ALPHA, "dilemmas": G,
                          "basis": "the pairwise table's intervals (the interval standard: simultaneous over its "
                                   "pairs, judges as a sample): median over model pairs of their SE and degrees "
                                   "of freedom"}
    sentence = "Smallest detectable gap: not available"
    if comparison is None and jf is not None and G >= 3 and len(jf.design.models) >= 2:
        from ebtui.core.analysis.pairwise import Data, JudgeSample, compare_all

        comparison = compare_all(Data.of(jf.design.frame), ident=jf.design.identification, with_ranks=False,
                                 judges=JudgeSample.of(vc, len(jf.design.frame.judges)))
    pairs = reported_pairs(comparison) if comparison is not None and G >= 3 else []
    ses = [p.se for p in pairs if p.se is not None and p.half_width is not None]
    if ses:
        se = float(np.median(ses))
        df = float(np.median([p.df for p in pairs if p.se is not None and p.df is not None] or [G - 1.0]))
        tests = len(ses)
        # the ratio of the estimate's own SD to the interval's SE, predicted on this design (near 1 when the
        # judges are taken as a sample: the interval then includes what resampling dilemmas cannot see)
        seen = [DesignRow(r.dilemma, r.model, r.seat, r.judge, r.exchange) for r in vc_rows]
        preds = predict_pairs(seen, vc.values())
        ratio = float(np.median([q.se_true / q.se for q in preds if q.se > 0])) if preds else 1.0
        delta = detectable_gap(se, G, se_true=se * ratio, df=df, tests=tests)
        halves = [p.half_width for p in pairs if p.half_width is not None]
        gap["delta"], gap["se"], gap["se_true"], gap["pairs"] = delta, se, se * ratio, len(ses)
        gap["half_width_median"], gap["half_width_max"] = float(np.median(halves)), float(np.max(halves))
        sentence = ("Smallest detectable gap: not available (the interval is too short for 80% power)" if delta is None
                    else f"Smallest detectable gap: {num.fixed(delta)} points between two models' adjusted means (80% power "
                    f"that the pairwise table's interval excludes 0; α = 0.05 over its {tests} pairs, {G} dilemmas; "
                    f"median pairwise half-width {num.fixed(np.median(halves))}, widest {num.fixed(np.max(halves))}). Smaller "
                    "true gaps will usually not show; `ebtui plan` says what would find them.")
    elif jf is None:
        sentence += " (no scores)."
    else:
        sentence += f" ({pairs[0].note if pairs else 'fewer than 3 dilemmas or one model'})."
        gap["note"] = sentence
    return {"variance_components": vc.json(), "detectable_gap": gap}, table, sentence
