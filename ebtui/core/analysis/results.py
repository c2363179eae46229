"""The statistics every front end shows: one computation (`analyse_fit` → `Analysis`), turned into Tables
(Markdown, CSV, TUI) and into the JSON object of `ebtui report --json`. Nothing here is computed twice.
The tables (models, judges, family_preference, criteria_by_model, judge_vs_human, self_debate, dilemmas):
docs/REPORTS.md and docs/STATISTICS.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ebtui.core.analysis import columnar, intervals
from ebtui.core.analysis.bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    MIN_CLUSTERS,
    SCALE,
    Interval,
    blank_note,
    cluster_mean,
    interval,
    replicate_fits,
)
from ebtui.core.analysis.common import VIEW_AS_JUDGED, VIEW_EFFECTIVE, Cell, Table, distinct_ints
from ebtui.core.analysis.fit import Excluded, JointFit, fit
from ebtui.core.analysis.frame import Facts
from ebtui.core.analysis.intervals import Blanks, apply_blank, fit_blanks, pairwise_tables
from ebtui.core.analysis.pairwise import Robustness
from ebtui.core.families import family_function
from ebtui.core.records import Round

if TYPE_CHECKING:
    from ebtui.core.analysis.precision import PrecisionJson

ADJUSTMENT_PARAGRAPH = (
    "How the adjusted scores are made: every score is explained at once by the model that was scored, the "
    "seat it sat in (Team A or B), the judge who gave it, whether that judge is of the model's own family, the "
    "dilemma, and the criterion (one least-squares fit over all the scores). A model's adjusted mean is what "
    "the fit says it would score from the average judge, on the average dilemma, in the average seat, with no "
    "family preference. This matters because a model never judges its own rounds, so each model meets a "
    "different mix of harsh and lenient judges; the raw mean beside it is the plain average of the scores it "
    "got. A judge's offset is how much higher (+) or lower (−) it scores than the average judge. The 95% "
    "intervals come from resampling whole dilemmas (rounds on one dilemma are not independent); with fewer "
    f"than {MIN_CLUSTERS} dilemmas they are left blank."
)


@dataclass
class Analysis:
    """Every fit-based table for one view, and the JSON form."""

    view: str
    fit: JointFit | None
    tables: dict[str, Table] = field(default_factory=dict)
    dilemmas: int = 0
    seed: int = DEFAULT_SEED
    replicates: int = DEFAULT_REPLICATES
    excluded: Excluded = field(default_factory=Excluded)
    info: dict[str, object] = field(default_factory=dict)  # the fit itself: size, residual sd, notes
    #: variance_components and detectable_gap (ebtui.core.analysis.precision.report_precision; as judged only)
    precision: PrecisionJson | None = None
    robustness: Robustness | None = None  # leave-one-out checks (analysis.pairwise), with the robustness table

    def rows(self, key: str) -> list[dict[str, Cell]]:
        """A table's rows as `json` gives them."""
        rows = self.tables[key].as_dicts()
        for row in rows:  # a blank quantity is null with a `reason` (the interval note), like pairwise's
            if "interval_note" in row:
                row.setdefault("reason", row["interval_note"])
        return rows

    def json(self) -> dict[str, object]:
        out: dict[str, object] = {"fit": self.info}
        for key in self.tables:
            rows = self.rows(key)
            out[key] = rows[0] if key == "family_preference" else rows
        if self.precision is not None:
            out.update(self.precision)
        if "robustness" in self.tables:
            out["robustness"] = self.robustness
        return out


def _iv(iv: Interval) -> tuple[float | None, float | None, str]:
    return iv.low, iv.high, iv.note


def _facts(data: Sequence[Round] | Facts) -> Facts:
    return data if isinstance(data, Facts) else Facts.from_rounds(data)


