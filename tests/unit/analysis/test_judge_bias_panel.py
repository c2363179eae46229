"""Judge bias as a panel of judges plays it (issue 35), from planted truth: the self-preference apart from the
same-family preference, each with the (judge, model) pairs it rests on; intervals that hold when each
(judge, model) pair has its own liking (judge x model variation); length and formatting relative to the other
team's as well as the team's own; the bootstrap blanking only a level a resample lacks. The design of
tests/support/judge_bias_sim.panel_truth: 5 models, 4 rotating judges, 8 dilemmas. Fast versions here; the
full simulations are marked slow (the measured numbers: docs/STATISTICS.md, "Judge bias and reliability")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ebtui.core.analysis.judge_bias import bias_fit, bias_json, fit_table, long_table, relative
from ebtui.core.families import family_function
from ebtui.core.records import Round
from tests.support.judge_bias_sim import BiasTruth, generate, mixed_truth, panel_truth


def _tournament(truth: BiasTruth, seed: int, dilemmas: int = 8) -> list[Round]:
    """One rotating judge per exchange, orders alternating: as a tournament plays it."""
    rounds, _ = generate(truth, dilemmas=dilemmas, seed=seed, both_orders=False, rotate=True)
    return rounds


def _pref(out: dict[str, Any], term: str) -> dict[str, Any]:
    return next(r for r in out["self_and_family"] if r["term"] == term)


def _covers(row: dict[str, Any], value: float) -> bool:
    return row["ci_low"] is not None and row["ci_low"] <= value <= row["ci_high"]


_mixed_truth = mixed_truth


def test_self_and_family_are_estimated_apart_with_their_pairs() -> None:
    """A planted self-preference of 0.8 and no family preference: the self term takes it, the family term stays
    near 0 (pooled, as before, the family term would have been about 0.8 x 3/5); n counts (judge, model) pairs."""
    truth = _mixed_truth(self_pref=0.8, family_pref=0.0, judge_model_sd=0.0, seed=1)
    out = bias_json(_tournament(truth, seed=1), families=truth.families, replicates=100)
    me, fam = _pref(out, "self"), _pref(out, "same_family")
    models = list(truth.skill)
    assert me["n"] == 3 and me["pairs"] == [f"{m} -> {m}" for m in sorted(models[:3])]
    assert fam["n"] == 2 and fam["pairs"] == [f"j-out -> {models[3]}", f"j-out -> {models[4]}"]
    assert abs(me["estimate"] - 0.8) < 0.15 and _covers(me, 0.8)
    assert abs(fam["estimate"]) < 0.35 and _covers(fam, 0.0)  # two pairs with a quarter of the rounds: noisier
    assert me["n_scores"] > 0 and fam["n_scores"] > 0
    want = truth.controlled()
    assert all(abs(m["adjusted_mean"] - want[m["model"]]) < 0.2 for m in out["style"]["models"])


def test_a_self_or_family_term_on_one_pair_is_blank_with_the_reason() -> None:
    truth = _mixed_truth(self_pref=0.5, judge_model_sd=0.25, seed=4)
    truth.families = {m: m for m in truth.skill} | {"j-out": "fam-out", "m-eps": "fam-out"}  # one family pair
    out = bias_json(_tournament(truth, seed=4), families=truth.families, replicates=60)
    fam = _pref(out, "same_family")
    assert fam["n"] == 1 and fam["estimate"] is not None
    assert fam["ci_low"] is None and "rests on 1 (judge, model) pair" in fam["interval_note"]
    assert _pref(out, "self")["ci_low"] is not None


def test_without_self_judging_the_self_row_says_so() -> None:
    truth = panel_truth(seed=5)
    out = bias_json(_tournament(truth, seed=5, dilemmas=4), families=truth.families, replicates=40)
    me = _pref(out, "self")
    assert me["n"] == 0 and me["estimate"] is None and "--allow-own" in me["interval_note"]


def _family_run(seeds: range, replicates: int) -> tuple[list[bool], list[float]]:
    cover, sds = [], []
    for seed in seeds:
        truth = panel_truth(seed=seed, judge_model_sd=0.25)  # j-one shares a family with two models, no preference
        out = bias_json(_tournament(truth, seed=seed), families=truth.families, replicates=replicates, seed=seed)
        cover.append(_covers(_pref(out, "same_family"), 0.0))
        sds.append(out["judge_bias_fit"]["judge_model_sd"])
    return cover, sds


def test_family_interval_covers_zero_under_judge_model_variation_fast() -> None:
    cover, sds = _family_run(range(5), 100)
    assert sum(cover) >= 4, cover
    assert abs(float(np.mean(sds)) - 0.25) < 0.1, sds  # the pair liking's sd, estimated


@pytest.mark.slow
def test_family_interval_covers_zero_under_judge_model_variation() -> None:
    """The contract: the same-family interval covers 0 in >= 85% of tournaments (measured 0.9x: STATISTICS.md)."""
    cover, sds = _family_run(range(200), 200)
    assert np.mean(cover) >= 0.85, np.mean(cover)
    assert abs(float(np.mean(sds)) - 0.25) < 0.03, np.mean(sds)


def test_judge_model_sd_near_zero_when_none_is_planted() -> None:
    sds = []
    for seed in range(2):
        truth = panel_truth(seed=seed, judge_model_sd=0.0)
        sds.append(bias_json(_tournament(truth, seed=seed), families=truth.families,
                             replicates=40)["judge_bias_fit"]["judge_model_sd"])
    assert max(sds) < 0.1, sds


def _self_run(seeds: range, replicates: int) -> tuple[list[float], list[bool]]:
    errs, cover = [], []
    for seed in seeds:
        truth = panel_truth(seed=seed, judges_are_models=True, self_pref=0.5, judge_model_sd=0.25)
        out = bias_json(_tournament(truth, seed=seed), families=truth.families, replicates=replicates, seed=seed)
        me = _pref(out, "self")
        assert me["n"] == 4
        errs.append(abs(me["estimate"] - 0.5))
        cover.append(_covers(me, 0.5))
    return errs, cover


def test_self_preference_recovered_when_models_judge_their_own_rounds_fast() -> None:
    errs, cover = _self_run(range(4), 100)
    assert float(np.mean(errs)) < 0.2 and sum(e < 0.3 for e in errs) >= 3, errs
    assert sum(cover) >= 3, cover


@pytest.mark.slow
def test_self_preference_recovered_when_models_judge_their_own_rounds() -> None:
    errs, cover = _self_run(range(100), 200)
    assert np.mean(np.array(errs) < 0.3) >= 0.9, np.mean(np.array(errs) < 0.3)
    assert np.mean(cover) >= 0.88, np.mean(cover)


# ---- length as judges compare it ----------------------------------------------------------------------------


def test_relative_is_the_normalised_difference() -> None:
    own = np.array([300.0, 100.0, 0.0, 50.0])
    other = np.array([100.0, 300.0, 0.0, np.nan])
    got = relative(own, other)
    assert got[:3].tolist() == [0.5, -0.5, 0.0] and np.isnan(got[3])


def test_the_other_teams_length_is_read_from_the_same_judgment() -> None:
    truth = panel_truth(seed=2)
    rounds = _tournament(truth, seed=2, dilemmas=2)
    t = long_table(rounds, family_function(truth.families))
    rel = relative(t.words, t.other_words)
    for k in np.unique(t.judgment)[:20]:
        a, b = (t.judgment == k) & (t.seat > 0), (t.judgment == k) & (t.seat < 0)
        assert np.allclose(t.other_words[a], t.words[b][0]) and np.allclose(t.other_words[b], t.words[a][0])
        assert np.allclose(rel[a], -rel[b][0])
    # a LongTable without the other team's columns (as from the analysis columns): derived from `judgment`
    from dataclasses import replace

    bare = replace(t, other_words=np.zeros(0), other_density=np.zeros(0))
    assert np.allclose(fit_table(bare, replicates=0).estimate,  # type: ignore[union-attr]
                       fit_table(t, replicates=0).estimate)  # type: ignore[union-attr]


def _style_run(seeds: range, form: str, replicates: int, jm_sd: float) -> tuple[list[float], list[float],
                                                                                list[bool], list[bool]]:
    worst, worst_plain, excludes, covers = [], [], [], []
    for seed in seeds:
        kw = {"relative_words_beta": 1.5} if form == "relative" else {"words_beta": 0.35}
        truth = panel_truth(seed=seed, judge_model_sd=jm_sd, **kw)
        out = bias_json(_tournament(truth, seed=seed), families=truth.families, replicates=replicates, seed=seed)
        want = truth.controlled()
        worst.append(max(abs(m["adjusted_mean"] - want[m["model"]]) for m in out["style"]["models"]))
        worst_plain.append(max(abs(m["mean_without_style"] - want[m["model"]]) for m in out["style"]["models"]))
        coefs = {c["term"]: c for c in out["style"]["coefficients"]}
        c = coefs["length_relative" if form == "relative" else "length"]
        excludes.append(c["ci_low"] is not None and (c["ci_low"] > 0 or c["ci_high"] < 0))
        covers.append(_covers(c, 1.5 if form == "relative" else 0.35))
    return worst, worst_plain, excludes, covers


@pytest.mark.parametrize("form", ["relative", "own"])
def test_style_controlled_means_recover_skills_whichever_length_bias_fast(form: str) -> None:
    """A judge rewarding the longer of the two answers, or long answers as such: the same fit recovers the
    skills (the models' lengths follow their skill, so without the right covariate the means are off)."""
    worst, worst_plain, excludes, covers = _style_run(range(2), form, 100, 0.0)
    assert max(worst) < 0.35 and max(worst) < max(worst_plain), (worst, worst_plain)
    assert all(excludes) and all(covers)


@pytest.mark.slow
@pytest.mark.parametrize("form", ["relative", "own"])
def test_style_controlled_means_recover_skills_whichever_length_bias(form: str) -> None:
    worst, _, excludes, covers = _style_run(range(40), form, 200, 0.0)
    assert max(worst) < 0.35 and all(excludes) and np.mean(covers) >= 0.85, (max(worst), np.mean(covers))


# ---- the style contract under judge x model variation: what the design allows --------------------------------

_BETA = {"relative": ("length_relative", 1.5), "own": ("length", 0.35)}


def _oracle_run(seed: int, form: str, replicates: int) -> dict[str, float]:
    """Issue 35's style contract on one tournament (judge x model sd 0.25): the worst |style-controlled mean -
    planted skill| of the report's fit; of an oracle that knows the style coefficient (the planted style effect
    taken off the scores, fitted without style terms); of the fit on scores without the pairs' likings (the
    judge x model draws taken off); and whether the coefficient's interval excludes 0."""
    from dataclasses import replace

    from ebtui.core.analysis.judge_bias import style_columns

    term, beta = _BETA[form]
    kw = {"relative_words_beta": beta} if form == "relative" else {"words_beta": beta}
    truth = panel_truth(seed=seed, judge_model_sd=0.25, **kw)  # type: ignore[arg-type]
    rounds = _tournament(truth, seed=seed)
    want = truth.controlled()
    t = long_table(rounds, family_function(truth.families))

    def worst(est: np.ndarray) -> float:
        return max(abs(float(est[i]) - want[m]) for i, m in enumerate(t.models))

    bf = fit_table(t, replicates=replicates, seed=seed)
    assert bf is not None
    cov = dict(style_columns(t)[0])[term]
    assert cov is not None
    known = fit_table(replace(t, y=t.y - beta * (cov - cov.mean())), replicates=0, style=False)
    liking = np.array([truth.judge_model_effect[(t.judges[j], t.models[m])] for j, m in zip(t.judge, t.model,
                                                                                           strict=True)])
    no_liking = fit_table(replace(t, y=t.y - liking), replicates=0)
    assert known is not None and no_liking is not None
    _, iv = bf.term(term)
    return {"fit": worst(bf.estimate), "style known": worst(known.estimate), "no liking": worst(no_liking.estimate),
            "excludes 0": float(iv.low is not None and iv.high is not None and (iv.low > 0 or iv.high < 0))}


@pytest.mark.parametrize("form", ["relative", "own"])
def test_style_control_misses_only_what_the_judges_liking_puts_there_fast(form: str) -> None:
    """With judge x model sd 0.25 a model's mean carries the average liking of the judges that scored it (sd
    about 0.12): an oracle knowing the planted style coefficient misses the planted skill as often and by as
    much as the fit, and without the likings the fit is within 0.35 (docs/STATISTICS.md, the measured rates)."""
    for seed in (0, 1):
        got = _oracle_run(seed, form, 60)
        assert abs(got["fit"] - got["style known"]) < 0.05, got
        assert got["no liking"] < 0.35 and got["excludes 0"], got


@pytest.mark.slow
@pytest.mark.parametrize("form", ["relative", "own"])
def test_style_control_misses_only_what_the_judges_liking_puts_there(form: str) -> None:
    runs = [_oracle_run(seed, form, 200) for seed in range(100)]
    miss = np.mean([r["fit"] > 0.35 for r in runs])
    oracle_miss = np.mean([r["style known"] > 0.35 for r in runs])
    assert miss <= oracle_miss + 0.02, (miss, oracle_miss)  # measured 0.16 and 0.16 (sd 0.25 itself)
    assert max(r["no liking"] for r in runs) < 0.35  # every seed, once the pairs' likings are off the scores
    assert all(r["excludes 0"] for r in runs)


# ---- the bootstrap blanks only what a resample lacks -----------------------------------------------------------


def _sparse(seed: int) -> tuple[BiasTruth, list[Round]]:
    """m-eps plays on two of eight dilemmas only."""
    truth = panel_truth(seed=seed, judge_model_sd=0.0)
    rounds = [r for r in _tournament(truth, seed=seed)
              if "m-eps" not in (r.team_a_model, r.team_b_model) or r.dilemma_id in ("d1", "d2")]
    return truth, rounds


def test_a_replicate_that_lacks_a_model_blanks_that_model_only() -> None:
    truth, rounds = _sparse(1)
    bf = bias_fit(rounds, families=truth.families, replicates=300)
    assert bf is not None
    M = len(bf.table.models)
    eps = bf.table.models.index("m-eps")
    lacking = ~np.isfinite(bf.draws[:, eps])
    assert 0.05 < lacking.mean() < 0.16  # a resample misses both d1 and d2 with probability (6/8)^8 = 0.10
    others = [i for i in range(M) if i != eps]
    assert np.isfinite(bf.draws[:, others]).all() and np.isfinite(bf.draws[:, M]).all()  # nothing else dropped
    out = bias_json(rounds, families=truth.families, replicates=300)
    assert out["judge_bias_fit"]["replicates_used"] == 300


@pytest.mark.slow
def test_sparse_model_intervals_cover() -> None:
    """Keeping the replicates that lack m-eps (instead of dropping them, which kept the resamples that drew
    its dilemmas) gives the other models' intervals their full width: coverage across seeds."""
    hits = []
    for seed in range(60):
        truth, rounds = _sparse(seed)
        out = bias_json(rounds, families=truth.families, replicates=200, seed=seed)
        want = truth.controlled()
        hits += [_covers(m, want[m["model"]]) for m in out["style"]["models"] if m["model"] != "m-eps"]
    assert np.mean(hits) >= 0.9, np.mean(hits)


def test_with_one_judge_the_intervals_say_they_are_about_this_judge() -> None:
    truth = panel_truth(seed=6, judge_model_sd=0.0, words_beta=0.35)
    truth.severity, truth.order, truth.agree = {"j-two": 0.0}, {"j-two": 0.0}, {"j-two": 0.0}
    out = bias_json(_tournament(truth, seed=6, dilemmas=4), families=truth.families, replicates=60)
    fit = out["judge_bias_fit"]
    assert fit["judge_model_sd"] is None and fit["judge_model_df"] == 0
    assert any("about these judges' preferences" in n and "one judge" in n for n in fit["notes"] or [])
    length = next(c for c in out["style"]["coefficients"] if c["term"] == "length")
    assert _covers(length, 0.35)  # the dilemma bootstrap's interval still stands


# ---- an unconnected design: judge groups that never scored a common model --------------------------------------


def _unconnected(seed: int) -> tuple[BiasTruth, list[Round]]:
    """Judges j-one and j-two score only m-alpha, m-beta and m-gamma; j-three and j-four only m-delta and m-eps
    (two tournaments side by side, each pair with its own liking, sd 0.25; an own-length bias planted)."""
    from dataclasses import replace

    truth = panel_truth(seed=seed, judge_model_sd=0.25, words_beta=0.35)
    truth.families |= {"j-one": "fam-one", "m-alpha": "fam-one", "m-beta": "fam-one", "j-three": "fam-three",
                       "m-delta": "fam-three"}
    rounds: list[Round] = []
    liking: dict[tuple[str, str], float] = {}
    for k, (models, judges) in enumerate(((("m-alpha", "m-beta", "m-gamma"), ("j-one", "j-two")),
                                          (("m-delta", "m-eps"), ("j-three", "j-four")))):
        part = replace(truth, skill={m: truth.skill[m] for m in models},
                       severity={j: truth.severity[j] for j in judges}, judge_model_effect={})
        got = _tournament(part, seed=100 * seed + k)
        liking |= part.judge_model_effect
        rounds += [r.model_copy(update={"id": f"g{k}-{r.id}", "exchange_id": f"g{k}-{r.exchange_id}"}) for r in got]
    truth.judge_model_effect = liking
    return truth, rounds


@pytest.mark.parametrize("seed", [0, 1])
def test_an_unconnected_design_blanks_what_it_does_not_identify(seed: int) -> None:
    """Every model mean is blank with the reason naming the two groups (against the average judge they are not
    identified); the length coefficient, identified within each group, is estimated and its interval covers
    the planted value; the same-family rows (here and in section 2) are blank with a reason or cover 0."""
    from ebtui.core.analysis.bias_source import preferences_of_facts
    from ebtui.core.analysis.frame import Facts

    truth, rounds = _unconnected(seed)
    out = bias_json(rounds, families=truth.families, replicates=100, seed=seed)
    assert out["judge_bias_fit"]["full_rank"] is False
    for m in out["style"]["models"]:
        assert m["adjusted_mean"] is None and m["ci_low"] is None and m["mean_without_style"] is None
        assert "2 groups never scored by a common judge" in m["interval_note"], m
    length = next(c for c in out["style"]["coefficients"] if c["term"] == "length")
    assert length["estimate"] is not None and abs(length["estimate"] - 0.35) < 0.15 and _covers(length, 0.35)
    section2 = preferences_of_facts(Facts.from_rounds(rounds), family_function(truth.families), replicates=100,
                                    seed=seed)
    for row in (_pref(out, "same_family"), next(r for r in section2 if r["term"] == "same_family")):
        assert row["n"] == 3  # j-one -> m-alpha, m-beta; j-three -> m-delta
        assert (row["ci_low"] is None and row["interval_note"]) or _covers(row, 0.0), row  # type: ignore[arg-type]
