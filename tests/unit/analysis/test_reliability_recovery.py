"""Reliability against planted truth: a judge scoring each transcript twice with known noise (known test-retest
reliability) and seven criteria driven by one latent factor with known loadings (known first-component
share) — recovered by ebtui.core.analysis.reliability, with intervals that cover, sparse retests too."""

from __future__ import annotations

import numpy as np
import pytest

from ebtui.core.analysis.reliability import reliability_json
from ebtui.core.records import CRITERIA
from tests.support.sim_reliability import RelTruth, generate


def _study(truth: RelTruth, *, dilemmas: int, seeds: range, repeated: float = 1.0) -> dict[str, list[float]]:
    """Per seed: the retest alpha, whether its interval held the truth, the first criterion's alpha and the
    first-component share."""
    out: dict[str, list[float]] = {"retest": [], "hit": [], "crit0": [], "crit0_hit": [], "share": []}
    r, r0 = truth.retest_reliability(), truth.criterion_reliability(0)
    for seed in seeds:
        rel = reliability_json(generate(truth, dilemmas=dilemmas, seed=seed, repeated=repeated), replicates=200,
                               seed=seed)
        (rt,) = rel["test_retest"]
        assert rt["alpha_mean_of_criteria"] is not None and rt["ci_low"] is not None and rt["ci_high"] is not None
        out["retest"].append(rt["alpha_mean_of_criteria"])
        out["hit"].append(float(rt["ci_low"] <= r <= rt["ci_high"]))
        c0 = rel["alpha_by_criterion"][CRITERIA[0]]  # one judge: every pair of its judgments is a retest
        assert c0["alpha"] is not None and c0["ci_low"] is not None and c0["ci_high"] is not None
        out["crit0"].append(c0["alpha"])
        out["crit0_hit"].append(float(c0["ci_low"] <= r0 <= c0["ci_high"]))
        share = rel["criteria_first_component_share"]
        assert share is not None
        out["share"].append(share)
    return out


def _near(values: list[float], truth: float, slack: float = 0.0) -> bool:
    """Bias small against the estimate's own spread: the mean within a quarter SD of the truth, plus the
    mean's sampling error (2.5 SE) and `slack`."""
    v = np.asarray(values)
    sd = float(v.std(ddof=1))
    return bool(abs(float(v.mean()) - truth) <= 0.25 * sd + 2.5 * sd / np.sqrt(len(v)) + slack)


def test_the_truths_follow_from_the_planted_structure() -> None:
    one = RelTruth(loadings=(1.0,) * 7, stable=1.0, scale=3.0)
    assert one.first_component_share() == pytest.approx(1.0, abs=0.01)  # only rounding is not shared
    unrelated = RelTruth(loadings=(0.0,) * 7)
    assert unrelated.first_component_share() == pytest.approx(1 / 7)
    assert RelTruth(stable=0.0).retest_reliability() == 0.0


def test_retest_reliability_and_criteria_share_are_recovered_on_six_dilemmas() -> None:
    truth = RelTruth()
    got = _study(truth, dilemmas=6, seeds=range(40))
    assert _near(got["retest"], truth.retest_reliability())
    assert _near(got["crit0"], truth.criterion_reliability(0))
    assert _near(got["share"], truth.first_component_share())
    assert np.mean(got["hit"]) >= 0.8 and np.mean(got["crit0_hit"]) >= 0.8  # 95% nominal, 40 seeds
    # a judge that does not repeat itself at all is told from a consistent one
    noisy = _study(RelTruth(stable=0.2), dilemmas=6, seeds=range(10))
    assert max(noisy["retest"]) < min(got["retest"])


@pytest.mark.slow
@pytest.mark.parametrize(("dilemmas", "repeated"), [(4, 1.0), (12, 1.0), (6, 0.4)])
def test_retest_intervals_cover_over_many_seeds(dilemmas: int, repeated: float) -> None:
    """300 seeds: coverage of the nominal 95% interval at least 0.9 (sd of the rate about 0.013 at 0.95), so a
    real shortfall shows while seed noise does not; estimates within a quarter SD of the truth."""
    truth = RelTruth()
    got = _study(truth, dilemmas=dilemmas, seeds=range(300), repeated=repeated)
    assert np.mean(got["hit"]) >= 0.9 and np.mean(got["crit0_hit"]) >= 0.9
    assert _near(got["retest"], truth.retest_reliability())
    assert _near(got["crit0"], truth.criterion_reliability(0))
    assert _near(got["share"], truth.first_component_share())
