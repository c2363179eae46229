"""When a number of the joint fit is blank, and why: the rules results.py applies to the models, judges and
family-preference rows, and the pairwise / ranks / robustness tables (ebtui.core.analysis.pairwise) in the
shape the report, its CSVs, `report --json` and the TUI show. The rules: docs/STATISTICS.md, "Intervals".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ebtui.core.analysis.common import Cell, Table
from ebtui.core.analysis.fit import Design
from ebtui.core.analysis.frame import ScoreFrame
from ebtui.core.analysis.identify import (
    MIN_DILEMMAS,
    Identification,
    dilemmas_per_level,
    identify_design,
    sparse_reason,
)
from ebtui.core.analysis.pairwise import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    STANDARD,
    Blocks,
    Comparison,
    Data,
    JudgeSample,
    Robustness,
    RobustnessCheck,
    compare_all,
    concentrated_reason,
    describe_robustness,
    robustness,
)


class IntervalRule(tuple[str, str]):
    """(estimate_reason, interval_reason) — '' = shown — and what `apply_blank` needs to put the row's interval
    under the one standard: the degrees of freedom its dilemmas effectively give (min(G - 1, G* - 1), the rule
    every interval follows) and the judge terms' variance to add when the judges are taken as a sample (with
    its degrees of freedom); `clip`: the row is a score on the 1-10 scale."""

    df: float | None
    dilemmas: int
    judge_var: float
    judge_df: float
    clip: bool

    def __new__(cls, estimate: str = "", interval: str = "", *, df: float | None = None, dilemmas: int = 0,
                judge_var: float = 0.0, judge_df: float = float("inf"), clip: bool = False) -> IntervalRule:
        out = super().__new__(cls, (estimate, interval))
        out.df, out.dilemmas, out.judge_var, out.judge_df, out.clip = df, dilemmas, judge_var, judge_df, clip
        return out


@dataclass
class Blanks:
    """Per model / judge / the family term: (estimate_reason, interval_reason); '' = shown. Each is an
    IntervalRule when fit_blanks made it (its degrees of freedom and judge part for apply_blank)."""

    models: dict[str, tuple[str, str]] = field(default_factory=dict)
    judges: dict[str, tuple[str, str]] = field(default_factory=dict)
    family: tuple[str, str] = ("", "")
    #: which population the intervals are about (JudgeSample.population), "" when not known
    population: str = ""

    def model(self, name: str) -> tuple[str, str]:
        return self.models.get(name, ("", ""))

    def judge(self, name: str) -> tuple[str, str]:
        return self.judges.get(name, ("", ""))


_SAMPLES: list[tuple[ScoreFrame, JudgeSample]] = []


def judge_sample(frame: ScoreFrame, cache: Path | None = None) -> JudgeSample:
    """JudgeSample.of_frame, computed once per fit (the models table and the pairwise table use the same;
    `cache`: variance_cache.estimate_components_cached')."""
    for f, js in _SAMPLES:
        if f is frame:
            return js
    js = JudgeSample.of_frame(frame, cache=cache)
    _SAMPLES[:] = [*_SAMPLES[-3:], (frame, js)]
    return js


def fit_blanks(design: Design, judges: JudgeSample | None = None) -> Blanks:
    """The blank rules for one fitted Design (ebtui.core.analysis.fit), with each row's degrees of freedom and,
    when `judges` (default: estimated from the fit's scores) takes the judges as a sample, the judge part of
    the model means (judge x model and the average judge's severity) and of the family term."""
    f = design.frame
    ident: Identification = design.identification or identify_design(f, has_seat=design.has_seat,
                                                                      has_family=design.has_family)
    out = Blanks()
    M, J = len(f.models), len(f.judges)
    n_m = dilemmas_per_level(f.model_idx, f.dilemma_idx, M)
    n_j = dilemmas_per_level(f.judge_idx, f.dilemma_idx, J)
    # how many dilemmas effectively carry each quantity (a judge with 3 ratings on one dilemma: about 1)
    blocks = Blocks(Data.of(f), ident)
    lay = blocks.layout
    # the contrasts: each model's and judge's deviation from its block's average, and the family term
    K = np.array([*(lay.deviation(0, M, i) for i in range(M)), *(lay.deviation(lay.judge0, J, j) for j in range(J)),
                  lay.unit(lay.family_col) if lay.family else np.zeros(lay.width)])
    geff, top = blocks.effective(K)
    G = len(f.dilemmas)
    judges = judges if judges is not None else judge_sample(f)
    out.population = judges.population()
    jm_var = judges.variances.get("judge_model", 0.0) if judges.applies else 0.0
    jm_df = judges.dfs.get("judge_model", 1.0)
    jm = blocks.crossed(K)["judge_model"] * jm_var if jm_var > 0 else np.zeros(len(K))
    # a model's adjusted mean is at the *average judge*: with judges as a sample that average (its severity and
    # its liking averaged over the models) is itself drawn (about var_judge / J + var_jm / (J M) in a balanced
    # design), which a deviation from the models' average does not carry
    j_var = judges.variances.get("judge", 0.0) / max(J, 1) if judges.applies else 0.0
    mean_extra = j_var + jm_var / max(J * M, 1)

    def dof(k: int) -> float:
        return max(1.0, min(G - 1.0, float(geff[k]) - 1.0))

    def combined_df(parts: list[tuple[float, float]]) -> float:
        total = sum(v for v, _ in parts)
        denom = sum(v ** 2 / d for v, d in parts if v > 0)
        return total ** 2 / denom if denom > 0 else float("inf")

    def thin(k: int) -> str:
        if G < MIN_DILEMMAS:
            return ""  # the interval is blank anyway, with "fewer than 3 dilemmas"
        return concentrated_reason(float(geff[k]), f.dilemmas[int(top[k])])

    jdf = judges.dfs.get("judge", 1.0)
    for i, m in enumerate(f.models):
        why = ident.adjusted_reason(i)
        extra = float(jm[i]) + mean_extra
        out.models[m] = IntervalRule(why, why or sparse_reason(f"{m}'s mean", n_m[i]) or (thin(i) if M > 1 else ""),
                                     df=dof(i) if M > 1 else G - 1.0, dilemmas=G, judge_var=extra, clip=True,
                                     judge_df=combined_df([(float(jm[i]) + jm_var / max(J * M, 1), jm_df),
                                                           (j_var, jdf)]))
    for j, name in enumerate(f.judges):
        why = ident.offset_reason(j) if J > 1 else ""
        out.judges[name] = IntervalRule(why, why or sparse_reason(f"{name}'s offset", n_j[j])
                                        or (thin(M + j) if J > 1 else ""), df=dof(M + j), dilemmas=G)
    if design.has_family:
        fam_rows = f.family > 0.5
        n_f = len(set(f.dilemma_idx[fam_rows].tolist()))
        out.family = IntervalRule("", sparse_reason("the same-family preference", n_f) or thin(M + J),
                                  df=dof(M + J), dilemmas=G, judge_var=float(jm[M + J]), judge_df=jm_df)
    return out


@dataclass
class PairwiseResult:
    comparison: Comparison | None
    tables: dict[str, Table]
    robustness: Robustness
    judges: JudgeSample | None = None

    def interval_info(self) -> dict[str, object]:
        """`fit.intervals` in `report --json`: the interval standard and which judges the intervals are about."""
        tests = sum(1 for p in self.comparison.pairs if p.p is not None) if self.comparison else 0
        js = self.judges
        return {"standard": STANDARD.describe(tests), "pairs_tested": tests,
                "judges_as_sample": bool(js is not None and js.applies),
                "population": js.population() if js is not None else "",
                "judge_variances": dict(js.variances) if js is not None else {},
                "judge_variance_df": dict(js.dfs) if js is not None else {}}


PAIR_COLUMNS = ["a", "b", "diff", "ci_low", "ci_high", "p", "p_holm", "n_dilemmas", "reason"]
RANK_COLUMNS = ["model", "rank", "rank_low", "rank_high", "reason"]
ROBUST_COLUMNS = ["check", "left_out", "top_model", "top_model_changes", "lost", "gained", "reason"]


#: above this many scores (about 2,000 rounds) the report leaves the leave-one-out checks out, saying so
ROBUSTNESS_MAX_SCORES = 30_000


def pairwise_tables(design: Design | None, view: str, *, seed: int = DEFAULT_SEED,
                    replicates: int = DEFAULT_REPLICATES, judges: JudgeSample | None = None) -> PairwiseResult:
    """The pairwise matrix (every pair once), the rank intervals, and the robustness checks of one fit, under
    the interval standard (pairwise.STANDARD) with the judges as a sample (`judges`: the judge variances to
    add; by default estimated from the fit's own scores)."""
    comp = rob = None
    skipped = ""
    if design is not None and len(design.models) >= 2:
        data = Data.of(design.frame)
        judges = judges if judges is not None else judge_sample(design.frame)
        comp = compare_all(data, ident=design.identification, replicates=replicates, seed=seed, judges=judges)
        if len(design.frame) <= ROBUSTNESS_MAX_SCORES:
            rob = robustness(data, comp, replicates=replicates, seed=seed, judges=judges)
        else:  # one refit and bootstrap per dilemma and per judge left out: too slow for a report this size
            skipped = (f"not run above {ROBUSTNESS_MAX_SCORES:,} scores ({len(design.frame):,} here): each dilemma and "
                       "judge left out is a refit with its own bootstrap; report a subset (--tournament, "
                       "--dilemma) to run it")
    pair_rows: list[list[Cell]] = [[p.as_dict()[c] for c in PAIR_COLUMNS] for p in comp.pairs] if comp else []
    rank_rows: list[list[Cell]] = [[r.as_dict()[c] for c in RANK_COLUMNS] for r in comp.ranks] if comp else []
    rob_rows: list[list[Cell]] = []
    if rob is None:
        why = skipped or "fewer than 2 models with a score"

        def unchecked() -> RobustnessCheck:
            return {"top_model": None, "top_model_changes": None, "significant_pairs_change": None, "decisive": [],
                    "runs": [], "reason": why}

        rob = {"leave_one_dilemma_out": unchecked(), "leave_one_judge_out": unchecked(), "significant_pairs": []}
    for check, label in ((rob["leave_one_dilemma_out"], "dilemma"), (rob["leave_one_judge_out"], "judge")):
        for r in check["runs"]:
            changes = None if r["top_model_changes"] is None else ("yes" if r["top_model_changes"] else "no")
            rob_rows.append([label, r["left_out"], r["top_model"], changes, "; ".join(r["lost"]),
                             "; ".join(r["gained"]), r["reason"]])
    tests = sum(1 for p in comp.pairs if p.p is not None) if comp else 0
    population = [judges.population()] if judges is not None and comp is not None else []
    tables = {
        "pairwise": Table(
            "pairwise", "Pairwise: judge-adjusted difference a − b (simultaneous 95% intervals), Holm-adjusted p",
            PAIR_COLUMNS, pair_rows, view=view,
            notes=["diff: skill[a] − skill[b] in the joint fit (same judges, dilemmas, seat and criteria "
                   "taken into account); SE: the dilemma bootstrap's, plus the judge × model variation it "
                   "cannot see (judges as a sample), t with Satterthwaite degrees of freedom; p: the pair's own; "
                   "p_holm: Holm-adjusted over every pair that has a p; ci_low/ci_high: "
                   + STANDARD.describe(tests) + " — all hold together, and one that excludes 0 is also "
                   "Holm-significant: the report's answer to which models differ (the interval `ebtui plan` "
                   "predicts); n_dilemmas: dilemmas on which both were scored. Blank: the reason says "
                   "why (docs/STATISTICS.md).", *population]),
        "ranks": Table(
            "ranks", "Ranks: 1 = best, with a 95% rank interval", RANK_COLUMNS, rank_rows, view=view,
            notes=["rank: by the adjusted estimates; rank_low/rank_high: 1 + the models significantly better "
                   "(Holm, 0.05) and the number of models minus those significantly worse."]),
        "robustness": Table(
            "robustness", "Robustness: the ranking with one dilemma or one judge left out", ROBUST_COLUMNS,
            rob_rows, view=view, notes=describe_robustness(rob)),
    }
    return PairwiseResult(comp, tables, rob, judges)


def apply_blank(reasons: tuple[str, str], est: float | None, lo: float | None, hi: float | None,
                note: str) -> tuple[float | None, float | None, float | None, str]:
    """One row's (estimate, ci_low, ci_high, note) after the blank rules: an unidentified estimate is blank with
    its reason; an interval that rests on too few dilemmas is blank with its reason (an interval that is
    already blank keeps its own reason). An IntervalRule also puts a shown interval (bootstrap.interval's:
    t(G - 1) × SE) under the one standard: the SE gets the judge part, and t the degrees of freedom of
    the effective-dilemmas rule, combined with the judge part's (pairwise.satterthwaite)."""
    why_est, why_iv = reasons[0], reasons[1]
    if why_est:
        return None, None, None, why_est
    if why_iv and lo is not None:
        return est, None, None, why_iv
    if isinstance(reasons, IntervalRule) and est is not None and lo is not None and hi is not None \
            and reasons.df is not None and reasons.dilemmas >= MIN_DILEMMAS:
        lo, hi = restandardise(est, lo, hi, reasons)
    return est, lo, hi, note


def restandardise(est: float, lo: float, hi: float, rule: IntervalRule) -> tuple[float, float]:
    """The 95% interval t(G - 1) × SE (clipped to the scale for a score) as t(df) × SE' (see apply_blank)."""
    from ebtui.core.analysis.bootstrap import SCALE, t_quantile
    from ebtui.core.analysis.pairwise import satterthwaite

    G = rule.dilemmas
    half = max(est - lo, hi - est)  # a clipped end is the shorter one
    se_b = half / t_quantile(0.975, G - 1)
    se, df = satterthwaite(se_b, float(rule.df or G - 1), rule.judge_var, rule.judge_df)
    new = STANDARD.critical(df, 1) * se
    low, high = est - new, est + new
    if rule.clip:
        low, high = max(low, SCALE[0]), min(high, SCALE[1])
    return low, high
