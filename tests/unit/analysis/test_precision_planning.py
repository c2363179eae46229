"""Variance components and precision planning, checked against planted truth (tests/support/sim_vc.py): the components
are recovered; the planned half-width matches the half-width the real fit + dilemma bootstrap obtain; where
the plan promises 80% power the interval excludes 0 that often; `ebtui plan` and `report --json` carry them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.analysis.fit import fit
from ebtui.core.analysis.intervals import pairwise_tables
from ebtui.core.analysis.precision import (
    detectable_gap,
    power,
    predict_pairs,
    reported_pairs,
    rows_of_exchanges,
)
from ebtui.core.analysis.variance import (
    COMPONENTS,
    DEFAULTS,
    estimate_components,
    judgment_rows,
    variance_components,
)
from ebtui.core.tournament.planner import make_plan
from tests.support.factories import open_store
from tests.support.sim_vc import Planted, generate, planted, schedule_for


def same(m: str) -> str:
    return m


# ---- variance components ----------------------------------------------------------------------------------


def _mean_components(take: Callable[[list[Any], int], list[Any]]) -> dict[str, float]:
    """Henderson III's raw estimates, averaged over 12 planted tournaments of 10 dilemmas with judge panels;
    `take(rows, seed)` is what each fit is given of a tournament's judgment rows."""
    from ebtui.core.analysis.variance import _estimate, _prepare, _separable

    p = planted(skill=(6.8, 6.4, 6.1, 5.9, 5.6), dilemma=0.3, model_dilemma=0.15, exchange=0.1, judge=0.3,
                judge_model=0.05, residual=0.3)
    got: dict[str, list[float]] = {k: [] for k in COMPONENTS}
    for seed in range(12):
        rows = take(judgment_rows(generate(p, dilemmas=10, judges="panel", seed=seed), same), seed)
        comps, why = _separable(rows)
        assert comps == list(COMPONENTS[:-1]) and not why
        est = _estimate(_prepare(rows), comps)
        assert est is not None
        for k, v in est.items():
            got[k].append(v)
    return {k: float(np.mean(v)) for k, v in got.items()}


def test_components_are_recovered_on_average_over_planted_tournaments() -> None:
    """Henderson III is unbiased: averaged over seeds, each estimate is near its planted value (the raw
    estimates, before truncation at 0, are what is unbiased)."""
    mean = _mean_components(lambda rows, _seed: rows)
    # the well-replicated ones tightly; dilemma and judge (10 and 5 levels a seed) loosely
    assert mean["residual"] == pytest.approx(0.3 + 0.012, abs=0.03)  # + the integer rounding of scores
    assert mean["exchange"] == pytest.approx(0.1, abs=0.04)
    assert mean["model_dilemma"] == pytest.approx(0.15, abs=0.05)
    assert mean["judge_model"] == pytest.approx(0.05, abs=0.03)
    assert mean["dilemma"] == pytest.approx(0.3, abs=0.12)
    assert mean["judge"] == pytest.approx(0.3, abs=0.15)


def test_intervals_come_from_each_components_reduction_and_hold_the_estimate() -> None:
    p = planted(exchange=0.15)
    vc = variance_components(generate(p, dilemmas=8, judges="panel", seed=3), same, replicates=40)
    assert vc.source == "estimated" and vc.dilemmas == 8
    assert vc.replicates == 0  # every component has a reduction with 2+ df: no dilemma resampling needed
    for k in COMPONENTS:
        c = vc.components[k]
        assert c.variance is not None and c.variance >= 0 and "chi-square interval" in c.note
        assert c.low is not None and c.high is not None and c.low <= c.variance <= c.high
    js = vc.json()
    assert js["bootstrap"] is None and "reduction in sums of squares" in js["method"]
    assert [c["component"] for c in js["components"]] == list(COMPONENTS)
    assert sum(c["share"] for c in js["components"] if c["share"] is not None) == pytest.approx(1.0)


def test_rotate_design_cannot_separate_exchange_from_residual_and_says_so() -> None:
    vc = variance_components(generate(planted(), dilemmas=6, judges="rotate", seed=1), same, replicates=0)
    ex = vc.components["exchange"]
    assert ex.variance is None and "two judges" in ex.note
    assert any("counted in the residual" in n for n in vc.notes)
    assert vc.value("exchange") == 0.0  # planned with as 0: its variance sits in the residual


