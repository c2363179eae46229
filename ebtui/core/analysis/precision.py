"""How precise a tournament's pairwise comparisons are, or will be: predicted and obtained interval
half-widths, power, and the smallest detectable gap, for a design (who plays, who judges what, on how many
dilemmas, how often) given variance components (ebtui.core.analysis.variance).
The formulas: docs/STATISTICS.md, "Variance components, precision and planning".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, Protocol, TypedDict, TypeVar

import numpy as np

from ebtui.core.analysis.common import Table, view_name
from ebtui.core.analysis.fit import JointFit, sum_code
from ebtui.core.analysis.frame import Facts, levels
from ebtui.core.records import Round
from ebtui.core.views import numbers as num

if TYPE_CHECKING:
    from ebtui.core.analysis.variance import ComponentsJson

R = TypeVar("R", bound="HasExchange")
ALPHA = 0.05
POWER = 0.8
NESTED = ("model_dilemma", "exchange", "residual")
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
    se: float  # sqrt(E[SE^2]): the SE the dilemma bootstrap will report
    half_width: float  # expected half-width of the 95% interval
    #: the estimate's actual standard deviation (every component, also those constant across dilemmas, such as
    #: a judge's liking for a model, which resampling dilemmas cannot see)
    se_true: float = float("nan")


def c4(n: int) -> float:
    """E[s] / σ for a sample standard deviation with n - 1 degrees of freedom (n >= 2)."""
    if n < 2:
        return float("nan")
    return float(math.sqrt(2.0 / (n - 1)) * math.exp(math.lgamma(n / 2) - math.lgamma((n - 1) / 2)))


def t_crit(G: int, alpha: float = ALPHA) -> float:
    from ebtui.core.analysis.bootstrap import t_quantile  # (no scipy.stats import at report time)

    return t_quantile(1 - alpha / 2, G - 1)


def predict_pairs(rows: Sequence[DesignRow], components: Mapping[str, float],
                  pairs: Sequence[tuple[str, str]] | None = None) -> list[PairPrediction]:
    """The predicted SE and half-width of every pairwise difference (or the given pairs) for a design."""
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
            se2 += var * G / (G - 1) * np.sum(dev ** 2, axis=(0, 1))
    t = t_crit(G)
    k4 = c4(G)
    return [PairPrediction(a, b, float(np.sqrt(s)), float(t * k4 * np.sqrt(s)), float(np.sqrt(tr)))
            for (a, b), s, tr in zip(wanted, se2, true2, strict=True)]


def power(delta: float, se: float, G: int, alpha: float = ALPHA, *, se_true: float | None = None) -> float:
    """Chance that the t-based interval for a true gap `delta` excludes 0. The interval's SE has G-1 degrees of
    freedom around `se`; the estimate's own standard deviation is `se_true` (default `se`). |estimate| > t × SE
    is then a noncentral t (noncentrality delta / se_true) beyond t × se / se_true."""
    if G < 2 or not se > 0:
        return float("nan")
    st = se if se_true is None or not se_true > 0 else se_true
    tc = t_crit(G, alpha) * se / st
    nc = delta / st
    from scipy.special import nctdtr  # the noncentral t's distribution function (scipy.stats.nct's)

    p = float(1.0 - nctdtr(G - 1, nc, tc) + nctdtr(G - 1, nc, -tc))
    return p if math.isfinite(p) else (1.0 if abs(nc) > tc else 0.0)


def detectable_gap(se: float, G: int, *, target: float = POWER, alpha: float = ALPHA,
                   se_true: float | None = None) -> float | None:
    """The smallest true gap the interval excludes 0 for with probability `target` (None: G < 3, or the
    interval excludes 0 that often even with no gap)."""
    if G < 3 or not se > 0 or not math.isfinite(se):
        return None
    big = max(se, se_true or 0.0)
    if power(0.0, se, G, alpha, se_true=se_true) >= target:
        return None
    hi = big * 4 * (t_crit(G, alpha) + 2)
    lo = 0.0  # power rises with the gap: bisection to 1e-6 SE (as scipy.optimize.brentq's xtol was)
    while hi - lo > 1e-6 * se:
        mid = (lo + hi) / 2.0
        if power(mid, se, G, alpha, se_true=se_true) < target:
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
    se: float | None  # bootstrap SE (scaled by sqrt(G/(G-1))), None: blank interval
    half_width: float | None
    note: str = ""


def obtained_pairs(models: Sequence[str], adjusted: np.ndarray, draws: np.ndarray, G: int) -> list[ObtainedPair]:
    """Every pairwise difference of adjusted means with the report's interval (t-based cluster bootstrap over
    dilemmas, G-1 df): its SE and half-width. `draws`: replicate_fits' rows (the first len(models) columns are
    the adjusted means)."""
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
    if len(rows) <= limit:
        return rows
    keys = sorted({str(r.exchange).rsplit("|", 1)[0] for r in rows})
    rng = np.random.default_rng(seed)
    take = set(rng.choice(len(keys), size=max(1, int(len(keys) * limit / len(rows))), replace=False).tolist())
    chosen = {keys[i] for i in take}
    return [r for r in rows if str(r.exchange).rsplit("|", 1)[0] in chosen]


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


def report_precision(rounds: Sequence[Round] | Facts, jf: JointFit | None, draws: np.ndarray,
                     family_of: Callable[[str], str], *, effective: bool = False) -> tuple[PrecisionJson, Table, str]:
    """For a report: the variance components (JSON and a Table), and its smallest detectable gap — from the
    report's own pairwise intervals: the median over model pairs of the bootstrap SE of the difference, turned
    into the gap found with 80% power at α = 0.05 (noncentral t, G-1 df). Returns (JSON keys, the components
    Table, the sentence shown beside the model table)."""
    from ebtui.core.analysis.variance import estimate_components, judgment_rows, judgment_rows_of_facts

    vc_rows = (judgment_rows(rounds, family_of, effective=effective) if isinstance(rounds, Sequence)
               else judgment_rows_of_facts(rounds, family_of, effective=effective))
    all_rows = len(vc_rows)
    vc_rows = sample_exchanges(vc_rows, REPORT_VC_MAX_ROWS)
    reps = REPORT_VC_REPLICATES if len(vc_rows) <= REPORT_VC_BOOTSTRAP_ROWS else 0
    vc = estimate_components(vc_rows, replicates=reps)
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
                          "basis": "median over model pairs of the bootstrap SE of the difference of adjusted "
                                   "means (t-based, G-1 df)"}
    sentence = "Smallest detectable gap: not available"
    pairs = obtained_pairs(jf.design.models, jf.estimates.adjusted, draws, G) if jf is not None and G >= 3 else []
    ses = [p.se for p in pairs if p.se is not None]
    if ses:
        se = float(np.median(ses))
        # what resampling dilemmas cannot see (a judge's liking for a model is the same on every dilemma):
        # the ratio of the estimate's own SD to the bootstrap's SE, predicted on this design
        seen = [DesignRow(r.dilemma, r.model, r.seat, r.judge, r.exchange) for r in vc_rows]
        preds = predict_pairs(seen, vc.values())
        ratio = float(np.median([q.se_true / q.se for q in preds if q.se > 0])) if preds else 1.0
        delta = detectable_gap(se, G, se_true=se * ratio)
        halves = [p.half_width for p in pairs if p.half_width is not None]
        gap["delta"], gap["se"], gap["se_true"], gap["pairs"] = delta, se, se * ratio, len(ses)
        gap["half_width_median"], gap["half_width_max"] = float(np.median(halves)), float(np.max(halves))
        sentence = ("Smallest detectable gap: not available (the interval is too short for 80% power)" if delta is None
                    else f"Smallest detectable gap: {num.fixed(delta)} points between two models' adjusted means (80% power, "
                    f"α = 0.05, {G} dilemmas; median pairwise half-width {num.fixed(np.median(halves))}, widest "
                    f"{num.fixed(np.max(halves))}). Smaller true gaps will usually not show; `ebtui plan` says what "
                    "would find them.")
    elif jf is None:
        sentence += " (no scores)."
    else:
        sentence += f" ({pairs[0].note if pairs else 'fewer than 3 dilemmas or one model'})."
        gap["note"] = sentence
    return {"variance_components": vc.json(), "detectable_gap": gap}, table, sentence
