"""`ebtui export table`: the tidy tables read back with pandas equal the store, and the dataset card's
metadata block is YAML the Hugging Face hub can read."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.records import CRITERIA, PhaseType
from ebtui.core.store import ResultsStore
from tests.support.export_support import HOSTILE, export_shared, invoke

pd = pytest.importorskip("pandas", reason="the tidy-table tests need pandas: pip install -e '.[data]'")
pytest.importorskip("pyarrow", reason="Parquet needs pyarrow: pip install -e '.[data]'")
yaml = pytest.importorskip("yaml", reason="reading the dataset card's metadata needs PyYAML")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("export-tables") / "tables"
    info, res = export_shared("table", out)
    listed = [Path(p) for p in res.stdout.split()]
    return {**info, "out": out, "listed": listed}


def test_one_row_per_judgment_team_and_criterion_with_the_stores_values(exported: dict[str, Any]) -> None:
    out = exported["out"]
    assert {p.name for p in exported["listed"]} == {f"{t}.{e}" for t in ("scores", "rounds", "phases")
                                                   for e in ("parquet", "csv")} | {"README.md"}
    df = pd.read_parquet(out / "scores.parquet")
    rounds = ResultsStore(exported["root"]).load_rounds(tournament=exported["tid"])
    judged = [r for r in rounds if r.judgment is not None]
    assert len(df) == len(judged) * 2 * len(CRITERIA)
    assert not df.duplicated(["round_id", "judgment_index", "team", "criterion"]).any()
    assert set(df["judgment_index"]) == {0}
    by_key = df.set_index(["round_id", "judgment_index", "team", "criterion"])
    seen_missing = seen_override = 0
    for r in judged:
        for team in ("a", "b"):
            parsed = r.judgment.parsed_scores(team).as_dict()
            effective = r.judgment.effective_scores(team).as_dict()
            for crit in CRITERIA:
                row = by_key.loc[(r.id, 0, team, crit)]
                for col, want in (("parsed", parsed[crit]), ("effective", effective[crit])):
                    got = row[col]
                    if want is None:
                        assert pd.isna(got), (r.id, team, crit, col, got)
                    else:
                        assert got == want, (r.id, team, crit, col, got, want)
                seen_missing += parsed[crit] is None
                seen_override += bool(row["overridden"])
                assert row["model"] == (r.team_a_model if team == "a" else r.team_b_model)
                assert row["judge"] == r.judge_model and row["dilemma_id"] == r.dilemma_id
                assert row["judge_output_tokens"] == r.phase(PhaseType.JUDGMENT).usage.output_tokens
    assert seen_missing > 0, "the prose judge's missing scores must be rows with empty values"
    assert seen_override == 2
    notes = set(df.loc[df["overridden"], "override_note"])
    assert notes == {"checked <by> hand", "scored by hand"}
    # a missing score filled in by hand: parsed empty, effective 6
    filled = df[df["override_note"] == "scored by hand"].iloc[0]
    assert pd.isna(filled["parsed"]) and filled["effective"] == 6 and filled["provenance_kind"] == "missing"


def test_csv_equals_parquet_and_rounds_and_phases_tables(exported: dict[str, Any]) -> None:
    out = exported["out"]
    for name in ("scores", "rounds", "phases"):
        pq_df = pd.read_parquet(out / f"{name}.parquet")
        with (out / f"{name}.csv").open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == len(pq_df)
        assert list(rows[0]) == list(pq_df.columns)
    rounds = ResultsStore(exported["root"]).load_rounds(tournament=exported["tid"])
    rt = pd.read_parquet(out / "rounds.parquet").set_index("round_id")
    assert set(rt.index) == {r.id for r in rounds}
    for r in rounds:
        row = rt.loc[r.id]
        assert row["cost_usd"] == pytest.approx(r.total_usage().cost_usd) if r.total_usage().cost_usd else \
            pd.isna(row["cost_usd"])
        if r.judgment is not None:
            total = r.judgment.effective_scores("a").total()
            assert (pd.isna(row["total_a_effective"]) if total is None else row["total_a_effective"] == total)
    ph = pd.read_parquet(out / "phases.parquet")
    assert len(ph) == sum(len(r.phases) for r in rounds)
    # model text comes out as written, minus terminal control sequences
    hostile = ph[ph["response"].str.contains("console.error", regex=False, na=False)]
    assert len(hostile) >= 1 and "\x1b" not in "".join(ph["response"].fillna(""))
    assert "<script>" in hostile.iloc[0]["response"]
    assert HOSTILE.replace("\x1b", "") .strip()[:20] in hostile.iloc[0]["response"]


def test_the_dataset_card_metadata_parses_as_yaml(exported: dict[str, Any]) -> None:
    text = (exported["out"] / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    block = text.split("---\n", 2)[1]
    meta = yaml.safe_load(block)
    assert meta["license"] == "unknown"  # left to the user
    assert meta["pretty_name"] == "ebtui: Export cup <b>&"
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == {"scores", "rounds", "phases"} and configs["scores"]["default"] is True
    for c in configs.values():
        assert (exported["out"] / c["data_files"]).is_file()
    info = {c["config_name"]: c for c in meta["dataset_info"]}
    df = pd.read_parquet(exported["out"] / "scores.parquet")
    assert [f["name"] for f in info["scores"]["features"]] == list(df.columns)
    assert info["scores"]["splits"][0]["num_examples"] == len(df)
    body = text.split("---\n", 2)[2]
    for col in df.columns:
        assert f"| {col} |" in body  # every column described


def test_api_dataframes_equal_the_files(exported: dict[str, Any]) -> None:
    import ebtui

    store = ebtui.open_store(exported["root"])
    api = store.scores(tournament=exported["tid"])
    files = pd.read_parquet(exported["out"] / "scores.parquet")
    pd.testing.assert_frame_equal(api.reset_index(drop=True), files.convert_dtypes().reset_index(drop=True),
                                  check_dtype=False)
    assert str(api["parsed"].dtype) == "Int64"


def test_errors_are_one_line(tmp_path: Path) -> None:
    res = invoke("export", "table", "--store", str(tmp_path / "nowhere"))
    assert res.exit_code == 2 and res.output.strip().count("\n") == 0 and "no results store" in res.output
    (tmp_path / "empty").mkdir()
    res = invoke("export", "table", "--store", str(tmp_path / "empty"))
    assert res.exit_code == 2 and "nothing to export" in res.output


def test_csv_only_needs_no_extra_and_a_missing_pyarrow_is_one_line(exported: dict[str, Any], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith(("pyarrow", "pandas")):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    store = str(exported["root"])
    res = invoke("export", "table", "--store", store, "--out", str(tmp_path / "t"))
    assert res.exit_code == 2 and res.output.strip() == (
        "ebtui: error: writing Parquet needs the pyarrow package: pip install 'ebtui[data]' (or give --format csv)")
    res = invoke("export", "table", "--store", store, "--out", str(tmp_path / "c"), "--format", "csv")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["README.md", "phases.csv", "rounds.csv",
                                                                  "scores.csv"]
    assert "data_files: \"scores.csv\"" in (tmp_path / "c" / "README.md").read_text(encoding="utf-8")
