"""End to end, as the issue's contract runs it: a tournament through `ebtui tournament` whose scripted judges
return planted scores (skill + judge severity + same-family preference + dilemma difficulty + noise), then
`ebtui report --json`. The scripted judges answer with rules that match the judge prompt's team line and the
dilemma heading (a rule's `match` list: all must occur)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import CRITERIA
from ebtui.core.store import ResultsStore
from tests.support.sim_truth import default_truth, true_adjusted_means, true_offsets


@pytest.fixture(autouse=True)
def _fast_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")


def team_line(a: str, b: str) -> str:
    return (f"Team A (model `{a}`) gave the presentation, the rebuttal and the consistency test; "
            f"Team B (model `{b}`) gave the response.")


def planted_models(path: Path, dilemmas: list[Any], seed: int = 7) -> tuple[Path, Any]:
    truth = default_truth()
    rng = np.random.default_rng(seed)
    d_eff = {d.id: float(e) for d, e in zip(dilemmas, rng.normal(0, 0.4, len(dilemmas)), strict=True)}
    truth.dilemma_effect = d_eff
    models = sorted(truth.skill)
    lines: list[str] = []
    for j in models:
        lines += [f"[models.{j}]", 'provider = "scripted"', f'family = "{truth.family[j]}"', "rules = ["]
        for d in dilemmas:
            for a in models:
                for b in models:
                    if j in (a, b):
                        continue
                    team = {}
                    for side, m, seat in (("team_a", a, 0.15), ("team_b", b, -0.15)):
                        mu = (truth.skill[m] + truth.severity[j] + d_eff[d.id] + seat
                              + (truth.family_pref if truth.family[m] == truth.family[j] else 0.0))
                        vals = np.clip(np.rint(mu + rng.normal(0, 0.8, len(CRITERIA))), 1, 10).astype(int)
                        team[side] = {"scores": dict(zip(CRITERIA, map(int, vals), strict=True)),
                                      "justification": f"Planted for {m}."}
                    reply = json.dumps({**team, "overall_analysis": "Planted."})
                    match = [team_line(a, b), f"# Dilemma: {d.title.strip() or d.id}"]
                    lines.append(f"  {{match = {json.dumps(match)}, reply = {json.dumps(reply)}}},")
        lines += ["]", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path, truth


def test_planted_tournament_end_to_end(tmp_path: Path) -> None:
    dilemmas = load_dilemmas()[:4]
    models, truth = planted_models(tmp_path / "models.toml", dilemmas)
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'name = "planted"\nmodels = {json.dumps(sorted(truth.skill))}\n'
                   f'dilemmas = {json.dumps([d.id for d in dilemmas])}\njudges = "panel"\nself_debates = true\n'
                   "concurrency = 16\n", encoding="utf-8")
    store = tmp_path / "store"
    res = CliRunner().invoke(cli, ["tournament", str(cfg), "--models", str(models), "--store", str(store)])
    assert res.exit_code == 0, res.output
    rounds = ResultsStore(store).load_rounds()
    assert rounds and all(r.judgment is not None and not r.judgment.parsed_scores("a").missing() for r in rounds)
    # each round records its seats' families as configured, so a report without this models.toml still knows them
    for r in rounds:
        assert r.settings.families == {x: truth.family[x] for x in (r.team_a_model, r.team_b_model, r.judge_model)}
    from ebtui.core.families import round_families
    resolved = round_families(rounds)  # no models.toml: what the rounds recorded
    assert {m: resolved[m] for m in truth.skill} == dict(truth.family)

    res = CliRunner().invoke(cli, ["report", "--json", "--store", str(store), "--models", str(models)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    means = {m["model"]: m["mean"] for m in out["models"]}
    for (a, b), diff in truth.pair_diffs(true_adjusted_means(truth)).items():
        assert abs(means[a] - means[b] - diff) <= 0.35, (a, b)
    offsets = {j["judge"]: j["offset"] for j in out["judges"]}
    for (a, b), diff in truth.pair_diffs(true_offsets(truth)).items():
        assert abs(offsets[a] - offsets[b] - diff) <= 0.35, (a, b)
    fam = out["family_preference"]
    assert abs(fam["estimate"] - truth.family_pref) <= 0.3 and fam["ci_low"] <= truth.family_pref <= fam["ci_high"]
    for row in out["models"]:
        assert 1 <= row["ci_low"] < row["ci_high"] <= 10
    # the raw per-model per-criterion table: every parsed score of both seats
    crit = {(c["model"], c["criterion"]): c for c in out["criteria_by_model"]}
    m = "gpt-y"
    seats = [(r, t) for r in rounds for t, who in (("a", r.team_a_model), ("b", r.team_b_model)) if who == m]
    vals = [r.judgment.parsed_scores(t).consistency for r, t in seats]
    assert crit[(m, "consistency")]["n"] == len(vals)
    assert crit[(m, "consistency")]["raw_mean"] == pytest.approx(sum(vals) / len(vals))

    one = json.loads(CliRunner().invoke(cli, ["report", "--json", "--store", str(store), "--models", str(models),
                                              "--dilemma", dilemmas[0].id]).stdout)
    assert all(r["ci_low"] is None and r["interval_note"] == "fewer than 3 dilemmas" for r in one["models"])
    only = json.loads(CliRunner().invoke(cli, ["report", "--json", "--store", str(store), "--models", str(models),
                                               "--model", m]).stdout)
    assert next(r for r in only["models"] if r["model"] == m)["n_rounds"] == len({r.id for r, _ in seats})
