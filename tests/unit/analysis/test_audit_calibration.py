"""The human audit's calibration (ebtui.core.audit.calibrate) against planted truth and against the reference
PPI implementation (ppi-python) where the designs coincide. Worlds: tests/support/audit_sim.py (a hidden
human-scale score for every team x criterion; judges with a constant severity, a preference for one model and
noise). The slow test measures coverage over many tournaments (docs/STATISTICS.md, "Human audit")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ebtui.core.analysis.bootstrap import interval
from ebtui.core.analysis.fit import fit, sum_matrix
from ebtui.core.analysis.frame import Facts
from ebtui.core.audit.calibrate import MIN_JUDGMENTS, Calibration, calibrate, ratings_in_force, ref_of, tuned
from ebtui.core.audit.draw import draw, population
from ebtui.core.audit.records import Audit, HumanRating
from ebtui.core.records import CRITERIA, Judgment, Scores
from tests.support.audit_sim import AuditWorld, World, family_of, generate

ppi_py = pytest.importorskip("ppi_py")


def audited(world: World, n: int, seed: int, *, cells: int = 14) -> Audit:
    """A drawn audit whose judgments a person scored exactly as the hidden scores say (`cells` of each)."""
    a = draw(world.rounds, n, seed=seed)
    for j in a.judgments:
        for k, (t, c) in enumerate((t, c) for t in ("a", "b") for c in CRITERIA):
            if k < cells:
                a.ratings.append(HumanRating(round_id=j.round_id, judgment_id=j.judgment_id, team=t, criterion=c,
                                             score=world.hidden[(j.round_id, j.judgment_id, t, c)]))
    return a


def run(world: World, n: int, seed: int, replicates: int = 200) -> Calibration:
    return calibrate(world.rounds, [audited(world, n, seed)], family_of, seed=seed, replicates=replicates)


def test_the_draw_is_seeded_uniform_and_without_replacement() -> None:
    world = generate(AuditWorld(dilemmas=3, repeats=1), seed=0)
    a, b, c = (draw(world.rounds, 20, seed=s) for s in (5, 5, 6))
    assert [j.ref for j in a.judgments] == [j.ref for j in b.judgments] != [j.ref for j in c.judgments]
    assert len({j.ref for j in a.judgments}) == 20 and a.population == population(world.rounds)
    # uniform: over many seeds every judgment is drawn about equally often
    counts = np.zeros(len(a.population))
    for s in range(400):
        for j in draw(world.rounds, 6, seed=s).judgments:
            counts[a.population.index(j.ref)] += 1
    expected = 400 * 6 / len(a.population)
    assert abs(counts.mean() - expected) < 1e-9 and counts.std() < 3 * np.sqrt(expected)
    with pytest.raises(ValueError, match="between 1 and 36"):
        draw(world.rounds, 37, seed=1)


def test_rejudgments_are_judgments_of_their_own() -> None:
    world = generate(AuditWorld(dilemmas=3, repeats=1), seed=1)
    r = world.rounds[0]
    extra = Judgment(team_a_scores=Scores(**{c: 5 for c in CRITERIA}), judge_model="j2", key="rj-1", origin="rejudge")
    r.extra_judgments.append(extra)
    pop = population(world.rounds)
    assert f"{r.id}#rj-1" in pop and f"{r.id}#primary" in pop and len(pop) == len(world.rounds) + 1
    a = draw(world.rounds, len(pop), seed=0)
    assert any(j.judgment_id == "rj-1" for j in a.judgments)


def test_the_point_estimate_is_ppi_ols_on_the_joint_fits_design() -> None:
    """With every level in the audited sample the calibrated mean is ppi_py's PPI OLS estimate of the joint fit's
    coefficients (the same X, the same lambda), read as an adjusted mean."""
    world = generate(AuditWorld(), seed=3)
    a = audited(world, 60, seed=2)
    cal = calibrate(world.rounds, [a], family_of, replicates=100)
    from ebtui.core.analysis.judge_bias import expand_judgments

    exp = expand_judgments(world.rounds)
    jf = fit(Facts.from_rounds(exp), family_of)
    assert jf is not None
    f = jf.design.frame
    refs = [ref_of(r) for r in exp]
    latest = ratings_in_force([a])
    h = np.array([getattr(latest.get((*refs[int(f.round_idx[i])].split("#"), "a" if f.seat[i] > 0 else "b",
                                      f.criteria[int(f.crit_idx[i])])), "score", np.nan) for i in range(len(f))])
    rows = np.flatnonzero(np.isfinite(h))
    X = jf.design.row_design()
    M = len(jf.design.models)
    for k, m in enumerate(jf.design.models):
        row = next(x for x in cal.models if x["model"] == m)
        theta = ppi_py.ppi_ols_pointestimate(X[rows], h[rows], f.y[rows], X, f.y, lam=row["lambda"])
        adjusted = theta[0] + (sum_matrix(M) @ theta[1:M])[k]
        assert row["mean"] == pytest.approx(adjusted, abs=1e-8)
        lam0 = ppi_py.ppi_ols_pointestimate(X[rows], h[rows], f.y[rows], X, f.y, lam=0.0)
        assert row["human_only_mean"] == pytest.approx(lam0[0] + (sum_matrix(M) @ lam0[1:M])[k], abs=1e-8)


def test_power_tuning_matches_ppi_py_on_a_plain_mean_of_iid_draws() -> None:
    """The tuning (lambda minimising the bootstrap variance) on iid draws of a plain mean, resampled item by item:
    the estimate and the interval agree with ppi_py's PPI++ mean (its lambda from the plug-in formula)."""
    rng = np.random.default_rng(0)
    widths, gaps = [], []
    for _ in range(20):
        N, n = 2000, 150
        truth = rng.normal(6, 1.2, N)
        pred = truth + 0.4 + rng.normal(0, 0.6, N)  # a biased, noisy judge
        lab = rng.choice(N, n, replace=False)
        Y, Yhat = truth[lab], pred[lab]
        unl = np.setdiff1d(np.arange(N), lab)
        B = 2000
        bi = rng.integers(0, n, (B, n))
        bu = rng.integers(0, len(unl), (B, len(unl)))
        H, J, A = Y[bi].mean(1), Yhat[bi].mean(1), pred[unl][bu].mean(1)
        q = tuned(float(Y.mean()), float(pred[unl].mean()), float(Yhat.mean()), H, A, J, 10_000, None)
        ref = ppi_py.ppi_mean_pointestimate(Y, Yhat, pred[unl])
        lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, pred[unl], alpha=0.05)
        gaps.append(abs(q.estimate - float(np.ravel(ref)[0])))
        assert q.interval.low is not None and q.interval.high is not None
        widths.append((q.interval.high - q.interval.low) / float(np.ravel(hi)[0] - np.ravel(lo)[0]))
    assert max(gaps) < 0.03
    assert 0.9 < float(np.mean(widths)) < 1.1


