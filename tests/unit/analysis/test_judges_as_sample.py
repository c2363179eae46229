"""Judges as a sample and the one interval standard (#34, #35), against planted truth: tournaments with 5 models
and 4 separate judges rotating over 8 dilemmas, each judge liking some models more than others (judge x model
sd 0.25, tests/support/sim_vc.py). The pairwise intervals must cover the planted gaps and the ranks, a world of
equal models must rarely show a significant pair, and `ebtui plan` must predict the half-width the pairwise
table prints and keep its power promise. Fast versions run by default; the many-seed runs are marked slow."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from ebtui.core.analysis.fit import fit
from ebtui.core.analysis.identify import identify_design
from ebtui.core.analysis.intervals import pairwise_tables
from ebtui.core.analysis.pairwise import (
    STANDARD,
    Blocks,
    Comparison,
    Data,
    JudgeSample,
    Pair,
    holm,
    pair_matrix,
    same_size_baseline,
)
from ebtui.core.analysis.precision import detectable_gap, power, predict_pairs, rows_of_exchanges
from ebtui.core.records import Round
from ebtui.core.tournament.schedule import Exchange, build_schedule
from tests.support.sim_vc import Draw, Planted

JUDGES = ["j1", "j2", "j3", "j4"]
GAPS = (7.0, 6.7, 6.5, 6.2, 6.2)
EQUAL = (6.5,) * 5


def world(skills: tuple[float, ...] = GAPS, judge_model: float = 0.0625, judges: list[str] = JUDGES) -> Planted:
    return Planted({f"m{i + 1}": s for i, s in enumerate(skills)},
                   {"dilemma": 0.25, "model_dilemma": 0.12, "exchange": 0.12, "judge": 0.2,
                    "judge_model": judge_model, "residual": 0.25}, judges=list(judges))


def schedule(p: Planted, G: int, seed: int = 0) -> list[Exchange]:
    return build_schedule(sorted(p.skill), [f"d{i + 1:02d}" for i in range(G)], judges=p.judges,
                          seed=seed).exchanges


def tournament(p: Planted, G: int, seed: int) -> list[Round]:
    return Draw(p, seed).rounds(schedule(p, G, seed))


def table(p: Planted, G: int, seed: int, replicates: int = 200) -> Comparison:
    jf = fit(tournament(p, G, seed), lambda m: m)
    assert jf is not None
    comp = pairwise_tables(jf.design, "as_judged", replicates=replicates, seed=seed).comparison
    assert comp is not None
    return comp


def true_rank_range(p: Planted, m: str) -> tuple[int, int]:
    """The ranks a model can hold under ties (1 = best)."""
    s = p.skill[m]
    return 1 + sum(v > s for v in p.skill.values()), sum(v >= s for v in p.skill.values())


def coverage(p: Planted, G: int, seeds: range) -> tuple[list[bool], list[bool], list[bool]]:
    """Per (pair, tournament): the interval covers the planted gap; per (model, tournament): the rank interval
    holds the true rank; per tournament: some pair is Holm-significant."""
    pairs, ranks, any_sig = [], [], []
    for seed in seeds:
        comp = table(p, G, seed)
        for pr in comp.pairs:
            assert pr.ci_low is not None and pr.ci_high is not None, pr.reason
            pairs.append(pr.ci_low <= p.skill[pr.a] - p.skill[pr.b] <= pr.ci_high)
        for r in comp.ranks:
            assert r.rank_low is not None and r.rank_high is not None
            lo, hi = true_rank_range(p, r.model)
            ranks.append(r.rank_low <= hi and r.rank_high >= lo)
        any_sig.append(bool(comp.significant()))
    return pairs, ranks, any_sig


# ---- the judge part: what the dilemma bootstrap cannot see ----------------------------------------------


def test_the_reports_judge_part_is_the_plans_on_the_same_design() -> None:
    """The report's coefficient of the judge x model variance in a pair's unseen variance (Blocks.crossed, on
    the fitted scores) is the plan's (predict_pairs, on the schedule): one variance model for both."""
    p = world()
    rounds = tournament(p, 6, seed=3)
    jf = fit(rounds, lambda m: m)
    assert jf is not None
    data = Data.of(jf.design.frame)
    blocks = Blocks(data, identify_design(jf.design.frame, has_seat=jf.design.has_seat,
                                          has_family=jf.design.has_family))
    pairs, K = pair_matrix(len(data.models), blocks.layout.width)
    coef = blocks.crossed(K)["judge_model"]
    only_jm = {"judge_model": 1.0, "residual": 1e-12}
    preds = predict_pairs(rows_of_exchanges(schedule(p, 6, seed=3)), only_jm,
                          pairs=[(data.models[i], data.models[j]) for i, j in pairs])
    plan = np.array([q.se ** 2 - q.se_dilemmas ** 2 for q in preds])
    assert np.all(coef > 0.05)
    np.testing.assert_allclose(coef, plan, rtol=1e-6, atol=1e-9)
    # a judge's own severity is a term of the fit: its part of any pair is 0
    assert np.allclose(blocks.crossed(K)["judge"], 0.0, atol=1e-9)