def analyse_fit(data: Sequence[Round] | Facts, *, families: Mapping[str, str] | None = None,
                effective: bool = False, seed: int = DEFAULT_SEED, replicates: int = DEFAULT_REPLICATES,
                cache: Path | None = None) -> Analysis:
    """The joint fit and its tables for one view (effective=False: the judges' parsed scores), from rounds
    or from their columns (ebtui.core.analysis.frame.Facts). `cache`: a folder where the variance components
    behind the intervals and the variance table are kept (variance_cache; the store's analysis
    columns)."""
    facts = _facts(data)
    view = VIEW_EFFECTIVE if effective else VIEW_AS_JUDGED
    family_of = family_function(families)
    jf = fit(facts, family_of, effective=effective)
    a = Analysis(view, jf, seed=seed, replicates=replicates,
                 excluded=jf.excluded if jf else Excluded.of_facts(facts, effective))
    raw = columnar.model_means(facts, effective=effective)
    excluded_note = a.excluded.describe()
    common_notes = [f"Excluded: {excluded_note}."]
    if jf is not None:
        common_notes += jf.design.notes
    G = len(jf.design.dilemmas) if jf else 0
    a.dilemmas = G
    draws = replicate_fits(jf, replicates=replicates, seed=seed) if jf else np.zeros((0, 0))
    if (blank := blank_note(G)) is not None:
        common_notes.append(blank)
    if jf is not None:
        a.info = {"n_scores": len(jf.design.frame.y), "models": len(jf.design.models), "judges": len(jf.design.frame.judges),
                  "dilemmas": G, "criteria": len(jf.design.frame.criteria), "residual_sd": jf.residual_sd,
                  "seat_gap": jf.estimates.seat_gap if jf.design.has_seat else None, "full_rank": jf.full_rank,
                  # replicates holding every model and judge (the others blank only the levels they lack)
                  "replicates_used": int(np.isfinite(draws[:, :len(jf.design.models) + len(jf.design.frame.judges)])
                                         .all(axis=1).sum()) if draws.size else 0,
                  "notes": list(jf.design.notes)}

    # the judges as a sample (their variance components): once, for the blank rules and the pairwise table
    judges = intervals.judge_sample(jf.design.frame, cache) if jf is not None else None
    blanks = fit_blanks(jf.design, judges) if jf is not None else Blanks()  # unidentified or too sparse: blank
    if blanks.population:  # which judges the intervals are about (ebtui.core.analysis.pairwise.JudgeSample)
        common_notes.append(blanks.population)

    # models
    rows: list[list[Cell]] = []
    M = len(jf.design.models) if jf else 0
    for m_name, mm in raw.items():
        mean = lo = hi = None
        note = "no score"
        if jf is not None and m_name in jf.design.models:
            i = jf.design.models.index(m_name)
            est = float(np.clip(jf.estimates.adjusted[i], *SCALE))
            mean = est
            lo, hi, note = _iv(interval(est, draws[:, i] if draws.size else np.zeros(0), G, clip=SCALE))
            mean, lo, hi, note = apply_blank(blanks.model(m_name), mean, lo, hi, note)
        rows.append([m_name, family_of(m_name), mean, lo, hi, mm.mean, mm.n_rounds, mm.n_exchanges,
                     mm.n_dilemmas, mm.n_scores, note])
    a.tables["models"] = Table(
        "models", "Models: judge-adjusted mean score (95% interval) and raw mean",
        ["model", "family", "mean", "ci_low", "ci_high", "raw_mean", "n_rounds", "n_exchanges", "n_dilemmas",
         "n_scores", "interval_note"], rows, view=view,
        notes=["mean: adjusted (average judge, average dilemma, average seat and criterion, no family "
               "preference); raw_mean: the plain mean of the model's scores (ebtui.core.views.means). n_rounds "
               "counts judged rounds where the model sat at Team A or B (never rounds it only judged).",
               *common_notes])

    # judges
    rows = []
    if jf is not None:
        d = jf.design
        J = len(d.frame.judges)
        n_scores = np.bincount(d.frame.judge_idx, minlength=J)
        sums = np.bincount(d.frame.judge_idx, weights=d.frame.y, minlength=J)
        n_rounds = np.bincount(distinct_ints(d.frame.judge_idx * (len(facts) + 1) + d.frame.round_idx) // (len(facts) + 1),
                               minlength=J)
        for j, name in enumerate(d.frame.judges):
            est = float(jf.estimates.offsets[j])
            col = draws[:, M + j] if draws.size else np.zeros(0)
            lo, hi, note = _iv(interval(est, col, G) if J > 1 else Interval(None, None, "only one judge"))
            est_j, lo, hi, note = apply_blank(blanks.judge(name), est, lo, hi, note)
            rows.append([name, family_of(name), est_j, lo, hi, int(n_rounds[j]), int(n_scores[j]),
                         float(sums[j] / n_scores[j]), note])
    a.tables["judges"] = Table(
        "judges", "Judges: offset from the average judge (95% interval; negative = harsh)",
        ["judge", "family", "offset", "ci_low", "ci_high", "n", "n_scores", "raw_mean_given", "interval_note"],
        rows, view=view,
        notes=["offset: the judge's severity term in the joint fit, relative to the average judge (the offsets "
               "sum to zero), with the models it scored taken into account; n: rounds it scored; "
               "raw_mean_given: the plain mean of the scores it gave.", *common_notes])

    # family preference: the same-family term with the self-preference apart (a judge scoring its own model),
    # each with n = the (judge, model) pairs it rests on and an interval with the judge x model variance —
    # the estimator of the judge-bias section's self_and_family (ebtui.core.analysis.bias_source)
    from ebtui.core.analysis.bias_source import cached_preferences

    prefs = {p["term"]: p for p in cached_preferences(cache, facts, families=families, effective=effective, seed=seed,
                                                      replicates=replicates)} if jf is not None else {}
    fam_row: list[Cell] = [None, None, None, 0, "", 0, "no score"]
    for term, at in (("same_family", 0), ("self", 7)):
        p = prefs.get(term)
        if p is not None:
            fam_row[at:at + 7] = [p["estimate"], p["ci_low"], p["ci_high"], p["n"], "; ".join(p["pairs"]),
                                  p["n_scores"], p["interval_note"]]
        elif at:
            fam_row[at:at + 7] = [None, None, None, 0, "", 0, "no score"]
    a.tables["family_preference"] = Table(
        "family_preference", "Same-family preference: extra points a judge gives a model of its own family "
        "(not itself), and the self-preference apart",
        ["estimate", "ci_low", "ci_high", "n", "pairs", "n_scores", "interval_note",
         "self_estimate", "self_ci_low", "self_ci_high", "self_n", "self_pairs", "self_n_scores", "self_note"],
        [fam_row], view=view,
        notes=["estimate: the same_family term of a fit with the joint fit's terms plus a separate self term (a "
               "judge scoring its own model's team, `ebtui rejudge --allow-own`), i.e. adjusted for the models' "
               "skill and the judges' severity; n: the (judge, model) pairs it rests on (pairs: judge -> model). "
               "A pair's liking does not change between dilemmas, so the interval adds the judge x model "
               "variance, and is blank below 2 pairs; the same estimator as section 9's self_and_family (which "
               "also controls length, formatting, order and agreement). Families: family in models.toml, else "
               "provider, else a name heuristic (docs/STATISTICS.md).", *common_notes])

    # criteria by model (always the judges' parsed scores: comparable with other Ethics Bowl runners)
    crit = columnar.model_criterion_means(facts, effective=False)
    a.tables["criteria_by_model"] = Table(
        "criteria_by_model", "Raw mean per model and criterion (judges' scores as parsed, both seats)",
        ["model", "criterion", "raw_mean", "n"],
        [[m, c, v, n] for (m, c), (v, n) in crit.items()], view=VIEW_AS_JUDGED,
        notes=["Every score the model's teams received for the criterion (Team A and Team B seats), "
               "overrides not applied; n: scores.", common_notes[0]])

    pw = pairwise_tables(jf.design if jf else None, view, seed=seed, replicates=replicates,
                         judges=judges if jf is not None and len(jf.design.models) >= 2 else None)
    if not effective:  # precision: the as-judged view only (ebtui.core.analysis.precision)
        from ebtui.core.analysis.precision import report_precision

        a.precision, a.tables["variance_components"], gap_sentence = report_precision(
            facts, jf, draws, family_of, comparison=pw.comparison, cache=cache)  # the detectable gap of the pairwise table
        a.tables["models"].notes.insert(0, gap_sentence)
    a.tables["self_debate"] = _self_debate(jf, facts, view, seed, replicates)
    a.tables["dilemmas"] = _dilemmas(jf, facts, view)
    for key in ("self_debate", "dilemmas"):
        a.tables[key].notes.append(common_notes[0])
    a.tables.update(pw.tables)
    if jf is not None:  # the interval standard and the judges' population (ebtui.core.analysis.standard)
        a.info["intervals"] = pw.interval_info()  # pairwise, ranks, robustness (ebtui.core.analysis.pairwise)
    a.robustness = pw.robustness
    return a


