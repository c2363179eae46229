"""Which model is better, and how sure: identifiability, pairwise differences with Holm-adjusted p-values, rank
intervals, robustness, and `ebtui compare` — checked on tournaments generated from a planted truth
(tests/support/sim_designs.py), through `ebtui report --json` / `ebtui compare --json` where the user would read them.

Default tests use a few seeds; the calibration and coverage runs over many seeds are marked slow (their
measured rates are in docs/STATISTICS.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from statsmodels.stats.multitest import multipletests

from ebtui.cli import cli
from ebtui.core.analysis import analyse_fit
from ebtui.core.analysis.identify import identify
from ebtui.core.analysis.pairwise import holm
from ebtui.core.records import CRITERIA, Round
from tests.support.factories import open_store
from tests.support.sim_designs import (
    disconnected_schedule,
    disconnected_world,
    equal_world,
    interval_checks,
    play,
    round_robin,
    wrong_signs,
)
from tests.support.sim_truth import Truth


def save(rounds: list[Round], root: Path) -> Path:
    store = open_store(root)
    for r in rounds:
        store.save_round(r)
    return root


def families_toml(path: Path, truth: Truth) -> Path:
    path.write_text("".join(f'[models.{m}]\nprovider = "scripted"\nfamily = "{f}"\n' for m, f in truth.family.items()),
                    encoding="utf-8")
    return path


def run_json(*args: str) -> dict[str, Any]:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def gapped_world() -> Truth:
    t = equal_world(4)
    t.skill = {"m1": 7.3, "m2": 6.8, "m3": 6.4, "m4": 6.3}
    return t


# ---- identifiability -------------------------------------------------------------------------------------


def _ident(slots: list[tuple[str, str, str, str]], seats: list[float]) -> Any:
    models = sorted({s[1] for s in slots})
    judges = sorted({s[3] for s in slots})
    dil = sorted({s[0] for s in slots})
    mi = np.array([models.index(s[1]) for s in slots])
    ji = np.array([judges.index(s[3]) for s in slots])
    di = np.array([dil.index(s[0]) for s in slots])
    ci = np.zeros(len(slots), dtype=int)
    return identify(mi, ji, ci, di, np.array(seats), np.zeros(len(slots)), models, judges, 1, len(dil),
                    has_seat=True, has_family=False)


def test_a_disconnected_design_blanks_cross_contrasts_and_keeps_the_seat() -> None:
    # rows: (dilemma, model, _, judge); m1, m2 only ever judged by j1, m3, m4 only by j2; both seats everywhere
    slots = [(d, m, "", j) for d in ("d1", "d2", "d3") for m, j in (("m1", "j1"), ("m2", "j1"), ("m3", "j2"),
                                                                 ("m4", "j2")) for _ in (0, 1)]
    seats = [1.0, -1.0] * (len(slots) // 2)
    ident = _ident(slots, seats)
    assert ident.has_seat and not any("seat" in n for n in ident.notes)  # the seat is identified: kept
    assert ident.pair_reason(0, 1) == "" and ident.pair_reason(2, 3) == ""
    assert ident.pair_reason(0, 2).startswith("m1 and m3 were never scored by a common judge")
    assert "m1" in ident.adjusted_reason(0) and "m3" in ident.adjusted_reason(0)
    assert any("{m1, m2}; {m3, m4}" in n for n in ident.notes)


def test_the_seat_is_dropped_only_when_every_model_keeps_one_seat() -> None:
    slots = [(d, m, "", j) for d in ("d1", "d2", "d3") for m in ("m1", "m2") for j in ("j1", "j2")]
    seats = [1.0 if s[1] == "m1" else -1.0 for s in slots]  # m1 always Team A, m2 always Team B
    ident = _ident(slots, seats)
    assert not ident.has_seat
    assert any("every model always sat in the same seat" in n for n in ident.notes)
    assert ident.pair_reason(0, 1) == ""  # with the seat left out, m1 - m2 is identified


def test_holm_matches_statsmodels_and_keeps_blanks() -> None:
    p = [0.01, None, 0.04, 0.03, 0.2]
    got = holm(p)
    want = multipletests([0.01, 0.04, 0.03, 0.2], method="holm")[1]
    assert got[1] is None
    assert np.allclose([got[0], got[2], got[3], got[4]], want)


# ---- report --json ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gapped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("gapped")
    truth = gapped_world()
    rounds = play(truth, round_robin(list(truth.skill), list(truth.skill), 5), seed=3)
    store = save(rounds, root / "store")
    toml = families_toml(root / "models.toml", truth)
    out = run_json("--store", str(store), "report", "--json", "--models", str(toml))
    return {"truth": truth, "rounds": rounds, "store": store, "toml": toml, "out": out}


def test_report_json_has_every_pair_once_with_holm_p_and_the_right_signs(gapped: dict[str, Any]) -> None:
    out, truth = gapped["out"], gapped["truth"]
    pairs = out["pairwise"]
    assert sorted((p["a"], p["b"]) for p in pairs) == [(a, b) for a in sorted(truth.skill)
                                                         for b in sorted(truth.skill) if a < b]
    means = {m["model"]: m["mean"] for m in out["models"]}
    for p in pairs:
        assert set(p) >= {"a", "b", "diff", "ci_low", "ci_high", "p_holm", "n_dilemmas", "reason"}
        assert p["diff"] == pytest.approx(means[p["a"]] - means[p["b"]], abs=1e-6)  # the fit's own contrast
        assert p["ci_low"] < p["diff"] < p["ci_high"] and p["p"] <= p["p_holm"] <= 1
        assert p["n_dilemmas"] == 5 and p["reason"] == ""
    assert wrong_signs(out, truth) == []
    big = next(p for p in pairs if (p["a"], p["b"]) == ("m1", "m4"))  # a 1-point gap is found
    assert big["diff"] > 0 and big["p_holm"] < 0.05


def test_ranks_contain_the_point_rank_and_the_truth(gapped: dict[str, Any]) -> None:
    out, truth = gapped["out"], gapped["truth"]
    true_rank = {m: 1 + sum(v > truth.skill[m] for v in truth.skill.values()) for m in truth.skill}
    for r in out["ranks"]:
        assert r["rank_low"] <= r["rank"] <= r["rank_high"], r
        assert r["rank_low"] <= true_rank[r["model"]] <= r["rank_high"], r
    assert next(r for r in out["ranks"] if r["model"] == "m1")["rank"] == 1


def test_robustness_says_whether_one_dilemma_or_judge_decides(gapped: dict[str, Any]) -> None:
    rob = gapped["out"]["robustness"]
    assert set(rob) >= {"leave_one_dilemma_out", "leave_one_judge_out"}
    lodo = rob["leave_one_dilemma_out"]
    assert lodo["top_model"] == "m1" and [r["left_out"] for r in lodo["runs"]] == [f"d{i}" for i in range(1, 6)]
    assert {r["left_out"] for r in rob["leave_one_judge_out"]["runs"]} == set(gapped["truth"].skill)
    for check in (lodo, rob["leave_one_judge_out"]):
        assert isinstance(check["top_model_changes"], bool) and isinstance(check["decisive"], list)
        assert check["decisive"] == [r["left_out"] for r in check["runs"]
                                     if r["top_model_changes"] or r["lost"] or r["gained"]]


def test_one_dilemma_that_decides_the_top_model_is_named() -> None:
    truth = equal_world(3)
    truth.skill = {"m1": 6.3, "m2": 6.0, "m3": 5.0}
    # m2 is far better on d1 only: over all four dilemmas it edges m1 (+0.45); without d1, m1 is on top (+0.3)
    rounds = play(truth, round_robin(list(truth.skill), list(truth.skill), 4, rotate=False), seed=4,
                  interaction={("m2", "d1"): 3.0})
    out = analyse_fit(rounds, families=truth.family, replicates=200).json()
    lodo = out["robustness"]["leave_one_dilemma_out"]
    assert lodo["top_model"] == "m2" and lodo["top_model_changes"] is True
    assert "d1" in lodo["decisive"]
    assert next(r for r in lodo["runs"] if r["left_out"] == "d1")["top_model"] == "m1"
    md = out["robustness"]
    assert md["leave_one_judge_out"]["top_model"] == "m2"


def test_markdown_report_shows_the_pairwise_section(gapped: dict[str, Any], tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["--store", str(gapped["store"]), "report", "--out", str(tmp_path / "r"),
                                   "--models", str(gapped["toml"])])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "## 1a. Which model is better" in text
    assert "Pairwise: judge-adjusted difference" in text and "Ranks: 1 = best" in text
    assert "Leave one dilemma out:" in text and "Leave one judge out:" in text


# ---- sparse and disconnected designs --------------------------------------------------------------------


def test_disconnected_design_prints_no_number_it_cannot_identify(tmp_path: Path) -> None:
    truth = disconnected_world()
    truth.family = {k: k for k in truth.family}  # no same-family contrast
    rounds = play(truth, disconnected_schedule(5), seed=2)
    out = run_json("--store", str(save(rounds, tmp_path / "s")), "report", "--json")
    for m in out["models"]:
        assert m["mean"] is None and m["ci_low"] is None and "never scored by a judge" in m["interval_note"]
    by = {(p["a"], p["b"]): p for p in out["pairwise"]}
    for a, b in (("m1", "m3"), ("m1", "m4"), ("m2", "m3"), ("m2", "m4")):
        assert by[(a, b)]["diff"] is None and by[(a, b)]["p_holm"] is None
        assert by[(a, b)]["reason"].startswith(f"{a} and {b} were never scored by a common judge")
    for a, b in (("m1", "m2"), ("m3", "m4")):  # within a group: identified, and the interval covers
        p = by[(a, b)]
        assert p["diff"] is not None and p["ci_low"] <= truth.skill[a] - truth.skill[b] <= p["ci_high"]
    assert all(r["rank"] is None and r["reason"] for r in out["ranks"])
    assert out["robustness"]["leave_one_dilemma_out"]["top_model"] is None
    assert out["robustness"]["leave_one_dilemma_out"]["reason"]
    assert out["fit"]["seat_gap"] is not None  # the seat is identified: not dropped
    assert not any("seat" in n for n in out["fit"]["notes"])
    assert all(j["offset"] is None and j["interval_note"].startswith("not identified") for j in out["judges"])


def test_a_judge_with_three_ratings_on_one_dilemma_gets_no_interval() -> None:
    truth = gapped_world()
    truth.severity["j5"], truth.family["j5"] = 0.9, "fz"
    sched = round_robin(list(truth.skill), list(truth.skill), 5) + [
        ("d1", "m1", "m2", "j5"), ("d1", "m3", "m4", "j5"), ("d1", "m2", "m3", "j5")]
    rounds = play(truth, sched, seed=5)
    out = analyse_fit(rounds, families=truth.family, replicates=200).json()
    j5 = next(j for j in out["judges"] if j["judge"] == "j5")
    assert j5["offset"] is not None and j5["ci_low"] is None and "1 dilemma" in j5["interval_note"]
    others = [j for j in out["judges"] if j["judge"] != "j5"]
    assert all(j["ci_low"] is not None for j in others)
    assert all(p["ci_low"] is not None for p in out["pairwise"])  # the models keep their intervals


def test_one_or_two_dilemmas_leave_tests_and_rank_intervals_blank() -> None:
    truth = gapped_world()
    rounds = play(truth, round_robin(list(truth.skill), list(truth.skill), 2), seed=6)
    out = analyse_fit(rounds, families=truth.family, replicates=100).json()
    for p in out["pairwise"]:
        assert p["diff"] is not None and p["ci_low"] is None and p["p_holm"] is None
        assert p["reason"] == "fewer than 3 dilemmas"
    assert all(r["rank"] is not None and r["rank_low"] is None and r["reason"] for r in out["ranks"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_and_disconnected_intervals_cover(seed: int) -> None:
    hits: list[bool] = []
    for truth, sched in ((disconnected_world(), disconnected_schedule(5)),):
        truth.family = {k: k for k in truth.family}
        rounds = play(truth, sched, seed=100 + seed)
        out = analyse_fit(rounds, families=truth.family, replicates=200).json()
        hits += [c for _, c in interval_checks(out, truth, rounds)]
        assert wrong_signs(out, truth) == []
    assert hits and np.mean(hits) >= 0.75


# ---- compare ---------------------------------------------------------------------------------------------


def test_compare_json_overall_and_per_criterion(gapped: dict[str, Any]) -> None:
    got = run_json("--store", str(gapped["store"]), "compare", "m1", "m3", "--json", "--models", str(gapped["toml"]))
    assert set(got) >= {"diff", "ci_low", "ci_high", "n_dilemmas", "criteria"}
    assert got["n_dilemmas"] == 5 and got["ci_low"] < 0.9 < got["ci_high"]  # true m1 - m3 = 0.9
    assert [c["criterion"] for c in got["criteria"]] == list(CRITERIA)
    for c in got["criteria"]:
        assert set(c) >= {"criterion", "diff", "ci_low", "ci_high"} and c["ci_low"] < c["diff"] < c["ci_high"]
    pair = next(p for p in gapped["out"]["pairwise"] if (p["a"], p["b"]) == ("m1", "m3"))
    assert got["diff"] == pytest.approx(pair["diff"])  # every dilemma was played by both: the same fit


def test_compare_uses_only_the_dilemmas_both_played(tmp_path: Path) -> None:
    truth = gapped_world()
    sched = [s for s in round_robin(list(truth.skill), list(truth.skill), 5)
             if not ("m4" in s[1:3] and s[0] in ("d1", "d2"))]  # m4 missed d1 and d2
    store = save(play(truth, sched, seed=8), tmp_path / "s")
    got = run_json("--store", str(store), "compare", "m1", "m4", "--json")
    assert got["n_dilemmas"] == 3 and got["dilemmas"] == ["d3", "d4", "d5"]
    assert got["diff"] is not None and got["ci_low"] <= truth.skill["m1"] - truth.skill["m4"] <= got["ci_high"]


def test_compare_names_a_model_without_scores(gapped: dict[str, Any]) -> None:
    res = CliRunner().invoke(cli, ["--store", str(gapped["store"]), "compare", "m1", "nobody"])
    assert res.exit_code == 2
    assert "no judged score for 'nobody'" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


# ---- calibration (few seeds by default; many when slow) ------------------------------------------------


def _any_significant(n: int, dilemmas: int, first_seed: int) -> float:
    hits = 0
    for s in range(n):
        truth = equal_world(4)
        rounds = play(truth, round_robin(list(truth.skill), list(truth.skill), dilemmas), seed=first_seed + s)
        out = analyse_fit(rounds, families=truth.family).json()
        hits += any(p["p_holm"] is not None and p["p_holm"] < 0.05 for p in out["pairwise"])
    return hits / n


def test_an_equal_world_rarely_shows_a_significant_pair() -> None:
    assert _any_significant(6, 4, 900) <= 1 / 6


@pytest.mark.slow
def test_an_equal_world_shows_a_significant_pair_at_most_8_percent_of_the_time() -> None:
    rates = {g: _any_significant(150, g, 20000 + 1000 * g) for g in (3, 5, 8)}
    assert all(r <= 0.08 for r in rates.values()), rates


@pytest.mark.slow
def test_every_reported_interval_covers_on_sparse_and_disconnected_designs() -> None:
    hits: list[bool] = []
    bad: list[str] = []
    for s in range(120):
        for truth, sched in ((disconnected_world(), disconnected_schedule(5)),
                             (disconnected_world(), disconnected_schedule(4))):
            if s % 2:
                truth.family = {k: k for k in truth.family}
            rounds = play(truth, sched, seed=30000 + s, interaction_sd=0.2)
            out = analyse_fit(rounds, families=truth.family).json()
            hits += [c for _, c in interval_checks(out, truth, rounds)]
            bad += wrong_signs(out, truth)
    assert np.mean(hits) >= 0.85 and not bad, (np.mean(hits), bad[:5])


def test_groups_on_separate_dilemmas_leave_dilemma_effects_blank() -> None:
    truth = disconnected_world(sparse_judge=False)
    truth.family = {k: k for k in truth.family}
    sched = [s for s in disconnected_schedule(6, sparse_judge=False) if (s[1] in ("m1", "m2")) == (s[0] in ("d1", "d2", "d3"))]
    out = analyse_fit(play(truth, sched, seed=9), families=truth.family, replicates=100).json()
    assert all(d["effect"] is None and d["reason"].startswith("not identified") for d in out["dilemmas"])
    connected = analyse_fit(play(truth, disconnected_schedule(4, sparse_judge=False), seed=9),
                            families=truth.family, replicates=100).json()
    assert all(d["effect"] is not None and d["reason"] == "" for d in connected["dilemmas"])


def test_blank_rows_of_the_fit_tables_carry_a_reason() -> None:
    truth = disconnected_world(sparse_judge=False)
    truth.family = {k: k for k in truth.family}
    out = analyse_fit(play(truth, disconnected_schedule(4, sparse_judge=False), seed=3), families=truth.family,
                      replicates=100).json()
    for row in [*out["models"], *out["judges"], out["family_preference"]]:
        blank = row.get("mean", row.get("offset", row.get("estimate"))) is None or row["ci_low"] is None
        assert not blank or row["reason"], row
