"""Variance components against planted truth (ebtui.core.analysis.variance): over seeds the moment estimates
centre on the planted components and each component's 95% interval holds the planted value — balanced panels,
few dilemmas, missing cells, a judge seen on one dilemma, components at 0. The heavy study is marked slow."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ebtui.core.analysis.variance import COMPONENTS
from tests.support.sim_vc import Coverage, Planted, component_coverage, planted

#: the coverage criterion: nominal 95%; 0.85 is 6 sd of a 200-seed rate below it, so a real shortfall (the
#: old chi-square interval held a dilemma variance of 0 about half the time) fails and seed noise does not
COVER = 0.85

DESIGNS: dict[str, tuple[dict[str, float], dict[str, Any]]] = {
    "balanced, 8 dilemmas": ({}, {"dilemmas": 8}),
    "4 dilemmas": ({}, {"dilemmas": 4}),
    "dilemma and judge x model at 0": ({"dilemma": 0.0, "judge_model": 0.0}, {"dilemmas": 6}),
    "30% of scores missing": ({}, {"dilemmas": 6, "drop": 0.3}),
    "a judge on one dilemma": ({}, {"dilemmas": 5, "sparse_judge": "m4"}),
    "one rotating judge per exchange, 8 dilemmas": ({}, {"dilemmas": 8, "judges": "rotate"}),
}


def _planted(extra: dict[str, float]) -> Planted:
    p = planted()
    p.vc.update(extra)
    return p


def _check(cov: Coverage, cover: float) -> None:
    """Every separable component: coverage at least `cover`; the mean estimate within a quarter of one
    estimate's sd of the truth, plus 3 standard errors of that mean (seed noise)."""
    for k in COMPONENTS:
        if not cov.raw[k]:  # not separable in this design (exchange with one judge per exchange): blank
            assert cov.blank[k] > 0 and not cov.hits[k]
            continue
        assert cov.bias_in_sd(k) <= 0.25 + 3 / np.sqrt(len(cov.raw[k])), (k, cov.table())
        assert cov.rate(k) >= cover, (k, cov.table())


def test_components_and_intervals_on_a_light_sample_of_seeds() -> None:
    """16 seeds of the hardest design for the chi-square intervals: dilemma and judge x model planted at 0."""
    extra, design = DESIGNS["dilemma and judge x model at 0"]
    cov = component_coverage(_planted(extra), seeds=range(16), replicates=30, **design)
    _check(cov, 0.75)
    assert not any(cov.blank.values())


def test_a_component_at_zero_gets_an_interval_reaching_zero() -> None:
    cov = component_coverage(planted(dilemma=0.0), dilemmas=6, seeds=range(12), replicates=0)
    assert cov.rate("dilemma") >= 11 / 12  # the lower end reaches 0 whenever the data cannot rule 0 out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DESIGNS))
def test_intervals_cover_the_planted_components(name: str) -> None:
    extra, design = DESIGNS[name]
    cov = component_coverage(_planted(extra), seeds=range(200), **design)
    _check(cov, COVER)


def test_two_judges_leave_the_judge_intervals_blank_and_the_others_cover() -> None:
    """Two models scored by only two judges (the other two): the judge and judge x model reductions have 1 df,
    and dilemma resamples keep the same two judges, so no interval can be put on them — they are blank with the
    reason (a dilemma bootstrap held the planted judge variance in about a third of seeds). The components the
    resamples do redraw still cover."""
    from ebtui.core.analysis.variance import estimate_components, judgment_rows
    from tests.support.sim_vc import ROUNDING, generate

    p = planted()
    truth = {k: p.vc.get(k, 0.0) + (ROUNDING if k == "residual" else 0.0) for k in COMPONENTS}
    hits: dict[str, list[bool]] = {k: [] for k in COMPONENTS}
    for seed in range(40):
        rounds = [r for r in generate(p, dilemmas=6, judges="panel", seed=seed)
                  if {r.team_a_model, r.team_b_model} <= {"m3", "m4"}]
        rows = [w for w in judgment_rows(rounds, lambda m: m) if w.judge in ("m1", "m2")]
        assert {w.judge for w in rows} == {"m1", "m2"}
        vc = estimate_components(rows, replicates=30, seed=seed)
        for k in ("judge", "judge_model"):
            c = vc.components[k]
            assert c.low is None and c.high is None and "too few judges" in c.note, (k, c)
        for k in ("dilemma", "model_dilemma", "residual"):
            c = vc.components[k]
            assert c.low is not None and c.high is not None
            hits[k].append(c.low <= truth[k] <= c.high)
    for k in ("dilemma", "model_dilemma", "residual"):
        assert np.mean(hits[k]) >= 0.8, (k, np.mean(hits[k]))
