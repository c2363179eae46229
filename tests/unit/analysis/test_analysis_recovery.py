"""The statistics recover a planted truth: rounds generated from known skills, judge severities, a same-family
preference and dilemma effects, saved in a real store, read back through `ebtui report --json` (the same code
path a user runs). Plus the rules every interval follows, and (slow) the intervals' coverage over many seeds."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.analysis import analyse_fit
from ebtui.core.records import Override
from ebtui.core.report import build_report_data
from tests.support.factories import open_store
from tests.support.sim_truth import Truth, default_truth, generate, true_adjusted_means, true_offsets

TOL = 0.35


def models_toml(path: Path, truth: Truth) -> Path:
    lines = []
    for m, fam in truth.family.items():
        lines += [f'[models.{m}]', 'provider = "scripted"', f'family = "{fam}"']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def report_json(store: Path, *args: str) -> dict[str, Any]:
    res = CliRunner().invoke(cli, ["--store", str(store), "report", "--json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # stdout holds exactly one JSON object


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("truth")
    truth = default_truth()
    store = open_store(root / "store")
    rounds = generate(truth, dilemmas=6, seed=11)
    for r in rounds:
        store.save_round(r)
    models = models_toml(root / "models.toml", truth)
    def files() -> list[Path]:  # the analysis columns beside the store are a cache, not report output
        return sorted(p.relative_to(root) for p in root.rglob("*") if "columns" not in p.relative_to(root).parts)

    before = files()
    out = report_json(root / "store", "--models", str(models))
    assert files() == before  # --json writes no report file
    return {"root": root, "store": root / "store", "truth": truth, "out": out, "models": models, "rounds": rounds}


def test_adjusted_means_and_judge_offsets_recover_the_truth(planted: dict[str, Any]) -> None:
    truth, out = planted["truth"], planted["out"]
    means = {m["model"]: m["mean"] for m in out["models"]}
    raw = {m["model"]: m["raw_mean"] for m in out["models"]}
    want = true_adjusted_means(truth)
    for (a, b), diff in truth.pair_diffs(want).items():
        assert abs((means[a] - means[b]) - diff) <= TOL, (a, b, means[a] - means[b], diff)
    # the raw means are not the planted ones: each model met a different mix of judges (self-judging excluded)
    assert max(abs((raw[a] - raw[b]) - d) for (a, b), d in truth.pair_diffs(want).items()) > 0.2
    offsets = {j["judge"]: j["offset"] for j in out["judges"]}
    assert abs(sum(offsets.values())) < 1e-9  # relative to the average judge
    for (a, b), diff in truth.pair_diffs(true_offsets(truth)).items():
        assert abs((offsets[a] - offsets[b]) - diff) <= TOL
    fam = out["family_preference"]
    assert abs(fam["estimate"] - truth.family_pref) <= 0.3
    assert fam["ci_low"] < truth.family_pref < fam["ci_high"]
    covered = [m["ci_low"] <= want[m["model"]] <= m["ci_high"] for m in out["models"]]
    assert sum(covered) >= 0.8 * len(covered)
    assert all(j["ci_low"] <= true_offsets(truth)[j["judge"]] <= j["ci_high"] for j in out["judges"])


def test_intervals_are_never_degenerate_and_stay_on_the_scale(planted: dict[str, Any]) -> None:
    out = planted["out"]
    for m in out["models"]:
        assert 1.0 <= m["ci_low"] < m["mean"] < m["ci_high"] <= 10.0
        assert m["ci_high"] - m["ci_low"] > 0.05 and m["interval_note"] == ""
    for j in out["judges"]:
        assert j["ci_low"] < j["offset"] < j["ci_high"]
    assert out["bootstrap"] == {"seed": out["bootstrap"]["seed"], "replicates": 400, "unit": "dilemma",
                                "confidence": 0.95}
    assert report_json(planted["store"], "--models", str(planted["models"])) == out  # seeded: reproducible


def test_counts_and_raw_means_follow_the_one_definition(planted: dict[str, Any]) -> None:
    rounds, out = planted["rounds"], planted["out"]
    for m in out["models"]:
        mine = [r for r in rounds if m["model"] in (r.team_a_model, r.team_b_model)]
        scores = [v for r in mine for t, who in (("a", r.team_a_model), ("b", r.team_b_model)) if who == m["model"]
                  for v in r.judgment.parsed_scores(t).as_dict().values() if v is not None]
        assert m["n_rounds"] == len(mine) and m["n_scores"] == len(scores)
        assert m["raw_mean"] == pytest.approx(sum(scores) / len(scores))
        assert m["n_dilemmas"] == 6
    crit = {(c["model"], c["criterion"]): c for c in out["criteria_by_model"]}
    r0 = rounds[0]
    n = sum(1 for r in rounds for t, who in (("a", r.team_a_model), ("b", r.team_b_model))
            if who == r0.team_a_model)
    assert crit[(r0.team_a_model, "consistency")]["n"] == n
    for j in out["judges"]:
        assert j["n"] == sum(1 for r in rounds if r.judge_model == j["judge"])
    assert out["excluded"]["rounds_without_judgment"] == 0 and out["n_rounds"] == len(rounds)


def test_one_dilemma_gives_blank_intervals_with_the_reason(planted: dict[str, Any]) -> None:
    out = report_json(planted["store"], "--models", str(planted["models"]), "--dilemma", "d2")
    assert out["n_dilemmas"] == 1 and out["filters"]["dilemma"] == "d2"
    for row in [*out["models"], *out["judges"], out["family_preference"]]:
        assert row["ci_low"] is None and row["ci_high"] is None
        assert row["interval_note"] == "fewer than 3 dilemmas"
    assert all(m["mean"] is not None for m in out["models"])


def test_model_filter_counts_only_team_seats(planted: dict[str, Any]) -> None:
    out = report_json(planted["store"], "--models", str(planted["models"]), "--model", "gpt-y")
    seats = [r for r in planted["rounds"] if "gpt-y" in (r.team_a_model, r.team_b_model)]
    judged_only = [r for r in planted["rounds"] if r.judge_model == "gpt-y"]
    assert judged_only and out["n_rounds"] == len(seats)
    row = next(m for m in out["models"] if m["model"] == "gpt-y")
    assert row["n_rounds"] == len(seats)
    assert "gpt-y" not in {j["judge"] for j in out["judges"]}  # it judged none of its own rounds


def test_overrides_add_the_judge_vs_human_table_and_never_touch_agreement(tmp_path: Path) -> None:
    truth = default_truth()
    rounds = generate(truth, dilemmas=4, seed=5)
    plain = build_report_data(rounds, families=truth.family, replicates=50).json()
    assert "with_overrides" not in plain and plain["judge_vs_human"] == []
    n = 0
    for r in rounds:  # the humans mark gpt-y's scores down by exactly 1 where it gave principle_articulation > 1
        v = r.judgment.team_a_scores.principle_articulation
        if r.judge_model == "gpt-y" and v is not None and v > 1:
            r.judgment.overrides.append(Override(team="a", criterion="principle_articulation", parsed_value=v,
                                                 value=v - 1))
            n += 1
    got = build_report_data(rounds, families=truth.family, replicates=50).json()
    jvh = {row["judge"]: row for row in got["judge_vs_human"]}
    assert set(jvh) == {"gpt-y"} and jvh["gpt-y"]["n"] == n and jvh["gpt-y"]["offset_vs_human"] == 1.0
    assert got["judge_agreement"] == plain["judge_agreement"]  # parsed scores only
    assert got["models"] == plain["models"]  # the headline fit reads the judges' scores as parsed
    eff = {j["judge"]: j["offset"] for j in got["with_overrides"]["judges"]}
    raw = {j["judge"]: j["offset"] for j in got["judges"]}
    assert eff["gpt-y"] < raw["gpt-y"]


def test_no_family_contrast_is_said_not_guessed() -> None:
    truth = default_truth()
    rounds = generate(truth, dilemmas=3, seed=2)
    got = build_report_data(rounds, families=dict.fromkeys(truth.family, "same"), replicates=50).json()
    fam = got["family_preference"]
    assert fam["estimate"] is None and "nothing to compare with" in fam["interval_note"]


def test_recovery_with_one_rotating_judge_per_round() -> None:
    truth = default_truth()
    out = analyse_fit(generate(truth, dilemmas=5, seed=21, rotate=True, repeats=2), families=truth.family,
                      replicates=150).json()
    means = {m["model"]: m["mean"] for m in out["models"]}
    offsets = {j["judge"]: j["offset"] for j in out["judges"]}
    for (a, b), d in truth.pair_diffs(true_adjusted_means(truth)).items():
        assert abs(means[a] - means[b] - d) <= TOL
    for (a, b), d in truth.pair_diffs(true_offsets(truth)).items():
        assert abs(offsets[a] - offsets[b] - d) <= TOL
    assert abs(out["family_preference"]["estimate"] - truth.family_pref) <= 0.3


@pytest.mark.slow
def test_interval_coverage_is_about_95_percent_over_many_seeds() -> None:
    hits: dict[str, list[bool]] = {"model": [], "judge": [], "family": []}
    for seed in range(120):
        truth = default_truth()
        truth.family_pref = 0.3
        rounds = generate(truth, dilemmas=5, seed=1000 + seed)
        fitted = analyse_fit(rounds, families=truth.family, replicates=200)  # the tables report --json prints
        out = fitted.json()
        want, offs = true_adjusted_means(truth), true_offsets(truth)
        hits["model"] += [m["ci_low"] <= want[m["model"]] <= m["ci_high"] for m in out["models"]]
        hits["judge"] += [j["ci_low"] <= offs[j["judge"]] <= j["ci_high"] for j in out["judges"]]
        f = out["family_preference"]
        hits["family"].append(f["ci_low"] <= truth.family_pref <= f["ci_high"])
    rates = {k: float(np.mean(v)) for k, v in hits.items()}
    assert all(0.89 <= r <= 0.995 for r in rates.values()), rates


def test_pairs_helper_is_complete() -> None:  # the recovery checks look at every pair
    truth = default_truth()
    assert len(truth.pair_diffs(truth.skill)) == len(list(itertools.combinations(truth.skill, 2)))
