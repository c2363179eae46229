"""End to end against the OpenAI-compatible fake server (tests/support/fake_biased_server.py) with a planted
self-preference, a same-family preference and a judge that rewards the longer of the two answers: `ebtui
tournament`, then `ebtui rejudge --judges ... --allow-own` (the players judge every round, their own included),
then `ebtui report --json`: the self and family terms come apart, each with the (judge, model) pairs it rests
on, and the relative-length coefficient is recovered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from tests.support.fake_biased_server import FakeServer, Planted

FAMILY = {"m-a": "fam-x", "m-b": "fam-x", "j-1": "fam-x"}


def _configs(tmp: Path, url: str, dilemmas: int) -> tuple[Path, Path]:
    models = tmp / "models.toml"
    models.write_text("".join(
        f'[models.{m}]\nprovider = "openai"\nmodel = "{m}"\nbase_url = "{url}"\napi_key_env = "EBTUI_TEST_KEY"\n'
        f'family = "{FAMILY.get(m, m)}"\njson_schema = false\nprice_in = 1.0\nprice_out = 2.0\nbackoff_s = 0.05\n\n'
        for m in ("m-a", "m-b", "m-c", "m-d", "j-1")))
    ids = [d.id for d in load_dilemmas()[:dilemmas]]
    tour = tmp / "tournament.toml"
    tour.write_text(f'name = "own"\nmodels = ["m-a", "m-b", "m-c", "m-d"]\ndilemmas = {json.dumps(ids)}\n'
                    'judges = ["j-1"]\nrounds_per_pairing = 1\nconcurrency = 8\n')
    return models, tour


@pytest.mark.slow
def test_self_and_family_apart_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")
    planted = Planted(skill={"m-a": 6.6, "m-b": 6.0, "m-c": 5.7, "m-d": 6.3}, order={}, agree={}, length=0.0,
                      relative_length=1.5, self_pref=0.8, family_pref=0.4, families=FAMILY)
    with FakeServer(planted) as url:
        models, tour = _configs(tmp_path, url, dilemmas=6)
        base = ["--models", str(models), "--store", str(tmp_path / "store")]
        res = CliRunner().invoke(cli, [*base, "tournament", str(tour)])
        assert res.exit_code == 0, res.output
        res = CliRunner().invoke(cli, [*base, "rejudge", "own", "--judges", "m-a,m-b,m-c", "--allow-own"])
        assert res.exit_code == 0, res.output
        res = CliRunner().invoke(cli, [*base, "report", "--json"])
        assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    rows = {r["term"]: r for r in data["self_and_family"]}
    me, fam = rows["self"], rows["same_family"]
    assert me["pairs"] == ["m-a -> m-a", "m-b -> m-b", "m-c -> m-c"] and me["n"] == 3
    # j-1 and the fam-x players judging each other: four pairs, none of them a judge scoring itself
    assert fam["pairs"] == ["j-1 -> m-a", "j-1 -> m-b", "m-a -> m-b", "m-b -> m-a"] and fam["n"] == 4
    for row, want in ((me, planted.self_pref), (fam, planted.family_pref)):
        assert abs(row["estimate"] - want) < 0.3 and row["ci_low"] <= want <= row["ci_high"], row
    rel = next(c for c in data["style"]["coefficients"] if c["term"] == "length_relative")
    assert rel["ci_low"] > 0 and rel["ci_low"] <= planted.relative_length <= rel["ci_high"], rel
    assert data["judge_bias_fit"]["judge_model_sd"] < 0.15  # no pair liking planted beyond self and family