def test_no_scores_give_the_documented_defaults_and_say_so() -> None:
    vc = estimate_components([])
    assert vc.source == "defaults" and vc.values() == DEFAULTS
    assert "defaults" in vc.notes[0].lower()
    assert all(c["note"] == "default" for c in vc.json()["components"])


# ---- planning against simulation ---------------------------------------------------------------------------


def _obtained(p: Planted, G: int, mode: str, seeds: range, pair: tuple[str, str] | None = None,
              replicates: int = 200) -> tuple[list[float], list[bool]]:
    """The report's pairwise table (the real fit, dilemma bootstrap + judges as a sample, simultaneous over the
    pairs) on simulated tournaments: mean pairwise half-width per seed, and (for `pair`) whether its interval
    excluded 0."""
    halves, excl = [], []
    for seed in seeds:
        jf = fit(generate(p, dilemmas=G, judges=mode, seed=seed), same)
        assert jf is not None
        comp = pairwise_tables(jf.design, "as_judged", replicates=replicates, seed=seed).comparison
        assert comp is not None
        got = reported_pairs(comp)
        halves.append(float(np.mean([o.half_width for o in got if o.half_width is not None])))
        if pair is not None:
            o = next(o for o in got if (o.a, o.b) == pair)
            assert o.half_width is not None
            excl.append(abs(o.estimate) > o.half_width)
    return halves, excl


def _predicted(p: Planted, G: int, mode: str) -> float:
    preds = predict_pairs(rows_of_exchanges(schedule_for(p, dilemmas=G, judges=mode)), p.vc)
    return float(np.mean([q.half_width for q in preds]))


def test_planned_half_width_matches_the_obtained_one() -> None:
    """Against the half-width the report's pairwise table prints (simultaneous, judges as a sample), 4 models
    judging each other in rotation on 6 dilemmas (the slow test below runs the whole grid on 100 tournaments,
    within 10%). Measured: 0.96 of the obtained mean here (0.91 before the plan counted the exchange variance
    in the residual the judge x model estimate is made against); the mean of 14 tournaments has a standard
    error near 6%, hence 15% here."""
    p = planted()
    halves, _ = _obtained(p, 6, "rotate", range(14), replicates=150)
    assert _predicted(p, 6, "rotate") == pytest.approx(float(np.mean(halves)), rel=0.15)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["rotate", "panel"])
@pytest.mark.parametrize("G", [4, 8, 16])
def test_planned_half_width_matches_the_obtained_one_on_the_grid(mode: str, G: int) -> None:
    """4 models judging each other. In rotation the predicted mean half-width is within 10% of the printed one
    over 100 tournaments (measured 0.98 / 1.01 / 0.96 at 4 / 8 / 16 dilemmas, docs/STATISTICS.md): at 16
    dilemmas the printed half-width rests mostly on the judge x model estimate (5 df), so the mean of 40
    tournaments still has a standard error near 5% and 20 can miss by 15% (seeds 0-19: 0.86). Panels: 30
    tournaments, within 25%."""
    p = planted(dilemma=0.3, model_dilemma=0.15, exchange=0.1, judge=0.3, judge_model=0.05, residual=0.3)
    halves, _ = _obtained(p, G, mode, range(100 if mode == "rotate" else 30), replicates=150)
    ratio = _predicted(p, G, mode) / float(np.mean(halves))
    assert (0.90 <= ratio <= 1.10) if mode == "rotate" else (0.75 <= ratio <= 1.25), ratio


def _power_case(mode: str, G: int, target: float) -> tuple[Planted, float]:
    """A planted gap between m1 and m2 that the plan gives `target` power."""
    base = planted(skill=(6.5, 6.5, 6.0, 5.7))
    q = predict_pairs(rows_of_exchanges(schedule_for(base, dilemmas=G, judges=mode)), base.vc,
                      pairs=[("m1", "m2")])[0]
    delta = detectable_gap(q.se, G, target=target, se_true=q.se_true, df=q.df, tests=q.tests)
    assert delta is not None
    assert power(delta, q.se, G, se_true=q.se_true, df=q.df, tests=q.tests) == pytest.approx(target, abs=1e-3)
    return planted(skill=(6.5 + delta, 6.5, 6.0, 5.7)), delta