def _self_debate(jf: JointFit | None, facts: Facts, view: str, seed: int, replicates: int) -> Table:
    rows: list[list[Cell]] = []
    if jf is not None:
        d = jf.design
        R = len(facts)
        # per round and seat: the sum and number of the scores in the fit
        key = d.frame.round_idx * 2 + (d.frame.seat < 0)
        sums = np.bincount(key, weights=d.frame.y, minlength=2 * R).reshape(R, 2)
        cnt = np.bincount(key, minlength=2 * R).reshape(R, 2)
        selfr = np.flatnonzero((facts.team_a == facts.team_b) & (cnt[:, 0] > 0) & (cnt[:, 1] > 0))
        gaps: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for i in selfr.tolist():  # the model sat in both seats: a self-debate
            gaps[str(facts.team_a[i])].append((float(sums[i, 0] / cnt[i, 0] - sums[i, 1] / cnt[i, 1]),
                                               str(facts.dilemma[i])))
        expected = jf.predict_gap()
        for model in sorted(gaps):
            vals = [g - expected for g, _ in gaps[model]]
            est, iv = cluster_mean(vals, [d for _, d in gaps[model]], seed=seed, replicates=replicates)
            rows.append([model, len(vals), float(np.mean([g for g, _ in gaps[model]])), expected, est,
                         iv.low, iv.high, iv.note])
    return Table(
        "self_debate", "Self-debate: Team A minus Team B when a model debates itself, against the expected gap",
        ["model", "n", "observed_gap", "expected_gap", "difference", "ci_low", "ci_high", "interval_note"],
        rows, view=view,
        notes=["expected_gap: the fit's seat effect (Team A minus Team B, same model, judge and dilemma). A "
               "difference near 0 means self-debates score as any other pairing; a negative one that Team B "
               "fares better against itself than expected. The interval treats the expected gap as known."])


