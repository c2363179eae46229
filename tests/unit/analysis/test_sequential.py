"""Anytime-valid intervals for adaptive tournaments (ebtui.core.analysis.sequential), against planted truth:
the alpha spending adds up, a single look is exactly the report's pairwise interval, and — over many
emulated adaptive runs (the real AdaptiveRunner deciding, rounds generated from planted components,
tests/support/sim_adaptive.py) — the intervals at the stop hold the planted skill gaps at least 95% of the time,
whenever and however the run stopped."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ebtui.core.analysis.fit import fit
from ebtui.core.analysis.pairwise import ALPHA, Data, compare_all
from ebtui.core.analysis.sequential import LookPlan, look_quantile, measure_look
from ebtui.core.tournament.adaptive import STOP_MAX_LOOKS, STOP_TARGET, STOP_UNIFORM
from tests.support.sim_adaptive import Outcome, emulate
from tests.support.sim_vc import generate, planted


def _data(seed: int, dilemmas: int = 8) -> Data:
    p = planted(judge_model=0.0)
    jf = fit(generate(p, dilemmas=dilemmas, seed=seed), lambda m: m)
    assert jf is not None
    return Data.of(jf.design.frame)


def test_the_alpha_spending_adds_up_to_alpha_and_stops_at_the_last_look() -> None:
    plan = LookPlan()
    per = [plan.alpha_at(k) for k in range(1, plan.max_looks + 1)]
    assert sum(per) == pytest.approx(ALPHA)
    assert per[0] == pytest.approx(ALPHA * 0.1)
    assert per[1] == pytest.approx(per[2])  # the later looks share the rest equally
    assert plan.alpha_at(plan.max_looks + 1) == 0.0 and plan.alpha_at(0) == 0.0
    assert plan.spent(plan.max_looks) == pytest.approx(ALPHA)
    assert LookPlan(max_looks=1).alpha_at(1) == ALPHA
    with pytest.raises(ValueError, match="alpha spending"):
        LookPlan(max_looks=0)


def test_one_look_at_the_full_alpha_is_the_reports_pairwise_interval() -> None:
    """The looks widen the report's own interval (same draws, same degrees of freedom, Bonferroni over the
    same pairs) and nothing else: at one look spending all of alpha they are identical."""
    data = _data(1)
    comp = compare_all(data, simultaneous=True, with_ranks=False)
    look = measure_look(data, LookPlan(max_looks=1), 1)
    assert [(p.a, p.b) for p in look.pairs] == [(p.a, p.b) for p in comp.pairs]
    for mine, theirs in zip(look.pairs, comp.pairs, strict=True):
        assert mine.ci_low == pytest.approx(theirs.ci_low, abs=1e-9)
        assert mine.ci_high == pytest.approx(theirs.ci_high, abs=1e-9)
        assert mine.half_width == pytest.approx(mine.fixed_half_width, abs=1e-9)


def test_with_judges_as_a_sample_a_look_is_the_reports_interval_too() -> None:
    """With judge x model variation planted and the judges taken as a sample (as the report's pairwise table
    takes them: intervals.judge_sample of the fit's frame), one look spending all of alpha is the report's
    interval exactly, and it is wider than the dilemma-only one."""
    from ebtui.core.analysis.intervals import judge_sample

    p = planted(judge_model=0.3)
    jf = fit(generate(p, dilemmas=8, seed=4), lambda m: m)
    assert jf is not None
    data, judges = Data.of(jf.design.frame), judge_sample(jf.design.frame)
    assert judges.applies  # enough judges, a judge x model variance estimated
    comp = compare_all(data, simultaneous=True, with_ranks=False, judges=judges)
    look = measure_look(data, LookPlan(max_looks=1), 1, judges=judges)
    bare = measure_look(data, LookPlan(max_looks=1), 1)
    for mine, theirs, dil in zip(look.pairs, comp.pairs, bare.pairs, strict=True):
        assert mine.ci_low == pytest.approx(theirs.ci_low, abs=1e-9)
        assert mine.ci_high == pytest.approx(theirs.ci_high, abs=1e-9)
        assert mine.half_width is not None and dil.half_width is not None
        assert mine.half_width > dil.half_width


def test_each_look_is_wider_by_the_ratio_of_its_quantile() -> None:
    data = _data(2)
    plan = LookPlan()
    first, second = measure_look(data, plan, 1), measure_look(data, plan, 2)
    assert first.widest is not None and second.widest is not None and first.widest_fixed is not None
    assert first.widest > second.widest > first.widest_fixed
    for p1, p2 in zip(first.pairs, second.pairs, strict=True):
        assert p1.diff == p2.diff
        assert p1.half_width is not None and p2.half_width is not None
    # the ratio of two looks' half-widths is the ratio of their t quantiles (same SE, same df, same tests)
    ratio = first.pairs[0].half_width / second.pairs[0].half_width  # type: ignore[operator]
    qs = [look_quantile(df, plan.alpha_at(1), first.tests) / look_quantile(df, plan.alpha_at(2), first.tests)
          for df in np.arange(1.0, 8.0, 0.01)]
    assert min(qs) - 1e-9 <= ratio <= max(qs) + 1e-9
    past = measure_look(data, plan, plan.max_looks + 1)
    assert all(p.ci_low is None and "past the 3 planned" in p.reason for p in past.pairs)


def test_fewer_than_three_dilemmas_leave_the_intervals_blank_with_the_reason() -> None:
    data = _data(3, dilemmas=2)
    look = measure_look(data, LookPlan(), 2)
    assert look.widest is None
    assert all(p.ci_low is None and p.reason for p in look.pairs)


def _coverage(outcomes: list[Outcome]) -> tuple[float, float, float, float]:
    """Per (pair, run) and all pairs of a run at once: the anytime-valid intervals, then the report's
    fixed-sample ones at the same stops."""
    hits = [h for o in outcomes for h in o.hits]
    fixed = [h for o in outcomes for h in o.fixed_hits]
    return (float(np.mean(hits)), float(np.mean([o.all_covered for o in outcomes])), float(np.mean(fixed)),
            float(np.mean([o.all_fixed_covered for o in outcomes])))


@pytest.mark.slow  # ~90 s on 2 busy cores; the default run keeps the two-model runs below and the looks' tests
def test_intervals_at_the_stop_hold_the_planted_gaps_fast(tmp_path: Path) -> None:
    """A few emulated adaptive runs (4 models, rotating judges, first pass of 3 dilemmas — a sparse start):
    every stop is one of the stated reasons, every pair has an interval, and they hold the planted gaps."""
    p = planted(judge_model=0.0)
    out = [emulate(p, tmp_path, seed=s, target=0.8, first=3) for s in range(3)]
    assert {o.stop_reason for o in out} <= {STOP_TARGET, STOP_UNIFORM, STOP_MAX_LOOKS}
    assert all(o.blank == 0 and len(o.hits) == 6 for o in out)
    pair, every, _fixed, _fixed_every = _coverage(out)
    assert pair >= 0.95 and every >= 0.8
    # the contract: target reached within the uniform design's calls, or stopped at it (or the last look)
    for o in out:
        assert o.uniform_calls is not None
        if o.stop_reason == STOP_TARGET:
            assert o.widest is not None and o.widest <= 0.8
        else:
            assert o.widest is not None and o.widest > 0.8


def test_two_models_reach_their_target_within_the_uniform_design(tmp_path: Path) -> None:
    """With one pair (two models, three outside judges) the runs mostly reach the target, and with no more calls
    than the uniform design the plan picks from the estimates at the look the wave was planned."""
    p = planted(skill=(6.8, 6.3), judge_model=0.0)
    out = [emulate(p, tmp_path, seed=s, target=0.5, judges=["j1", "j2", "j3"]) for s in range(3)]
    reasons = Counter(o.stop_reason for o in out)
    assert reasons[STOP_TARGET] >= 2, reasons
    assert all(h for o in out for h in o.hits)


@pytest.mark.slow
@pytest.mark.parametrize(("skill", "target", "judges", "first"), [
    ((6.8, 6.5, 6.2, 5.9), 0.8, "rotate", 3),
    ((6.8, 6.5, 6.2, 5.9), 0.6, "rotate", 4),
    ((6.5, 6.5, 6.5, 6.5), 0.7, "rotate", 4),  # null world: every gap 0
    ((6.8, 6.3), 0.5, ["j1", "j2", "j3"], 4),
])
def test_intervals_at_the_stop_hold_the_planted_gaps(tmp_path: Path, skill: tuple[float, ...], target: float,
                                                     judges: str | list[str], first: int) -> None:
    """120 emulated adaptive runs per world: coverage at the stop at least 95%, per pair and all pairs at once
    (measured: docs/STATISTICS.md, "Adaptive tournaments")."""
    p = planted(skill=skill, judge_model=0.0)
    out = [emulate(p, tmp_path, seed=s, target=target, first=first, judges=judges) for s in range(120)]
    pair, every, fixed, fixed_every = _coverage(out)
    reasons = Counter(o.stop_reason for o in out)
    print(f"{skill} target {target}: pair {pair:.3f} all {every:.3f} fixed {fixed:.3f} fixed all {fixed_every:.3f} "
          f"{dict(reasons)}")
    assert pair >= 0.95 and every >= 0.95


def test_the_reports_adaptive_object_from_a_tournament_record() -> None:
    """adaptive_summary: None for a tournament that is not adaptive or a record it cannot read; a record from
    before anytime-valid looks says its intervals are not valid at the stop instead of showing them; a current
    record carries the rule, the looks, the waves and the last look's intervals, and the Markdown shows them."""
    from ebtui.core.analysis.sequential import adaptive_summary
    from ebtui.core.report import adaptive_markdown

    assert adaptive_summary(None) is None and adaptive_summary({"waves": []}) is None
    assert adaptive_summary({"target": "wide"}) is None
    old = adaptive_summary({"target": 0.5, "measurements": [{"wave": 0, "widest": 0.4, "calls": 90}],
                            "stop_reason": "target_reached", "stop_message": "target reached"})
    assert old is not None and old["pairwise"] == [] and "predates anytime-valid" in str(old["reason"])
    assert old["rule"] == {"method": None, "description": "none recorded: the run stopped on fixed-sample intervals"}
    plan = LookPlan()
    look = measure_look(_data(4), plan, 2)
    record = {"target": 0.9, "rule": plan.json(), "stop_reason": "looks_used", "stop_message": "m <b>",
              "measurements": [{"look": 1, "alpha": plan.alpha_at(1), "calls": 60, "widest": 9.0},
                               {"look": 2, "alpha": plan.alpha_at(2), "calls": 120, "widest": look.widest}],
              "waves": [{"number": 1, "kind": "half_dilemmas", "units": 4, "calls": 60, "exchanges": []}],
              "intervals": look.json()}
    got = adaptive_summary(record)
    assert got is not None and got["look"] == 2 and got["alpha"] == plan.alpha_at(2)
    assert got["pairwise"] == look.json()["pairs"] and got["reason"] == ""
    assert [w["kind"] for w in got["waves"]] == ["half_dilemmas"]  # type: ignore[attr-defined]
    md = "\n".join(adaptive_markdown(got))
    assert "half_dilemmas +4 (60 calls)" in md.replace("\\_", "_") and "m &lt;b&gt;" in md
    assert "0.0225" in md  # the look's alpha, not rounded to 2 decimals


def test_a_run_past_its_last_look_keeps_its_intervals_and_spends_nothing(tmp_path: Path) -> None:
    """Started again after its last planned look, a run takes no further look: the recorded intervals and looks
    stand, and it says why it stops."""
    p = planted(judge_model=0.0)
    o = emulate(p, tmp_path, seed=0, target=0.3, first=3, looks=LookPlan(max_looks=1))  # one look, short of it
    assert o.stop_reason == STOP_MAX_LOOKS and o.runner is not None
    st = o.runner.state
    looks, intervals = list(st.measurements), st.intervals
    assert intervals is not None and intervals["alpha"] == ALPHA
    st.stop_reason = None
    msg = o.runner.after_pass(o.rounds)
    assert st.stop_reason == STOP_MAX_LOOKS and msg.stop_reason == STOP_MAX_LOOKS
    assert "all 1 planned looks were taken" in st.stop_message
    assert st.measurements == looks and st.intervals == intervals
