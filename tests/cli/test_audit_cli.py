"""`ebtui audit draw/list/sheet/import` and `report --json`'s human_audit over a real store of simulated rounds
whose hidden human-scale scores are known (tests/support/audit_sim.py): the human scores go in through the sheet,
exactly as a person would enter them."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ebtui.cli import cli
from ebtui.core.records import CRITERIA
from tests.support.audit_sim import AuditWorld, World, generate
from tests.support.factories import open_store


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="ebtui")


@pytest.fixture(scope="module")
def world_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, World]:
    root = tmp_path_factory.mktemp("audit") / "store"
    world = generate(AuditWorld(dilemmas=5, repeats=1), seed=11)
    store = open_store(root)
    for r in world.rounds:
        store.save_round(r)
    store.close()
    return root, world


def draw(root: Path, *extra: str) -> dict[str, Any]:
    res = invoke("audit", "draw", "--store", str(root), "--json", *extra)
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.output)
    return out


def fill(sheet: Path, world: World, *, bad: tuple[int, str] | None = None) -> Path:
    """The sheet with every human_score filled from the hidden scores (`bad`: (data row, value) put in one)."""
    rows = list(csv.reader(sheet.open(encoding="utf-8")))
    for i, row in enumerate(rows[1:], start=1):
        row[5] = str(world.hidden[(row[1], row[2], row[3], row[4])])
        if bad is not None and i == bad[0]:
            row[5] = bad[1]
    out = sheet.with_name(sheet.stem + ("-bad" if bad else "-filled") + ".csv")
    with out.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return out


def test_the_same_seed_draws_the_same_judgments(world_store: tuple[Path, World]) -> None:
    root, world = world_store
    first, again, other = draw(root, "--n", "12", "--seed", "7"), draw(root, "--n", "12", "--seed", "7"), \
        draw(root, "--n", "12", "--seed", "8")
    assert first["audit_id"] != again["audit_id"] and first["audit_id"].startswith("a-")
    assert first["judgments"] == again["judgments"]
    assert first["judgments"] != other["judgments"]
    assert len({(j["round_id"], j["judgment_id"]) for j in first["judgments"]}) == 12
    ids = {r.id for r in world.rounds}
    assert all(j["round_id"] in ids and j["judgment_id"] == "primary" for j in first["judgments"])
    listed = invoke("audit", "list", "--store", str(root))
    assert listed.exit_code == 0 and f"{first['audit_id']}" in listed.output and "0 of 12 scored" in listed.output


def test_a_bad_cell_refuses_the_whole_sheet_and_names_the_line(world_store: tuple[Path, World], tmp_path: Path) -> None:
    root, world = world_store
    a = draw(root, "--n", "10", "--seed", "3")
    sheet = tmp_path / "s.csv"
    res = invoke("audit", "sheet", a["audit_id"], "--out", str(sheet), "--store", str(root))
    assert res.exit_code == 0, res.output
    header, *rows = list(csv.reader(sheet.open(encoding="utf-8")))
    assert header == ["audit_id", "round_id", "judgment_id", "team", "criterion", "human_score"]
    assert len(rows) == 10 * 2 * len(CRITERIA) and all(r[5] == "" for r in rows)
    assert {r[3] for r in rows} == {"a", "b"} and {r[4] for r in rows} == set(CRITERIA)
    before = (root / "audits" / f"{a['audit_id']}.json").read_bytes()
    for value, what in (("7.5", "human_score '7.5'"), ("11", "human_score '11'"), ("seven", "human_score 'seven'"),
                        ("0", "human_score '0'")):
        bad = fill(sheet, world, bad=(37, value))
        res = invoke("audit", "import", str(bad), "--store", str(root))
        assert res.exit_code == 2
        assert "line 38" in res.output and what in res.output and "nothing imported" in res.output
        assert res.output.count("\n") == 1
        assert (root / "audits" / f"{a['audit_id']}.json").read_bytes() == before
    # an unknown criterion, a round not drawn, a row of another audit: the same
    good = fill(sheet, world)
    text = good.read_text(encoding="utf-8").splitlines()
    for line, field, value, what in ((5, 4, "kindness", "unknown criterion 'kindness'"),
                                     (9, 1, "r-nope", "'r-nope'"), (10, 2, "k-nope", "'k-nope'"),
                                     (11, 3, "c", "team 'c'"),
                                     (12, 0, "a-other", "a row of audit 'a-other'")):
        lines = list(text)
        cells = lines[line - 1].split(",")
        cells[field] = value
        lines[line - 1] = ",".join(cells)
        path = tmp_path / f"m{line}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        res = invoke("audit", "import", str(path), "--store", str(root))
        assert res.exit_code == 2 and f"line {line}:" in res.output and what in res.output, res.output
        assert (root / "audits" / f"{a['audit_id']}.json").read_bytes() == before
    res = invoke("audit", "import", str(good), "--store", str(root), "--rater", "ann")
    assert res.exit_code == 0 and "140 human scores" in res.output, res.output
    stored = json.loads((root / "audits" / f"{a['audit_id']}.json").read_text())
    assert len(stored["ratings"]) == 140 and {r["rater"] for r in stored["ratings"]} == {"ann"}
    assert all(r["score"] == world.hidden[(r["round_id"], r["judgment_id"], r["team"], r["criterion"])]
               for r in stored["ratings"])


def test_report_json_calibrates_through_the_sheet(tmp_path: Path) -> None:
    """The whole path on a fresh store: draw, sheet, import, report --json. The calibrated intervals cover the
    human-scale adjusted means, the judge-only interval misses the favoured model, the judges' planted biases
    are recovered; judgments and overrides are untouched."""
    root = tmp_path / "store"
    world = generate(AuditWorld(), seed=4)
    store = open_store(root)
    for r in world.rounds:
        store.save_round(r)
    store.close()
    before = {p.name: p.read_bytes() for p in (root / "rounds").glob("*.json")}
    a = draw(root, "--n", "40", "--seed", "1")
    sheet = tmp_path / "s.csv"
    assert invoke("audit", "sheet", a["audit_id"], "--out", str(sheet), "--store", str(root)).exit_code == 0
    assert invoke("audit", "import", str(fill(sheet, world)), "--store", str(root)).exit_code == 0
    res = invoke("report", "--store", str(root), "--json")
    assert res.exit_code == 0, res.output
    ha = json.loads(res.output)["human_audit"]
    assert ha["n_judgments"] == 40 and ha["n_scores"] == 560 and "PPI" in ha["method"]
    for m in ha["models"]:
        truth = world.truth[m["model"]]
        assert m["ci_low"] <= truth <= m["ci_high"], m
        assert abs(m["mean"] - truth) < 0.2
        assert m["ci_high"] - m["ci_low"] <= m["human_only_ci_high"] - m["human_only_ci_low"] + 1e-9
    fav = next(m for m in ha["models"] if m["model"] == "m3")
    assert not fav["judge_only_ci_low"] <= world.truth["m3"] <= fav["judge_only_ci_high"]
    for j in ha["judges"]:
        assert abs(j["bias"] - world.bias[j["judge"]]) < 0.3, j
    assert {(p["a"], p["b"]) for p in ha["pairwise"]} == {(x, y) for x in "m1 m2 m3 m4".split()
                                                           for y in "m1 m2 m3 m4".split() if x < y}
    assert {p.name: p.read_bytes() for p in (root / "rounds").glob("*.json")} == before
    widest = max(m["ci_high"] - m["ci_low"] for m in ha["models"]) / 2
    res = invoke("plan", "--store", str(root), "--models", "4", "--audit-half-width", f"{widest * 0.9:.3f}", "--json")
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)["human_audit"]
    assert plan["n_now"] == 40 and (plan["n_needed"] is None or plan["n_needed"] > 40), plan
    text = invoke("plan", "--store", str(root), "--models", "4", "--audit-half-width", "5")
    assert "Human audit: about" in text.output and "(now 40 — met already)" in text.output, text.output


def test_report_without_an_audit_says_why_it_is_blank(world_store: tuple[Path, World], tmp_path: Path) -> None:
    root = tmp_path / "store"
    world = generate(AuditWorld(dilemmas=3, repeats=1), seed=2)
    store = open_store(root)
    for r in world.rounds:
        store.save_round(r)
    store.close()
    ha = json.loads(invoke("report", "--store", str(root), "--json").output)["human_audit"]
    assert ha["models"] == [] and "no human-scored judgments" in ha["reason"]
    a = draw(root, "--n", "5", "--seed", "1")
    sheet = tmp_path / "s.csv"
    invoke("audit", "sheet", a["audit_id"], "--out", str(sheet), "--store", str(root))
    assert invoke("audit", "import", str(fill(sheet, world)), "--store", str(root)).exit_code == 0
    ha = json.loads(invoke("report", "--store", str(root), "--json").output)["human_audit"]
    assert ha["models"] == [] and "5 human-scored judgments: at least 10" in ha["reason"]
    md = invoke("report", "--store", str(root), "--out", str(tmp_path / "rep"))
    assert md.exit_code == 0, md.output
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "## Calibrated to 5 human-scored judgments" in text and "at least 10" in text


def test_a_hostile_cell_is_named_short_and_escaped(world_store: tuple[Path, World], tmp_path: Path) -> None:
    root, world = world_store
    a = draw(root, "--n", "10", "--seed", "9")
    sheet = tmp_path / "s.csv"
    invoke("audit", "sheet", a["audit_id"], "--out", str(sheet), "--store", str(root))
    bad = fill(sheet, world, bad=(3, "\x1b[31m" + "9" * 5000))
    res = invoke("audit", "import", str(bad), "--store", str(root))
    assert res.exit_code == 2 and "line 4:" in res.output and "\x1b" not in res.output
    assert len(res.output) < 300 and res.output.count("\n") == 1