def _dilemmas(jf: JointFit | None, facts: Facts, view: str) -> Table:
    titles = dict(zip(facts.dilemma.tolist(), facts.title.tolist(), strict=True))
    rows: list[list[Cell]] = []
    if jf is not None:
        d = jf.design
        G = len(d.dilemmas)
        n_rounds = np.bincount(distinct_ints(d.frame.dilemma_idx * (len(facts) + 1) + d.frame.round_idx) // (len(facts) + 1),
                               minlength=G)
        raw = np.bincount(d.frame.dilemma_idx, weights=d.frame.y, minlength=G) / np.bincount(d.frame.dilemma_idx, minlength=G)
        ident = d.identification
        for i, name in enumerate(d.dilemmas):
            why = ident.dilemma_reason(i, d.dilemmas) if ident is not None else ""  # identify.py
            rows.append([name, titles.get(name, ""), None if why else float(jf.estimates.difficulty[i]),
                         float(raw[i]), int(n_rounds[i]), why])
        rows.sort(key=lambda r: (r[2] is None, r[2] or 0.0, r[0]))
    return Table("dilemmas", "Dilemmas: difficulty effect (negative = harder than average)",
                 ["dilemma", "title", "effect", "raw_mean", "n_rounds", "reason"], rows, view=view,
                 text_columns=frozenset({"title"}),
                 notes=["effect: the dilemma's term in the joint fit (sums to zero over the dilemmas)."])


def judge_vs_human(data: Sequence[Round] | Facts, *, seed: int = DEFAULT_SEED,
                   replicates: int = DEFAULT_REPLICATES) -> Table | None:
    """Where humans overrode a score the judge gave: judge minus human, per judge (None: no such override)."""
    return columnar.judge_vs_human(_facts(data), seed=seed, replicates=replicates)


def has_overrides(data: Sequence[Round] | Facts) -> bool:
    if isinstance(data, Facts):
        return columnar.has_overrides(data)
    return any(r.judgment is not None and r.judgment.active_overrides() for r in data)