def test_the_judge_part_widens_the_interval_and_lowers_its_degrees_of_freedom() -> None:
    p = world()
    jf = fit(tournament(p, 8, seed=5), lambda m: m)
    assert jf is not None
    with_judges = pairwise_tables(jf.design, "as_judged", replicates=200, seed=5)
    these_only = pairwise_tables(jf.design, "as_judged", replicates=200, seed=5, judges=JudgeSample(4))
    assert with_judges.judges is not None and with_judges.judges.applies
    assert "judges like these 4" in " ".join(with_judges.tables["pairwise"].notes)
    assert with_judges.comparison is not None and these_only.comparison is not None
    for a, b in zip(with_judges.comparison.pairs, these_only.comparison.pairs, strict=True):
        assert a.diff == b.diff and a.se is not None and b.se is not None and a.df is not None
        assert a.judge_var > 0 and a.se > b.se and a.se_dilemmas == b.se_dilemmas
        assert a.df <= a.df_dilemmas  # type: ignore[operator]
        assert a.ci_high - a.ci_low > b.ci_high - b.ci_low  # type: ignore[operator]


def test_with_two_judges_the_intervals_are_about_these_judges_only_and_say_so() -> None:
    p = world(judges=["j1", "j2"])
    jf = fit(tournament(p, 6, seed=1), lambda m: m)
    assert jf is not None
    pw = pairwise_tables(jf.design, "as_judged", replicates=100, seed=1)
    assert pw.judges is not None and not pw.judges.applies
    assert any("about these 2 judge(s) only" in n for n in pw.tables["pairwise"].notes)
    assert pw.comparison is not None
    assert all(pr.judge_var == 0.0 for pr in pw.comparison.pairs)
    from ebtui.core.analysis.results import analyse_fit

    info = analyse_fit(tournament(p, 6, seed=1)).json()["fit"]["intervals"]  # type: ignore[index]
    assert info["judges_as_sample"] is False and "these 2 judge(s) only" in info["population"]


def test_the_standard_is_simultaneous_over_the_tables_pairs() -> None:
    """Every interval of the table is the pair's SE times the standard's critical value for the number of
    pairs that have one (Bonferroni), and one that excludes 0 is Holm-significant."""
    comp = table(world(), 8, seed=11)
    tested = [pr for pr in comp.pairs if pr.p is not None]
    assert len(tested) == 10
    for pr in tested:
        assert pr.se is not None and pr.df is not None and pr.diff is not None and pr.ci_high is not None
        assert pr.ci_high - pr.diff == pytest.approx(STANDARD.critical(pr.df, 10) * pr.se, rel=1e-9)
        if pr.ci_low is not None and (pr.ci_low > 0 or pr.ci_high < 0):
            assert pr.p_holm is not None and pr.p_holm < 0.05


# ---- coverage and false positives under judge x model variation -------------------------------------------


def test_planted_gaps_and_ranks_are_covered_under_judge_by_model_variation() -> None:
    pairs, ranks, _ = coverage(world(), 8, range(6))
    assert np.mean(pairs) >= 0.9 and np.mean(ranks) >= 0.9


def test_equal_models_rarely_show_a_significant_pair() -> None:
    _, _, any_sig = coverage(world(EQUAL), 8, range(100, 108))
    assert sum(any_sig) <= 1


@pytest.mark.slow
def test_coverage_and_false_positives_over_many_tournaments() -> None:
    """The contract (#35): pairs and ranks covered in >= 90% of (pair, tournament); equal skills: some pair
    significant in <= 10% of tournaments. Measured (200 tournaments each): see docs/STATISTICS.md."""
    pairs, ranks, _ = coverage(world(), 8, range(200))
    assert np.mean(pairs) >= 0.9 and np.mean(ranks) >= 0.9
    _, _, any_sig = coverage(world(EQUAL), 8, range(1000, 1200))
    assert np.mean(any_sig) <= 0.10


# ---- the judge x model estimate itself, against planted truth ------------------------------------------------

