"""Tournaments on the designs researchers end up with, generated from a planted truth (tests/sim_truth.Truth):
an explicit schedule of (dilemma, Team A, Team B, judge) rounds, so a test can build a disconnected design, a
judge with 3 ratings on one dilemma, or a world where every model is equal. Real Round records; integer
scores 1-10. Used by tests/unit/analysis/test_pairwise.py."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ebtui.core.records import CRITERIA, Round
from tests.support.factories import planted_scores, scored_round
from tests.support.sim_truth import Truth

Slot = tuple[str, str, str, str]  # dilemma, team A model, team B model, judge


def play(truth: Truth, schedule: Iterable[Slot], *, seed: int = 0, interaction_sd: float = 0.0,
         interaction: dict[tuple[str, str], float] | None = None, tournament_id: str = "t-design") -> list[Round]:
    """One judged round per slot. `interaction_sd`: a model x dilemma interaction (a model better on some
    dilemmas), which only the dilemma bootstrap sees."""
    rng = np.random.default_rng(seed)
    slots = list(schedule)
    dilemmas = sorted({s[0] for s in slots})
    models = sorted({m for s in slots for m in s[1:3]})
    truth.dilemma_effect = {d: float(rng.normal(0, truth.dilemma_sd)) for d in dilemmas}
    inter = {(m, d): float(rng.normal(0, interaction_sd)) for m in models for d in dilemmas}
    inter.update(interaction or {})  # planted: model m is this much better on dilemma d
    crit = dict(zip(CRITERIA, rng.normal(0, truth.criterion_sd, len(CRITERIA)), strict=True))
    crit = {c: v - float(np.mean(list(crit.values()))) for c, v in crit.items()}
    rounds = []
    for k, (d, a, b, j) in enumerate(slots):
        scores = {}
        for team, m in (("a", a), ("b", b)):
            base = (truth.skill[m] + truth.severity[j] + truth.dilemma_effect[d] + inter[(m, d)]
                    + (truth.seat_gap / 2 if team == "a" else -truth.seat_gap / 2)
                    + (truth.family_pref if truth.family[m] == truth.family[j] else 0.0))
            vals = base + np.array([crit[c] for c in CRITERIA]) + rng.normal(0, truth.noise_sd, 7)
            scores[team] = planted_scores(vals)
        ex = f"x{k:04d}"
        rounds.append(scored_round(f"r-{ex}-{j}", d, a, b, j, scores["a"], scores["b"],
                                   text=lambda pt, who, d=d: f"{pt.value} by {who} on {d}",
                                   tournament_id=tournament_id, exchange_id=ex, schedule_key=f"{d}|{a}|{b}|{k}|{j}"))
    return rounds


def round_robin(models: list[str], judges: list[str], dilemmas: int, *, rotate: bool = True) -> list[Slot]:
    """Every ordered pair of distinct models on every dilemma; judges: the listed ones that are not playing,
    one in turn (rotate) or all."""
    out: list[Slot] = []
    k = 0
    for g in range(dilemmas):
        for a in models:
            for b in models:
                if a == b:
                    continue
                free = [j for j in judges if j not in (a, b)]
                for j in ([free[k % len(free)]] if rotate else free):
                    out.append((f"d{g + 1}", a, b, j))
                k += 1
    return out


def equal_world(n_models: int = 4) -> Truth:
    """Every model equally good; judges = the models (never their own rounds), of differing severity."""
    names = [f"m{i + 1}" for i in range(n_models)]
    sev = dict(zip(names, np.linspace(-0.5, 0.5, n_models).tolist(), strict=True))
    fams = {m: ("fa" if i % 2 == 0 else "fb") for i, m in enumerate(names)}
    return Truth(dict.fromkeys(names, 6.5), fams, sev, family_pref=0.3)


def disconnected_world(sparse_judge: bool = True) -> Truth:
    """m1, m2 judged only by j1; m3, m4 only by j2 (true skills: m1 = m3 = 6.8, m2 = m4 = 6.0); j3 (sparse)
    gives 3 ratings, all on one dilemma, to m1 v m2."""
    skill = {"m1": 6.8, "m2": 6.0, "m3": 6.8, "m4": 6.0}
    fam = {"m1": "fa", "m2": "fb", "m3": "fa", "m4": "fb", "j1": "fa", "j2": "fb", "j3": "fc"}
    sev = {"j1": -0.4, "j2": 0.4, **({"j3": 0.8} if sparse_judge else {})}
    return Truth(skill, fam, sev, family_pref=0.4)


def disconnected_schedule(dilemmas: int, *, sparse_judge: bool = True) -> list[Slot]:
    out: list[Slot] = []
    for g in range(dilemmas):
        d = f"d{g + 1}"
        out += [(d, "m1", "m2", "j1"), (d, "m2", "m1", "j1"), (d, "m3", "m4", "j2"), (d, "m4", "m3", "j2")]
    if sparse_judge:
        out += [("d1", "m1", "m2", "j3"), ("d1", "m2", "m1", "j3"), ("d1", "m1", "m2", "j3")]
    return out


def judged_truth(truth: Truth, rounds: list[Round]) -> tuple[dict[str, float], dict[str, float]]:
    """What the report's adjusted means and judge offsets estimate: skill at the average of the judges that
    appear in the rounds, and each judge's severity relative to that average."""
    judges = sorted({r.judge_model for r in rounds})
    avg = float(np.mean([truth.severity[j] for j in judges]))
    models = sorted({m for r in rounds for m in (r.team_a_model, r.team_b_model)})
    return {m: truth.skill[m] + avg for m in models}, {j: truth.severity[j] - avg for j in judges}


def interval_checks(out: dict, truth: Truth, rounds: list[Round]) -> list[tuple[str, bool]]:
    """(what, covered) for every interval `report --json` prints: model means, judge offsets, the family
    preference, and every pair."""
    means, offsets = judged_truth(truth, rounds)
    got: list[tuple[str, bool]] = []
    for m in out["models"]:
        if m["ci_low"] is not None:
            got.append(("model", m["ci_low"] <= means[m["model"]] <= m["ci_high"]))
    for j in out["judges"]:
        if j["ci_low"] is not None:
            got.append(("judge", j["ci_low"] <= offsets[j["judge"]] <= j["ci_high"]))
    f = out["family_preference"]
    if f["ci_low"] is not None:
        got.append(("family", f["ci_low"] <= truth.family_pref <= f["ci_high"]))
    for p in out["pairwise"]:
        if p["ci_low"] is not None:
            got.append(("pair", p["ci_low"] <= truth.skill[p["a"]] - truth.skill[p["b"]] <= p["ci_high"]))
    return got


def wrong_signs(out: dict, truth: Truth) -> list[str]:
    """Pairs with a planted gap whose interval excludes 0 on the wrong side (pairs with no gap: see
    `interval_checks`, where an interval excluding 0 is a miss)."""
    bad = []
    for p in out["pairwise"]:
        if p["ci_low"] is None or p["ci_low"] <= 0 <= p["ci_high"]:
            continue
        true = truth.skill[p["a"]] - truth.skill[p["b"]]
        if true != 0 and np.sign(true) != np.sign(p["diff"]):
            bad.append(f"{p['a']}-{p['b']}: true {true:+.2f}, [{p['ci_low']:+.2f}, {p['ci_high']:+.2f}]")
    return bad