def test_a_plan_counts_an_exchange_variance_it_cannot_separate_in_the_residual() -> None:
    """Where every exchange is judged once the estimator cannot separate the exchange variance: it is in the
    residual the judge x model estimate is made against, so the plan's reduction for that estimate (its df and
    sampling spread) must count it there; on a panel, where the exchange is separable, it is its own term.
    (With it counted, the plan's sd of the estimate at 16 dilemmas is 0.0407, the measured sd over 400
    tournaments 0.0407; without, 0.0384.)"""
    from ebtui.core.analysis.precision import _variance_rows
    from ebtui.core.analysis.variance import planned_reduction

    p = planted()
    moved = {**p.vc, "exchange": 0.0, "residual": p.vc["residual"] + p.vc["exchange"]}
    dropped = {**p.vc, "exchange": 0.0}
    rotate = _variance_rows(rows_of_exchanges(schedule_for(p, dilemmas=4, judges="rotate")))
    got, same_as_moved, without = (planned_reduction(rotate, vc, "judge_model") for vc in (p.vc, moved, dropped))
    assert got is not None and without is not None
    assert got == same_as_moved and got[2] > without[2]
    panel = _variance_rows(rows_of_exchanges(schedule_for(p, dilemmas=4, judges="panel")))
    on_panel, panel_moved = (planned_reduction(panel, vc, "judge_model") for vc in (p.vc, moved))
    assert on_panel is not None and panel_moved is not None and on_panel != panel_moved


def test_where_the_plan_promises_power_the_interval_excludes_zero() -> None:
    p, _ = _power_case("rotate", 6, 0.9)
    _, excl = _obtained(p, 6, "rotate", range(100, 124), pair=("m1", "m2"), replicates=150)
    assert np.mean(excl) >= 0.75


def test_planned_power_matches_the_achieved_power_at_four_dilemmas() -> None:
    """At 4 dilemmas the interval is a simultaneous t interval on few degrees of freedom: the plan's power is a
    noncentral t with the interval's predicted df and the standard's critical value, so where it promises 80%
    about 80% of tournaments exclude 0 (40 seeds: sd of the rate 0.06; the slow test_planned_power_is_calibrated
    checks it on 400). Measured 0.80 here; a plan that ignored the simultaneous critical value (tests=1) plants
    a gap these seeds find 0.12 of the time, the normal approximation's 0.05."""
    p, _ = _power_case("rotate", 4, 0.8)
    _, excl = _obtained(p, 4, "rotate", range(900, 940), pair=("m1", "m2"), replicates=150)
    assert abs(float(np.mean(excl)) - 0.8) <= 0.15
    # the normal approximation would promise 80% for a gap the t-based interval finds far less often
    q = predict_pairs(rows_of_exchanges(schedule_for(p, dilemmas=4, judges="rotate")), p.vc, pairs=[("m1", "m2")])[0]
    normal_gap = (1.96 + 0.84) * q.se_true
    assert power(normal_gap, q.se, 4, se_true=q.se_true, df=q.df, tests=q.tests) < 0.6


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "G"), [("rotate", 4), ("rotate", 8), ("rotate", 12), ("panel", 8)])
def test_planned_power_is_calibrated(mode: str, G: int) -> None:
    """400 seeds (sd of the achieved rate 0.02): achieved within 0.06 (3 sd) of the promised 0.8, the interval
    being the pairwise table's (the standard, judges as a sample). (The 0.833 / 0.818 / 0.812 measured for
    this test before were of the per-pair dilemma-bootstrap interval the report no longer prints.)"""
    p, _ = _power_case(mode, G, 0.8)
    _, excl = _obtained(p, G, mode, range(500, 900), pair=("m1", "m2"))
    assert abs(float(np.mean(excl)) - 0.8) <= 0.06


def test_more_dilemmas_shrink_what_more_judges_cannot() -> None:
    """With model x dilemma variance dominating, repeats and judges buy little; dilemmas buy the precision."""
    vc = {"dilemma": 0.2, "model_dilemma": 0.4, "exchange": 0.02, "judge": 0.2, "judge_model": 0.0, "residual": 0.05}
    plan = make_plan(["a", "b", "c", "d", "e"], vc, dilemma_grid=(4, 8), repeats=(1, 3))
    hw = {(d.judge_mode, d.repeats, d.dilemmas): d.half_width for d in plan.designs}
    assert hw[("rotate", 3, 4)] > 0.9 * hw[("rotate", 1, 4)]  # tripling the work on 4 dilemmas: < 10% narrower
    assert hw[("panel", 1, 4)] > 0.9 * hw[("rotate", 1, 4)]
    assert hw[("rotate", 1, 8)] < 0.7 * hw[("rotate", 1, 4)]  # doubling the dilemmas: much narrower