def test_recovery_on_a_few_tournaments() -> None:
    """Fast version of the slow test: model means within reach of the human-scale truth and covered, judge
    biases within 0.3, never wider than the human-only interval; the judges' own interval misses the favoured
    model."""
    errors, misses = [], 0
    for seed in range(3):
        world = generate(AuditWorld(), seed=seed)
        cal = run(world, 40, seed)
        assert cal.n_judgments == 40 and cal.n_scores == 40 * 14 and not cal.reason
        for m in cal.models:
            t = world.truth[m["model"]]
            assert m["ci_low"] <= t <= m["ci_high"], (seed, m)
            errors.append(abs(m["mean"] - t))
            assert m["ci_high"] - m["ci_low"] <= m["human_only_ci_high"] - m["human_only_ci_low"] + 1e-9
            if m["model"] == "m3":
                misses += not m["judge_only_ci_low"] <= t <= m["judge_only_ci_high"]
        for j in cal.judges:
            assert abs(j["bias"] - world.bias[j["judge"]]) < 0.3, (seed, j)
        pref = {m["model"]: m["preference"] for m in cal.models}
        assert abs(pref["m3"] - 1.0) < 0.3 and all(abs(pref[m]) < 0.3 for m in ("m1", "m2", "m4"))
    assert float(np.mean(errors)) < 0.075 and misses == 3