#: the other world the plan is checked in (test_precision_planning.py): 4 models judging each other in rotation
#: (a model never judges its own exchanges), judge x model variance 0.05
SELF_JUDGING = dict(dilemma=0.3, model_dilemma=0.15, exchange=0.1, judge=0.3, judge_model=0.05, residual=0.3)


def _judge_model_estimates(kind: str, G: int, seeds: range) -> np.ndarray:
    """Henderson III's raw judge x model estimate (before truncation at 0) over planted tournaments: the contract
    world (5 models, 4 separate judges rotating) or 4 models judging each other in rotation."""
    from ebtui.core.analysis.variance import _estimate, _prepare, _separable, judgment_rows
    from tests.support.sim_vc import generate, planted

    out = []
    for seed in seeds:
        rounds = (tournament(world(EQUAL), G, seed) if kind == "contract"
                  else generate(planted(**SELF_JUDGING), dilemmas=G, judges="rotate", seed=seed))
        rows = judgment_rows(rounds, lambda m: m)
        comps, _why = _separable(rows)
        est = _estimate(_prepare(rows), comps)
        assert est is not None and "judge_model" in est
        out.append(est["judge_model"])
    return np.array(out)


def _within(v: np.ndarray, truth: float, ses: float) -> None:
    se = float(v.std(ddof=1) / np.sqrt(len(v)))
    assert abs(float(v.mean()) - truth) <= ses * se, (float(v.mean()), se, truth)


@pytest.mark.parametrize(("kind", "truth"), [("contract", 0.0625), ("self", 0.05)])
def test_the_judge_by_model_estimate_is_unbiased_in_both_worlds(kind: str, truth: float) -> None:
    """Its mean over 16 tournaments of 5 dilemmas lies within 3 standard errors of the planted variance (the
    slow test: 400 tournaments of 16, within 2). A model never judging its own exchanges leaves the
    estimator's model true (the missing cells are simply not there), so it stays unbiased."""
    _within(_judge_model_estimates(kind, 5, range(16)), truth, 3.0)


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "truth"), [("contract", 0.0625), ("self", 0.05)])
def test_the_judge_by_model_estimate_is_unbiased_over_many_tournaments(kind: str, truth: float) -> None:
    """400 tournaments of 16 dilemmas: within 2 standard errors of the planted value. (Measured: 4 models
    judging each other 0.0502, SE 0.0020, for 0.05; the 0.076 over the 20 tournaments behind the old table was
    those tournaments' luck, 2.4 SE.)"""
    _within(_judge_model_estimates(kind, 16, range(400)), truth, 2.0)


# ---- the plan predicts what the table prints ----------------------------------------------------------------


def _half_widths(p: Planted, G: int, seeds: range) -> float:
    out = []
    for seed in seeds:
        comp = table(p, G, seed, replicates=150)
        out.append(np.mean([(pr.ci_high - pr.ci_low) / 2 for pr in comp.pairs
                            if pr.ci_low is not None and pr.ci_high is not None]))
    return float(np.mean(out))


def _predicted(p: Planted, G: int) -> float:
    return float(np.mean([q.half_width for q in predict_pairs(rows_of_exchanges(schedule(p, G)), p.vc)]))


def test_the_plans_half_width_is_the_tables() -> None:
    p = world(EQUAL)
    assert _predicted(p, 8) == pytest.approx(_half_widths(p, 8, range(6)), rel=0.25)


@pytest.mark.slow
@pytest.mark.parametrize("G", [4, 8, 16])
def test_the_plans_half_width_is_the_tables_at_4_8_16_dilemmas(G: int) -> None:
    """Within 10% over 40 tournaments (measured 1.02 / 1.03 / 1.04 at 4 / 8 / 16 dilemmas; over 60: 0.99 / 1.01 /
    1.03, docs/STATISTICS.md)."""
    p = world(EQUAL)
    ratio = _predicted(p, G) / _half_widths(p, G, range(40))
    assert 0.90 <= ratio <= 1.10, ratio


def _promised(G: int, target: float) -> Planted:
    """m1 ahead of m2 by the gap the plan finds with `target` power (the others equal to m2)."""
    base = world(EQUAL)
    q = predict_pairs(rows_of_exchanges(schedule(base, G)), base.vc, pairs=[("m1", "m2")])[0]
    delta = detectable_gap(q.se, G, target=target, se_true=q.se_true, df=q.df, tests=q.tests)
    assert delta is not None
    assert power(delta, q.se, G, se_true=q.se_true, df=q.df, tests=q.tests) == pytest.approx(target, abs=1e-3)
    return world((6.5 + delta, 6.5, 6.5, 6.5, 6.5))