def test_the_plan_answers_how_many_dilemmas_and_says_when_the_document_is_short() -> None:
    plan = make_plan(["a", "b", "c", "d"], DEFAULTS, delta=1.0, document_dilemmas=8, dilemma_grid=(4, 8),
                     repeats=(1,))
    ans = plan.answer
    assert ans is not None and ans["design"] is not None
    need = ans["design"]["dilemmas"]
    assert need > 8 and not ans["enough_dilemmas_in_document"] and "only 8 dilemmas" in ans["message"]
    best = next(d for d in plan.designs if d.dilemmas == need and d.judge_mode == ans["design"]["judge_mode"])
    assert best.detectable_gap is not None and best.detectable_gap <= 1.0
    fewer = [d for d in plan.designs if d.judge_mode == best.judge_mode and d.dilemmas == need - 1]
    assert all(d.detectable_gap is not None and d.detectable_gap > 1.0 for d in fewer) or not fewer


def test_with_judges_as_a_sample_more_dilemmas_cannot_find_every_gap_and_the_plan_says_so() -> None:
    """Four models judging each other: the judge x model variation (0.04, the default) is averaged over two
    judges a pair; its part of a difference's variance does not shrink with dilemmas, so a 0.6 gap needs more
    judges — the plan says so instead of asking for hundreds of dilemmas. Without that variation the same gap
    is found with some number of dilemmas."""
    plan = make_plan(["a", "b", "c", "d"], DEFAULTS, delta=0.6, dilemma_grid=(8,), repeats=(1,))
    assert plan.answer is not None and plan.answer["design"] is None
    assert "only more judges" in plan.answer["message"]
    no_jm = make_plan(["a", "b", "c", "d"], {**DEFAULTS, "judge_model": 0.0}, delta=0.6, dilemma_grid=(8,),
                      repeats=(1,))
    assert no_jm.answer is not None and no_jm.answer["design"] is not None


# ---- the command line --------------------------------------------------------------------------------------


