"""The fast joint fit and bootstrap (sufficient statistics per dilemma, vectorised replicates) against a plain
row-by-row least-squares fit and the row-by-row bootstrap it replaces, on small generated tournaments."""

from __future__ import annotations

import numpy as np
import pytest

from ebtui.core.analysis.bootstrap import replicate_fits, replicate_picks
from ebtui.core.analysis.fit import Design, fit, sum_code
from ebtui.core.analysis.frame import Facts, ScoreFrame
from ebtui.core.families import family_function
from tests.support.sim_truth import default_truth, generate


def _plain_params(d: Design) -> np.ndarray:
    X = d.row_design()
    return np.linalg.lstsq(X, d.frame.y, rcond=None)[0]


def _row_bootstrap(d: Design, replicates: int, seed: int) -> np.ndarray:
    """The old loop: rows of the drawn dilemmas, the design rebuilt, normal equations solved; replicates that
    lost a model or a judge skipped."""
    G = len(d.dilemmas)
    rows_of = [np.flatnonzero(d.frame.dilemma_idx == g) for g in range(G)]
    X_fixed = d.fixed_part()
    M, J = len(d.models), len(d.frame.judges)
    out = np.full((replicates, M + J + 2), np.nan)
    for b, picks in enumerate(replicate_picks(G, replicates=replicates, seed=seed)):
        rows = np.concatenate([rows_of[g] for g in picks])
        if len(np.unique(d.frame.model_idx[rows])) < M or len(np.unique(d.frame.judge_idx[rows])) < J:
            continue
        new_dil = np.concatenate([np.full(len(rows_of[g]), k) for k, g in enumerate(picks)])
        X = np.hstack([X_fixed[rows], sum_code(new_dil, G)])
        p = np.linalg.solve(X.T @ X, X.T @ d.frame.y[rows])
        skill = np.append(p[1:M], -p[1:M].sum())
        k = M + (1 if d.has_seat else 0)
        off = np.append(p[k:k + J - 1], -p[k:k + J - 1].sum())
        fam = p[k + J - 1] if d.has_family else np.nan
        out[b] = np.concatenate([p[0] + skill, off, [fam, 2 * p[M] if d.has_seat else np.nan]])
    return out


@pytest.fixture(scope="module")
def planted() -> list:
    return generate(default_truth(), dilemmas=5, seed=3)


def test_point_estimates_equal_a_plain_least_squares_fit(planted: list) -> None:
    truth = default_truth()
    jf = fit(planted, family_function(truth.family))
    assert jf is not None and jf.full_rank
    d = jf.design
    p = _plain_params(d)
    M, J = len(d.models), len(d.frame.judges)
    np.testing.assert_allclose(jf.estimates.params, p, atol=1e-9)
    np.testing.assert_allclose(jf.estimates.adjusted, p[0] + np.append(p[1:M], -p[1:M].sum()), atol=1e-9)
    X = d.row_design()
    resid = d.frame.y - X @ p
    assert jf.residual_sd == pytest.approx(float(np.sqrt(resid @ resid / (len(d.frame.y) - X.shape[1]))), abs=1e-9)
    np.testing.assert_allclose(jf.fitted(), X @ p, atol=1e-9)
    assert np.isfinite(jf.estimates.family_pref) and d.has_seat and len(d.frame.judges) == J


def test_replicates_equal_the_row_by_row_bootstrap(planted: list) -> None:
    jf = fit(planted, family_function(default_truth().family))
    assert jf is not None
    fast = replicate_fits(jf, replicates=60, seed=11)
    slow = _row_bootstrap(jf.design, 60, 11)
    np.testing.assert_allclose(fast, slow, atol=1e-9)


def test_a_replicate_without_a_judge_blanks_only_that_judge() -> None:
    truth = default_truth()
    rounds = generate(truth, dilemmas=6, seed=5, rotate=True)
    # one judge scores on one dilemma only: most replicates lack it
    sparse = [r for r in rounds if r.judge_model != "gpt-y" or r.dilemma_id == "d1"]
    jf = fit(sparse, family_function(truth.family))
    assert jf is not None
    draws = replicate_fits(jf, replicates=200, seed=2)
    j = jf.design.frame.judges.index("gpt-y")
    M = len(jf.design.models)
    lacking = np.isnan(draws[:, M + j])
    assert 0 < lacking.sum() < len(draws)
    assert np.isfinite(draws[lacking, :M]).all()  # the models' means stand in those replicates
    assert np.isfinite(np.delete(draws[lacking], [M + j, M + len(jf.design.frame.judges)], axis=1)).all()


def test_refit_on_a_subset_equals_a_fit_of_that_subset(planted: list) -> None:
    fam = family_function(default_truth().family)
    jf = fit(planted, fam)
    assert jf is not None
    sub = jf.refit(dilemmas=["d1", "d2", "d4"])
    alone = fit([r for r in planted if r.dilemma_id in ("d1", "d2", "d4")], fam)
    assert alone is not None
    np.testing.assert_allclose(sub.adjusted, alone.estimates.adjusted, atol=1e-9)
    judges = [j for j in jf.design.frame.judges if j != "claude-x"]
    loo = jf.refit(judges=judges)
    alone = fit([r for r in planted if r.judge_model != "claude-x"], fam)
    assert alone is not None
    assert np.isnan(loo.offsets[jf.design.frame.judges.index("claude-x")])
    np.testing.assert_allclose(loo.adjusted, alone.estimates.adjusted, atol=1e-9)


def test_the_t_quantile_is_scipys() -> None:
    from scipy import stats

    from ebtui.core.analysis.bootstrap import t_quantile

    for df in (1, 2, 3, 4, 5, 7, 9, 14, 29, 49, 120, 999):
        for p in (0.9, 0.975, 0.995):
            assert t_quantile(p, df) == pytest.approx(float(stats.t.ppf(p, df)), rel=1e-10, abs=1e-10)


def test_the_long_table_keeps_every_score_in_order(planted: list) -> None:
    facts = Facts.from_rounds(planted)
    frame = ScoreFrame.build(facts, family_function(default_truth().family))
    expected = [float(v) for r in planted for t in ("a", "b")
                for v in (r.judgment.parsed_scores(t).as_dict().values()) if v is not None]
    assert frame.y.tolist() == expected
    assert frame.criteria == sorted(frame.criteria)