def test_unbiased_judges_narrow_the_interval() -> None:
    """With judges that only add a little noise, the judges' scores carry most of the information: the
    calibrated interval is narrower than the human-only one (and lambda is near 1)."""
    w = AuditWorld(severity={"j1": 0.0, "j2": 0.0, "j3": 0.0}, preference=0.0, judge_noise=0.3, human_sd=1.0)
    ratios, lams = [], []
    for seed in range(2):
        cal = run(generate(w, seed), 30, seed)
        for m in cal.models:
            ratios.append((m["ci_high"] - m["ci_low"]) / (m["human_only_ci_high"] - m["human_only_ci_low"]))
            lams.append(m["lambda"])
    assert max(ratios) <= 1.0 + 1e-9 and float(np.mean(ratios)) < 0.95 and float(np.mean(lams)) > 0.5


def test_blank_with_the_reason_below_the_minimum_sample() -> None:
    world = generate(AuditWorld(dilemmas=4, repeats=1), seed=0)
    cal = run(world, MIN_JUDGMENTS - 1, 0)
    assert cal.models == [] and cal.judges == [] and f"at least {MIN_JUDGMENTS}" in cal.reason
    assert cal.json()["reason"] == cal.reason
    # audited judgments on only two dilemmas: numbers, but every interval blank with the reason
    two = [r for r in world.rounds if r.dilemma_id in ("d1", "d2")]
    a = draw(two, 20, seed=1)
    a.population = population(world.rounds)
    for j in a.judgments:
        for t in ("a", "b"):
            for c in CRITERIA:
                a.ratings.append(HumanRating(round_id=j.round_id, judgment_id=j.judgment_id, team=t, criterion=c,
                                             score=world.hidden[(j.round_id, j.judgment_id, t, c)]))
    cal = calibrate(world.rounds, [a], family_of, replicates=50)
    assert any("fewer than 3 dilemmas" in n for n in cal.notes)
    assert all(m["ci_low"] is None and m["reason"] for m in cal.models)
    assert all(j["ci_low"] is None for j in cal.judges)


def test_partly_scored_judgments_use_the_cells_given() -> None:
    world = generate(AuditWorld(), seed=5)
    cal = calibrate(world.rounds, [audited(world, 30, 5, cells=9)], family_of, replicates=100)
    assert cal.n_judgments == 30 and cal.n_scores == 30 * 9
    assert all(m["mean"] is not None for m in cal.models)


def test_a_later_rating_replaces_an_earlier_one() -> None:
    world = generate(AuditWorld(dilemmas=3, repeats=1), seed=0)
    a = audited(world, 12, 0)
    first = a.ratings[0]
    a.ratings.append(first.model_copy(update={"score": 1 if first.score != 1 else 2,
                                              "time": first.time.replace(year=first.time.year + 1)}))
    latest = ratings_in_force([a])
    assert latest[(first.round_id, first.judgment_id, first.team, first.criterion)].score != first.score
    assert len(latest) == 12 * 14


def test_interval_never_wider_than_human_only_whatever_the_draws() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        H = rng.normal(0, 1, 300)
        A = rng.normal(0, 1, 300) + rng.uniform(-1, 1) * H
        J = rng.normal(0, 1, 300) + rng.uniform(-1, 1) * H
        q = tuned(0.0, 0.1, 0.2, H, A, J, 6, None)
        assert q.interval.low is not None and q.human_only_interval.low is not None
        assert q.interval.high - q.interval.low <= q.human_only_interval.high - q.human_only_interval.low + 1e-12
        assert 0.0 <= (q.lam or 0.0) <= 1.0
    assert interval(0.0, np.zeros(10), 6).low is None  # (too few draws: blank, as everywhere)


@pytest.mark.slow
@pytest.mark.parametrize("world, n, bias_bound", [(AuditWorld(), 40, 0.3), (AuditWorld(panel=True), 40, 0.3),
                                                  (AuditWorld(dilemmas=4), 30, 0.3), (AuditWorld(), 20, 0.4)],
                         ids=["rotate-40", "panel-40", "4-dilemmas-30", "rotate-20"])
