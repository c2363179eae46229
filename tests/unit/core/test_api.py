"""The Python API (`import ebtui`): typed records, the report's numbers equal to `report --json`, and a light
import (no Textual, no pandas until a DataFrame is asked for)."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pytest

import ebtui
from ebtui.core.records import Round, Tournament
from tests.support.export_support import invoke, report_json, shared_tournament


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    info = shared_tournament()
    report = ebtui.open_store(info["root"]).report(tournament=info["tid"])
    return {**info, "json": report_json(info["root"], info["tid"]), "report": report}


def _close(a: Any, b: Any, where: str) -> None:
    if isinstance(a, float) or isinstance(b, float):
        assert a is not None and b is not None, where
        assert math.isclose(a, b, rel_tol=0, abs_tol=1e-9), (where, a, b)
    else:
        assert a == b, (where, a, b)


def test_records_are_typed(played: dict[str, Any]) -> None:
    store = ebtui.open_store(played["root"])
    ts = store.tournaments()
    assert [t.id for t in ts] == [played["tid"]] and isinstance(ts[0], Tournament)
    rounds = store.rounds(tournament=played["tid"])
    assert len(rounds) == played["n"] and all(isinstance(r, Round) for r in rounds)
    assert store.round(rounds[0].id) == rounds[0]
    only = store.rounds(tournament=played["tid"], model="claude-a")
    assert only and all("claude-a" in (r.team_a_model, r.team_b_model) for r in only)
    with pytest.raises(FileNotFoundError, match="no results store"):
        ebtui.open_store(played["root"] / "nope")


def test_model_and_judge_tables_equal_report_json(played: dict[str, Any]) -> None:
    report = played["report"]
    want = played["json"]
    assert len(report.models) == len(want["models"]) == 4
    for got, row in zip(report.models, want["models"], strict=True):
        assert isinstance(got, ebtui.ModelResult)
        for field, value in row.items():
            _close(getattr(got, field), value, f"models/{got.model}/{field}")
    assert any(m.ci_low is not None for m in report.models), "three dilemmas: intervals exist"
    for got, row in zip(report.judges, want["judges"], strict=True):
        for field, value in row.items():
            _close(getattr(got, field), value, f"judges/{got.judge}/{field}")
    overrides = report.models_with_overrides
    assert overrides is not None
    for got, row in zip(overrides, want["with_overrides"]["models"], strict=True):
        for field, value in row.items():
            _close(getattr(got, field), value, f"with_overrides/{got.model}/{field}")


def test_the_whole_json_and_any_table_as_a_dataframe(played: dict[str, Any]) -> None:
    report = played["report"]
    want = {k: v for k, v in played["json"].items() if k != "filters"}
    got = report.json()
    assert set(got) == set(want)

    def walk(a: Any, b: Any, where: str) -> None:
        if isinstance(a, dict):
            assert set(a) == set(b), where
            for k in a:
                walk(a[k], b[k], f"{where}/{k}")
        elif isinstance(a, list):
            assert len(a) == len(b), where
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")
        else:
            _close(a, b, where)

    walk(got, want, "")
    df = report.table("judges")
    assert list(df["judge"]) == [j["judge"] for j in want["judges"]]
    assert max(abs(df["offset"] - [j["offset"] for j in want["judges"]])) < 1e-9
    with pytest.raises(KeyError, match="no table 'nope'"):
        report.table("nope")


def test_the_report_for_one_model_matches_report_model(played: dict[str, Any]) -> None:
    res = invoke("--store", str(played["root"]), "report", "--tournament", played["tid"], "--model", "gpt-b",
                 "--json")
    import json

    want = json.loads(res.stdout)
    report = ebtui.open_store(played["root"]).report(tournament=played["tid"], model="gpt-b")
    assert want["n_rounds"] == report.data.rounds
    for got, row in zip(report.models, want["models"], strict=True):
        for field, value in row.items():
            _close(getattr(got, field), value, f"{got.model}/{field}")


def test_import_ebtui_is_light() -> None:
    code = ("import sys, ebtui; s = ebtui.open_store; "
            "print(sorted(n for n in ('textual', 'pandas', 'pyarrow', 'statsmodels', 'inspect_ai') "
            "if n in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_api_imports_no_front_end() -> None:
    from tests.repo.test_architecture import PKG, _all_imports

    banned = ("textual", "rich", "ebtui.tui", "ebtui.cli", "ebtui.launcher")
    bad = [n for n in _all_imports(PKG / "api.py") if any(n == b or n.startswith(b + ".") for b in banned)]
    assert bad == []
