"""End to end against an OpenAI-compatible fake server whose judges carry planted biases (tests/support/fake_biased_server.py):
`ebtui tournament` with judge_order = "balanced", `ebtui rejudge --only-views` and `--order swapped` (judge calls
only), then
`ebtui report --json` recovers the length bias, each judge's order and agreement bias and the models' skill gaps."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from tests.support.fake_biased_server import FakeServer, Planted

TOL = 0.3


def _configs(tmp: Path, url: str, dilemmas: int) -> tuple[Path, Path]:
    models = tmp / "models.toml"
    models.write_text("".join(
        f'[models.{m}]\nprovider = "openai"\nmodel = "{m}"\nbase_url = "{url}"\napi_key_env = "EBTUI_TEST_KEY"\n'
        f"json_schema = false\nprice_in = 1.0\nprice_out = 2.0\nbackoff_s = 0.05\n\n"
        for m in ("m-a", "m-b", "m-c", "j-1", "j-2")))
    ids = [d.id for d in load_dilemmas()[:dilemmas]]
    tour = tmp / "tournament.toml"
    tour.write_text(f'name = "biased"\nmodels = ["m-a", "m-b", "m-c"]\ndilemmas = {json.dumps(ids)}\n'
                    'judges = ["j-1", "j-2"]\njudge_order = "balanced"\nrounds_per_pairing = 4\nconcurrency = 8\n')
    return models, tour


@pytest.mark.slow
def test_planted_judge_biases_recovered_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    planted = Planted(skill={"m-a": 6.8, "m-b": 6.1, "m-c": 5.5}, order={"j-1": 0.6, "j-2": -0.4},
                      agree={"j-1": 0.8, "j-2": 0.0})
    with FakeServer(planted) as url:
        models, tour = _configs(tmp_path, url, dilemmas=6)
        base = ["--models", str(models), "--store", str(tmp_path / "store")]
        res = CliRunner().invoke(cli, [*base, "tournament", str(tour)])
        assert res.exit_code == 0, res.output
        team_calls = sum(n for m, n in planted.calls.items() if m.startswith("m-"))
        judge_calls = sum(n for m, n in planted.calls.items() if m.startswith("j-"))
        res = CliRunner().invoke(cli, [*base, "rejudge", "biased", "--only-views"])
        assert res.exit_code == 0, res.output
        res = CliRunner().invoke(cli, [*base, "rejudge", "biased", "--order", "swapped"])  # each read both ways
        assert res.exit_code == 0, res.output
        assert sum(n for m, n in planted.calls.items() if m.startswith("m-")) == team_calls  # judge calls only
        assert sum(n for m, n in planted.calls.items() if m.startswith("j-")) > judge_calls
        res = CliRunner().invoke(cli, [*base, "report", "--json"])
        assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    length = next(c for c in data["style"]["coefficients"] if c["term"] == "length")
    assert abs(length["estimate"] - planted.length) < TOL and length["ci_low"] <= planted.length <= length["ci_high"]
    for row in data["order"]:
        want = planted.order[row["judge"]]
        assert abs(row["effect"] - want) < TOL and row["ci_low"] <= want <= row["ci_high"], row
        assert row["flip_pairs"] > 0 and 0 <= row["flip_rate"] <= 1 and row["n_ab"] == row["n_ba"]
    for row in data["agreement_bias"]:
        want = planted.agree[row["judge"]]
        assert row["n"] > 0 and abs(row["effect"] - want) < TOL and row["ci_low"] <= want <= row["ci_high"], row
    means = {m["model"]: m["adjusted_mean"] for m in data["style"]["models"]}
    for a, b in combinations(sorted(planted.skill), 2):
        assert abs((means[a] - means[b]) - (planted.skill[a] - planted.skill[b])) < 0.35, (a, b, means)
