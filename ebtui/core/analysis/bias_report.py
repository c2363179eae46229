"""The judge-bias part of the report: `style`, `order`, `agreement_bias`, `reliability` and `judgments` in
`report --json`, and their Markdown section. Computed once from the rounds (every judgment of every round;
see ebtui.core.analysis.judge_bias and ebtui.core.analysis.reliability)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ebtui.core.analysis.bias_types import BiasSection
from ebtui.core.analysis.bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED
from ebtui.core.analysis.common import VIEW_AS_JUDGED, Cell, Table
from ebtui.core.analysis.judge_bias import MIN_PAIRS, AgreementMap, bias_json, judgment_counts
from ebtui.core.analysis.reliability import reliability_json
from ebtui.core.records import Round
from ebtui.core.views import numbers as num

#: the report --json keys this module fills
KEYS = ("style", "order", "agreement_bias", "self_and_family", "reliability", "judgments", "judge_bias_fit")


def judge_bias_section(rounds: Sequence[Round], *, families: Mapping[str, str] | None = None,
                       agreement: AgreementMap | None = None, seed: int = DEFAULT_SEED,
                       replicates: int = DEFAULT_REPLICATES) -> BiasSection:
    """Everything of this section as JSON-ready data (the judges' parsed scores, overrides not applied)."""
    out = bias_json(rounds, families=families, agreement=agreement, seed=seed, replicates=replicates)
    return {**out, "reliability": reliability_json(rounds, seed=seed, replicates=min(replicates, RELIABILITY_REPLICATES)),
            "judgments": judgment_counts(rounds)}


#: the reliability panel's bootstrap replicates (at most)
RELIABILITY_REPLICATES = 400


BIAS_TABLE_KEYS = ("style_coefficients", "style_models", "judge_order", "agreement_with_own_view",
                   "self_and_family", "reliability_alpha", "reliability_test_retest", "criteria_structure")


def bias_tables(section: BiasSection | None) -> list[Table]:
    """The section as report tables (Markdown, CSV, TUI), from the same numbers as the JSON."""
    if not section:
        return []
    j = section["judgments"]
    fit = section["judge_bias_fit"]
    exc = fit.get("excluded")
    common = [f"Every judgment of every round counts: {j.get('judgments', 0)} judgments of {j.get('rounds', 0)} "
              f"rounds ({j.get('rejudged', 0)} added by `ebtui rejudge`, {j.get('order_ba', 0)} read with Team "
              "B's material first); repeat judgments are not independent exchanges, so intervals resample whole "
              "dilemmas, and add the judge x model variance (a judge's liking for a model, the same in every "
              "dilemma). Judges' scores as parsed (no overrides).",
              f"Excluded: {exc['rounds_without_own_judgment'] if exc else 0} rounds whose own judgment is missing "
              f"(failed or incomplete; judgments added later still count); {exc['scores_missing'] if exc else 0} "
              f"scores missing and left out (never counted as 0). Fit: {fit['n_scores']} scores over "
              f"{fit.get('dilemmas', 0)} dilemmas.",
              *(fit.get("notes") or [])]
    style = section["style"]
    out = [
        Table("style_coefficients", "Length and formatting, the team's own and relative to the other team's: "
              "points per unit (95% interval)",
              ["term", "estimate", "ci_low", "ci_high", "unit", "mean", "sd", "n", "interval_note"],
              [[c["term"], c["estimate"], c["ci_low"], c["ci_high"], c["unit"], c["mean"], c["sd"], c["n"],
                c["interval_note"]] for c in style["coefficients"]], view=VIEW_AS_JUDGED,
              notes=["One fit explains every score by model, seat, judge, self and same-family preference, dilemma "
                     "and criterion plus the team's answer length and formatting density, each also relative to "
                     "the other team's in the same judgment, and, where measured, each judge's reading-order and "
                     "own-view agreement terms (docs/STATISTICS.md).", *common]),
        Table("style_models", "Models: raw, adjusted and style-controlled mean (95% interval)",
              ["model", "raw_mean", "mean_without_style", "adjusted_mean", "ci_low", "ci_high", "n_scores",
               "interval_note"],
              [[m["model"], m["raw_mean"], m["mean_without_style"], m["adjusted_mean"], m["ci_low"], m["ci_high"],
                m["n_scores"], m["interval_note"]] for m in style["models"]], view=VIEW_AS_JUDGED,
              notes=["adjusted_mean: style-controlled — at average length and formatting, balanced reading order, "
                     "no agreement bonus; mean_without_style: the same fit without those terms; raw_mean: plain "
                     "mean of the scores.",
                     common[1]]),
        Table("judge_order", "Reading order: points to the team read first minus the team read second",
              ["judge", "effect", "ci_low", "ci_high", "flip_rate", "flip_ci_low", "flip_ci_high", "flip_pairs", "n",
               "n_ab", "n_ba", "interval_note"],
              [[o["judge"], o["effect"], o["ci_low"], o["ci_high"], o["flip_rate"], o["flip_ci_low"],
                o["flip_ci_high"], o["flip_pairs"], o["n"], o["n_ab"], o["n_ba"], o["interval_note"]]
               for o in section["order"]], view=VIEW_AS_JUDGED,
              notes=["effect is estimable for a judge that read in both orders (ebtui rejudge --order, or "
                     "judge_order = \"balanced\"); flip_rate: share of its opposite-order judgment pairs of one "
                     "transcript whose winner (higher mean score) differs.", common[1]]),
        Table("agreement_with_own_view", "Agreement with the judge's own view: points added to a team that "
              "concludes as the judge would", ["judge", "effect", "ci_low", "ci_high", "n", "n_scores",
                                               "interval_note"],
              [[a["judge"], a["effect"], a["ci_low"], a["ci_high"], a["n"], a["n_scores"], a["interval_note"]]
               for a in section["agreement_bias"]], view=VIEW_AS_JUDGED,
              notes=["The judge's own blind answer and each team's conclusion in the same terms come from "
                     "`ebtui rejudge --views` (docs/STATISTICS.md); n: team judgments with known agreement.",
                     common[1]]),
        Table("self_and_family", "Self and same-family preference: extra points a judge gives its own model, "
              "and a model of its own family (95% interval)",
              ["term", "estimate", "ci_low", "ci_high", "n", "pairs", "n_scores", "interval_note"],
              [[p["term"], p["estimate"], p["ci_low"], p["ci_high"], p["n"], "; ".join(p["pairs"]), p["n_scores"],
                p["interval_note"]] for p in section.get("self_and_family", [])], view=VIEW_AS_JUDGED,
              notes=["self: the judge scores its own model's team (judge = team model, `ebtui rejudge --allow-own`); "
                     "same_family: a model of the judge's family that is not the judge itself; both in the fit "
                     "above. n: the (judge, model) pairs each rests on (pairs: judge -> model). A pair's liking "
                     "does not change between dilemmas, so the interval adds the judge x model variance; blank "
                     f"below {MIN_PAIRS} pairs.", common[1]]),
    ]
    rel = section["reliability"]
    out.append(Table("reliability_alpha", "Krippendorff's alpha (interval) per criterion over every judgment of "
                     "each transcript", ["criterion", "alpha", "ci_low", "ci_high", "n_units", "n_values",
                                         "n_units_left_out", "interval_note"],
                     [[a["criterion"], a["alpha"], a["ci_low"], a["ci_high"], a["n_units"], a["n_values"],
                       a["n_units_left_out"], a["interval_note"]] for a in rel["alpha_by_criterion"].values()],
                     view=VIEW_AS_JUDGED,
                     notes=["A unit is one team in one exchange; units judged once are not pairable and are left "
                            "out (n_units_left_out)."]))
    out.append(Table("reliability_test_retest", "Test-retest: each judge against itself (repeat judgments, same "
                     "order)", ["judge", "alpha_mean_of_criteria", "ci_low", "ci_high", "mean_abs_diff",
                                "exact_agreement", "n", "n_score_pairs", "interval_note"],
                     [[t["judge"], t["alpha_mean_of_criteria"], t["ci_low"], t["ci_high"], t["mean_abs_diff"],
                       t["exact_agreement"], t["n"], t["n_score_pairs"], t["interval_note"]]
                      for t in rel["test_retest"]], view=VIEW_AS_JUDGED,
                     notes=["n: transcripts (team x exchange) the judge scored at least twice in one order "
                            "(ebtui rejudge --repeats 2)."]))
    corr = rel["criteria_correlations"]
    crit = list(corr["criteria"])
    rows: list[list[Cell]] = [[c, *row] for c, row in zip(crit, corr["matrix"], strict=False)]
    out.append(Table("criteria_structure", "How far the seven criteria measure one thing: their correlations",
                     ["criterion", *crit], rows, view=VIEW_AS_JUDGED,
                     notes=[f"Share of variance on the first principal component: "
                            f"{_f(rel['criteria_first_component_share'])} (1/7 = unrelated, 1 = one thing), "
                            f"over {rel['n_judgment_teams']} team judgments."]))
    return out


def _f(v: object, digits: int = 2) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return num.fixed(v, digits)
    return str(v)