def test_plan_json_lists_designs_with_the_contract_keys(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["plan", "--models", "3", "--delta", "0.8", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    keys = {"dilemmas", "judges_per_exchange", "repeats", "half_width", "detectable_gap", "calls", "cost_usd"}
    assert out["designs"] and all(keys <= set(d) for d in out["designs"])
    assert out["variance_components"]["source"] == "defaults"
    d4 = next(d for d in out["designs"] if d["dilemmas"] == 4 and d["judge_mode"] == "rotate" and d["repeats"] == 1)
    assert d4["calls"] == 4 * 6 * 5  # 6 ordered pairings, 4 team calls + 1 judge each
    assert out["answer"]["delta"] == 0.8


def test_plan_from_a_saved_tournament_uses_its_estimates_and_prices(tmp_path: Path) -> None:
    store = open_store(tmp_path / "saved")
    for r in generate(planted(), dilemmas=5, judges="panel", seed=2):
        store.save_round(r)
    store.close()
    res = CliRunner().invoke(cli, ["plan", "--from", "t-vc", "--store", str(tmp_path / "saved"), "--models", "4",
                                   "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["variance_components"]["source"] == "estimated"
    assert out["variance_components"]["n_scores"] == 5 * 12 * 2 * 2
    bad = CliRunner().invoke(cli, ["plan", "--from", "t-none", "--store", str(tmp_path / "saved")])
    assert bad.exit_code == 2 and "no rounds of that tournament" in bad.output


def test_plan_prices_designs_from_a_config(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text("\n".join(
        f'[models.{m}]\nprovider = "openai"\nmodel = "gpt-x"\nprice_in = 1.0\nprice_out = 4.0\n'
        for m in ("a", "b", "c", "d")), encoding="utf-8")
    cfg = tmp_path / "t.toml"
    cfg.write_text('models = ["a", "b", "c", "d"]\n', encoding="utf-8")
    res = CliRunner().invoke(cli, ["--models", str(models), "plan", "--config", str(cfg), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    rot = {d["dilemmas"]: d for d in out["designs"] if d["judge_mode"] == "rotate" and d["repeats"] == 1}
    assert rot[4]["cost_usd"] > 0 and rot[8]["cost_usd"] > rot[4]["cost_usd"]
    assert 0 < rot[4]["batch_cost_usd"] <= rot[4]["cost_usd"]


def test_report_json_carries_variance_components_and_the_detectable_gap(tmp_path: Path) -> None:
    store = open_store(tmp_path / "saved")
    for r in generate(planted(), dilemmas=6, judges="panel", seed=5):
        store.save_round(r)
    store.close()
    res = CliRunner().invoke(cli, ["report", "--store", str(tmp_path / "saved"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    gap = out["detectable_gap"]
    assert gap["power"] == 0.8 and gap["alpha"] == 0.05 and gap["delta"] > 0
    assert gap["delta"] > 2 * gap["se"]  # (t + t_0.8) x SE at 6 dilemmas
    vc = out["variance_components"]
    assert vc["source"] == "estimated" and {c["component"] for c in vc["components"]} == set(COMPONENTS)
    md = CliRunner().invoke(cli, ["report", "--store", str(tmp_path / "saved"), "--out", str(tmp_path / "rep")])
    assert md.exit_code == 0, md.output
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    models_section = text.split("## 1. Models")[1].split("## 2.")[0]
    assert f"Smallest detectable gap: {gap['delta']:.2f} points" in models_section
    assert "Variance components (estimated)" in models_section


def test_plan_from_a_saved_tournament_plans_its_own_design_even_without_its_models_configured(tmp_path: Path) -> None:
    from ebtui.core.records import Tournament

    store = open_store(tmp_path / "saved")
    for r in generate(planted(), dilemmas=4, judges="rotate", seed=4):
        store.save_round(r)
    store.save_tournament(Tournament(id="t-vc", name="vc", config={"models": ["m1", "m2", "m3", "m4"],
                                                                   "judges": "rotate"}))
    store.close()
    models = tmp_path / "models.toml"
    models.write_text('[models.other]\nprovider = "scripted"\n', encoding="utf-8")
    res = CliRunner().invoke(cli, ["--models", str(models), "plan", "--from", "t-vc", "--store",
                                   str(tmp_path / "saved"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["models"] == ["m1", "m2", "m3", "m4"] and out["variance_components"]["source"] == "estimated"
    assert any("no prices" in n for n in out["notes"])
    assert all(d["cost_usd"] is None for d in out["designs"])


def test_plan_half_width_target_picks_the_uniform_design_an_adaptive_run_is_compared_with() -> None:
    from ebtui.core.tournament.planner import evaluate

    res = CliRunner().invoke(cli, ["plan", "--models", "4", "--half-width", "0.9", "--json"])
    assert res.exit_code == 0, res.output
    target = json.loads(res.output)["target_half_width"]
    d = target["design"]
    assert target["half_width"] == 0.9 and target["chance_all_within"] >= 0.5
    models = [f"model-{i + 1}" for i in range(4)]
    one_fewer = evaluate(models, DEFAULTS, d["dilemmas"] - 1, d["judge_mode"], d["repeats"])
    assert one_fewer.chance_all_within(0.9) < 0.5  # the fewest dilemmas that give even odds
    assert d["half_width_max"] < 0.9  # even odds for the widest of 6 intervals needs a mean well under W


def test_a_reports_sample_of_whole_exchanges_still_recovers_the_planted_components() -> None:
    """A large report estimates its components from a seeded sample of whole exchanges
    (precision.sample_exchanges): over seeds the sampled estimates stay near the planted values, and an
    exchange is never split (both teams and every judgment of it are in, or none)."""
    from ebtui.core.analysis.precision import sample_exchanges

    def half(rows: list[Any], seed: int) -> list[Any]:
        sample = sample_exchanges(rows, len(rows) // 2, seed=seed)
        assert len(rows) // 3 < len(sample) < len(rows)
        kept = {r.exchange.rsplit("|", 1)[0] for r in sample}
        assert all((r.exchange.rsplit("|", 1)[0] in kept) == (r in sample) for r in rows)
        return sample

    mean = _mean_components(half)
    assert mean["residual"] == pytest.approx(0.3 + 0.012, abs=0.04)
    assert mean["exchange"] == pytest.approx(0.1, abs=0.06)
    assert mean["model_dilemma"] == pytest.approx(0.15, abs=0.07)
    assert mean["judge_model"] == pytest.approx(0.05, abs=0.04)
    assert mean["dilemma"] == pytest.approx(0.3, abs=0.15)
    assert mean["judge"] == pytest.approx(0.3, abs=0.15)