def _excluded(p: Planted, G: int, seeds: range) -> float:
    hits = []
    for seed in seeds:
        pr = table(p, G, seed, replicates=150).pair("m1", "m2")
        assert pr is not None and pr.ci_low is not None
        hits.append(pr.ci_low > 0)
    return float(np.mean(hits))


def test_where_the_plan_promises_power_the_tables_interval_excludes_zero() -> None:
    assert _excluded(_promised(8, 0.9), 8, range(300, 310)) >= 0.7


@pytest.mark.slow
@pytest.mark.parametrize("G", [4, 8, 16])
def test_where_the_plan_promises_80_percent_the_table_excludes_zero_in_70(G: int) -> None:
    assert _excluded(_promised(G, 0.8), G, range(400, 500)) >= 0.7


# ---- robustness against a same-size baseline ---------------------------------------------------------------


def _comparison(pairs: list[Pair]) -> Comparison:
    data = Data(["a", "b", "c"], ["j"], ["d1", "d2", "d3", "d4"], 1, np.zeros(0), *(np.zeros(0, int),) * 4,
                np.zeros(0), np.zeros(0))
    return Comparison(data, None, pairs)  # type: ignore[arg-type]


def test_a_pair_significant_only_with_every_dilemma_is_not_blamed_on_the_one_left_out() -> None:
    """With one dilemma fewer and nothing else changed, a barely significant pair stops being significant:
    the same-size baseline leaves it out, so losing it is not flagged; a strong pair stays in the baseline."""
    def pair(a: str, b: str, diff: float) -> Pair:
        p = float(2 * special.stdtr(3.0, -abs(diff) / 0.1))
        return Pair(a, b, diff, None, None, p, None, 4, se_dilemmas=0.1, df_dilemmas=3.0, se=0.1, df=3.0)

    barely = pair("a", "b", 0.5)  # Holm p 0.031 with 3 df; 0.099 with 2 df and the SE x sqrt(4/3)
    strong = pair("a", "c", 2.0)
    comp = _comparison([barely, strong, pair("b", "c", 0.0)])
    full = holm([pr.p for pr in comp.pairs])
    assert full[0] is not None and full[0] < 0.05
    base = same_size_baseline(comp, "dilemma", 4)
    assert ("a", "c") in base and ("a", "b") not in base
    # leaving one judge out of 3 (the whole SE x sqrt(3/2), same df): the barely significant pair goes too
    assert same_size_baseline(comp, "judge", 3) == {("a", "c")}


# ---- the family term under judge x model variation ---------------------------------------------------------

FAMILIES = {"m1": "fa", "m2": "fa", "j1": "fa", "m3": "fb", "m4": "fc", "m5": "fd", "j2": "fe", "j3": "ff", "j4": "fg"}


def _family_interval(seed: int) -> tuple[float, float]:
    """The report's same-family interval when j1 shares a family with m1 and m2 and no preference is planted
    (its liking for them is only its judge x model draw)."""
    from ebtui.core.analysis.results import analyse_fit

    out = analyse_fit(tournament(world(), 8, 500 + seed), families=FAMILIES).json()
    f = out["family_preference"]
    row = f[0] if isinstance(f, list) else f
    assert row["ci_low"] is not None, row
    return float(row["ci_low"]), float(row["ci_high"])


def _mixed(seed: int, self_pref: float) -> tuple[list[Round], dict[str, str]]:
    """Three judges that are models (self pairs) and one outside judge sharing a family with two models, no
    same-family preference planted, each (judge, model) pair with its own liking (sd 0.25)."""
    from tests.support.judge_bias_sim import generate, mixed_truth

    truth = mixed_truth(self_pref=self_pref, family_pref=0.0, judge_model_sd=0.25, seed=seed)
    rounds, _ = generate(truth, dilemmas=8, seed=seed, both_orders=False, rotate=True)
    return rounds, truth.families


def _section2(seed: int, self_pref: float, replicates: int) -> dict[str, dict[str, object]]:
    from ebtui.core.analysis.bias_source import preferences_of_facts
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.families import family_function

    rounds, families = _mixed(seed, self_pref)
    rows = preferences_of_facts(Facts.from_rounds(rounds), family_function(families), seed=seed,
                                replicates=replicates)
    return {str(r["term"]): dict(r) for r in rows}


def _covers(row: dict[str, object], value: float) -> bool:
    lo, hi = row["ci_low"], row["ci_high"]
    return isinstance(lo, float) and isinstance(hi, float) and lo <= value <= hi