def test_coverage_over_many_tournaments(world: AuditWorld, n: int, bias_bound: float) -> None:
    """Issue #36's contract over 60 tournaments: the calibrated intervals cover the human-scale adjusted means in
    >= 90% of (model, tournament) pairs while the judge-only intervals miss the favoured model in most; MAE <
    0.075 and below the human-only sample's; judge biases within 0.3 with coverage >= 85% (with 20 audited
    judgments, about 7 per judge, errors near 0.3 happen: bound 0.4 there, docs/STATISTICS.md)."""
    cover, err, err_h, miss_fav, b_err, b_cov = [], [], [], 0, [], []
    seeds = 60
    for seed in range(seeds):
        w = generate(world, seed + 1000)
        cal = run(w, n, seed)
        for m in cal.models:
            t = w.truth[m["model"]]
            cover.append(m["ci_low"] <= t <= m["ci_high"])
            err.append(abs(m["mean"] - t))
            err_h.append(abs(m["human_only_mean"] - t))
            if m["model"] == world.favoured:
                miss_fav += not m["judge_only_ci_low"] <= t <= m["judge_only_ci_high"]
        for j in cal.judges:
            b = w.bias[j["judge"]]
            b_err.append(abs(j["bias"] - b))
            b_cov.append(j["ci_low"] is not None and j["ci_low"] <= b <= j["ci_high"])
    assert np.mean(cover) >= 0.9
    assert np.mean(err) < 0.075 and np.mean(err) <= np.mean(err_h) + 0.005
    assert miss_fav > seeds / 2
    assert max(b_err) < bias_bound and np.mean(b_cov) >= 0.85


@pytest.mark.slow
def test_unbiased_judges_never_widen_over_many_tournaments() -> None:
    w = AuditWorld(severity={"j1": 0.0, "j2": 0.0, "j3": 0.0}, preference=0.0)
    for seed in range(30):
        cal = run(generate(w, seed), 40, seed)
        for m in cal.models:
            assert m["ci_high"] - m["ci_low"] <= m["human_only_ci_high"] - m["human_only_ci_low"] + 1e-9


def test_frame_replacement_keeps_the_design() -> None:
    """(What the calibration relies on: a fit of the same rows with other scores has the same levels.)"""
    world = generate(AuditWorld(dilemmas=3, repeats=1), seed=0)
    jf = fit(Facts.from_rounds(world.rounds), family_of)
    assert jf is not None
    other = fit(dataclasses.replace(jf.design.frame, y=jf.design.frame.y + 1.0), family_of)
    assert other is not None and other.design.models == jf.design.models
    assert np.allclose(other.estimates.adjusted, jf.estimates.adjusted + 1.0)


def test_the_plan_predicts_the_audit_size_for_a_half_width() -> None:
    """From a 20-judgment audit, the size the plan asks for gives about the target half-width (the largest over
    the models, averaged over fresh audits of that size); a target below the dilemmas' floor is out of reach;
    without human scores it asks for a pilot."""
    from ebtui.core.audit.plan import audit_size

    w = AuditWorld(dilemma_sd=0.1, human_sd=1.0, dilemmas=8, repeats=2)
    ratios = []
    for seed in range(2):
        world = generate(w, seed)
        cal = run(world, 20, seed)
        now = max(m["ci_high"] - m["ci_low"] for m in cal.models) / 2
        target = 0.7 * now
        plan = audit_size(cal, target, population=len(world.rounds))
        assert plan["n_needed"] is not None and 20 < plan["n_needed"] < len(world.rounds), plan
        assert plan["floor"] < target and "audited judgments" in plan["message"]
        got = [max(m["ci_high"] - m["ci_low"] for m in run(world, plan["n_needed"], 100 + s).models) / 2
               for s in range(2)]
        ratios.append(float(np.mean(got)) / target)
        low = audit_size(cal, plan["floor"] * 0.9, population=len(world.rounds))
        assert low["n_needed"] is None and "out of reach" in low["message"]
    assert 0.6 < float(np.mean(ratios)) < 1.2, ratios
    pilot = audit_size(Calibration(reason="no human-scored judgments"), 0.2, population=100)
    assert pilot["n_needed"] is None and "pilot" in pilot["message"]