def test_section_2_family_row_is_the_self_and_family_estimator() -> None:
    """Section 2's family_preference is the judge-bias fit's same-family term with the self-preference apart
    (no longer pooled into it): n counts (judge, model) pairs, and the interval carries the judge x model
    variance (wider than the dilemma bootstrap alone)."""
    from ebtui.core.analysis.bias_source import long_table_of_facts
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.analysis.judge_bias import fit_table
    from ebtui.core.analysis.results import analyse_fit
    from ebtui.core.families import family_function

    rounds, families = _mixed(3, 0.8)
    row = analyse_fit(rounds, families=families, replicates=200, seed=3).json()["family_preference"]
    assert isinstance(row, dict)
    want = _section2(3, 0.8, 200)
    fam, me = want["same_family"], want["self"]
    assert (row["estimate"], row["ci_low"], row["ci_high"], row["n"]) == (fam["estimate"], fam["ci_low"],
                                                                        fam["ci_high"], 2)
    assert row["pairs"] == "j-out -> m-delta; j-out -> m-eps" and row["self_n"] == 3
    assert (row["self_estimate"], row["self_ci_low"]) == (me["estimate"], me["ci_low"])
    assert abs(float(me["estimate"]) - 0.8) < 0.3 and _covers(me, 0.8) and _covers(fam, 0.0)  # type: ignore[arg-type]
    # the same fit's dilemma-only interval is narrower: the pairs' liking is the same on every dilemma
    bf = fit_table(long_table_of_facts(Facts.from_rounds(rounds), family_function(families)), replicates=200,
                   seed=3, style=False)
    assert bf is not None and bf.judge_model is not None and bf.judge_model.sd is not None
    est, with_judges = bf.term("family")
    bf.judge_model = None
    _, dilemmas_only = bf.term("family")
    assert est == fam["estimate"] and with_judges.low is not None and dilemmas_only.low is not None
    assert with_judges.high - with_judges.low > dilemmas_only.high - dilemmas_only.low  # type: ignore[operator]


def _family_cover(seeds: range, replicates: int) -> dict[float, list[bool]]:
    return {sp: [_covers(_section2(seed, sp, replicates)["same_family"], 0.0) for seed in seeds]
            for sp in (0.0, 0.5)}


def test_section_2_family_interval_covers_zero_with_self_judging_fast() -> None:
    for sp, hits in _family_cover(range(2), 60).items():  # (it covers in 0.94 of 100 seeds: the slow test)
        assert all(hits), (sp, hits)


@pytest.mark.slow
def test_section_2_family_interval_covers_zero_with_self_judging() -> None:
    """The contract (#35): planted self-preference 0 and 0.5, same-family preference 0, judge x model sd 0.25:
    Section 2's same-family interval covers 0 in >= 85% of tournaments (measured: docs/STATISTICS.md)."""
    for sp, hits in _family_cover(range(100), 200).items():
        assert np.mean(hits) >= 0.85, (sp, np.mean(hits))


@pytest.mark.slow
def test_the_family_interval_covers_zero_when_nothing_is_planted() -> None:
    hits = [lo <= 0 <= hi for lo, hi in (_family_interval(s) for s in range(100))]
    assert np.mean(hits) >= 0.85


def test_compare_uses_the_standard_and_adjusts_the_criteria() -> None:
    """`ebtui compare`: where both models played every dilemma its overall interval is the report's pairwise
    table's for that pair (simultaneous over the 10 pairs, judges as a sample); the criteria's p-values are
    Holm-adjusted over the criteria."""
    from ebtui.core.analysis.compare import compare_models

    rounds = tournament(world(), 8, 7)
    got = compare_models(rounds, "m1", "m4")
    assert "10 pairs" in got["standard"]["overall"] and "judges like these 4" in got["standard"]["population"]
    jf = fit(rounds, lambda m: m)
    assert jf is not None
    comp = pairwise_tables(jf.design, "as_judged").comparison
    assert comp is not None
    pr = comp.pair("m1", "m4")
    assert pr is not None and pr.ci_low is not None
    assert (got["diff"], got["ci_low"], got["ci_high"]) == pytest.approx((pr.diff, pr.ci_low, pr.ci_high), abs=1e-9)
    ps = [c["p"] for c in got["criteria"]]
    adj = holm(ps)
    assert [c["p_holm"] for c in got["criteria"]] == adj
    assert all(a is not None and b is not None and a >= b for a, b in zip(adj, ps, strict=True))
