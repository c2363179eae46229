"""`ebtui dilemmas`: listing, --json, show, --document placement, one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from tests.support.docx_docs import paragraphs_doc

RECORD_FIELDS = {"id", "title", "category", "core_scenario", "complications", "questions", "asymmetric_features",
                 "consistency_case", "metadata", "schema_version", "source", "has_consistency_case"}
FIXTURE_IDS = ["gradient_entity", "unborn_parameters", "preference_sculptor", "gardeners_dilemma",
               "collective_veto", "suffering_gradient", "moral_status_lottery", "dependents_transformation"]


def run_ebtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ebtui", *args], capture_output=True, text=True, timeout=60)


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="ebtui")


def test_json_lists_the_eight_builtin_dilemmas_complete() -> None:
    proc = run_ebtui("dilemmas", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)
    assert len(data) == 8
    for d in data:
        assert set(d) == RECORD_FIELDS
        for name in RECORD_FIELDS - {"schema_version"}:
            assert d[name], (d["id"], name)


def test_json_on_the_public_fixture(public_dilemmas_path: Path) -> None:
    proc = run_ebtui("dilemmas", "--json", "--document", str(public_dilemmas_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [d["id"] for d in data] == FIXTURE_IDS
    by_id = {d["id"]: d for d in data}
    assert by_id["gradient_entity"]["title"] == "The Gradient Entity"
    assert by_id["gradient_entity"]["category"] == "Moral Status"
    assert by_id["gradient_entity"]["metadata"] == {"structure": "Symmetric"}
    assert [len(by_id[i]["questions"]) for i in ("gradient_entity", "unborn_parameters", "moral_status_lottery")] \
        == [3, 1, 3]
    assert all(d["complications"] == [] for d in data)
    assert {d["id"] for d in data if d["asymmetric_features"]} == {
        "unborn_parameters", "gardeners_dilemma", "suffering_gradient", "dependents_transformation"}
    # missing sections: one warning line each on stderr, naming the dilemma and the section
    lines = proc.stderr.splitlines()
    assert len(lines) == 12
    assert all(line.startswith("ebtui: warning: ") for line in lines)
    assert any("'gradient_entity'" in line and "Complications" in line for line in lines)
    assert "Traceback" not in proc.stderr


def test_plain_listing_is_an_aligned_table() -> None:
    proc = run_ebtui("dilemmas")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["ID", "TITLE", "CATEGORY", "STRUCTURE", "COMPL", "QUEST", "ASYM", "CONSIST"]
    rows = lines[2:10]
    assert len(rows) == 8
    title_col = lines[0].index("TITLE")
    for row in rows:
        assert row[title_col - 2: title_col] == "  " and row[title_col] != " "
    assert all(row.split()[-1] == "yes" for row in rows)  # every built-in dilemma has a consistency case
    assert "8 dilemmas" in lines[-1]


@pytest.mark.parametrize("content", [b"", b"just some text\n", b"PK\x03\x04broken zip"])
def test_broken_or_foreign_document_exits_2_with_one_line(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.docx"
    bad.write_bytes(content)
    proc = run_ebtui("dilemmas", "--document", str(bad))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"ebtui: error: {bad}: ")


def test_missing_document_before_the_subcommand(tmp_path: Path) -> None:
    missing = tmp_path / "missing.docx"
    result = invoke("--document", str(missing), "dilemmas")
    assert result.exit_code == 2
    assert result.stderr.strip() == f"ebtui: error: {missing}: no such file"


def test_document_before_the_subcommand_is_used(public_dilemmas_path: Path) -> None:
    result = invoke("--document", str(public_dilemmas_path), "dilemmas", "--json")
    assert result.exit_code == 0, result.stderr
    assert [d["id"] for d in json.loads(result.stdout)] == FIXTURE_IDS
    result = invoke("--document", str(public_dilemmas_path), "dilemmas", "show", "collective_veto")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("The Collective Veto\n")


def test_show_prints_every_section() -> None:
    proc = run_ebtui("dilemmas", "show", "fidelity_slider")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for heading in ("The Fidelity Slider", "id: fidelity_slider", "Category: Moral Status", "Structure: Symmetric",
                    "Core Scenario", "Complications", "Questions", "Asymmetric Features", "Consistency Case"):
        assert heading in out
    assert "1. " in out and "(none)" not in out


def test_show_with_document_on_the_group_or_the_subcommand(public_dilemmas_path: Path) -> None:
    for args in (("dilemmas", "--document", str(public_dilemmas_path), "show", "gardeners_dilemma"),
                 ("dilemmas", "show", "gardeners_dilemma", "--document", str(public_dilemmas_path))):
        result = invoke(*args)
        assert result.exit_code == 0, result.stderr
        assert "(A) Intervene visibly:" in result.stdout
        assert "Complications (shown to Team A)\n-------------------------------\n(none)" in result.stdout


def test_show_json() -> None:
    result = invoke("dilemmas", "show", "kind_forecast", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["title"] == "The Kind Forecast"


def test_unknown_id_exits_2_listing_valid_ids() -> None:
    result = invoke("dilemmas", "show", "no_such_dilemma")
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert "\n" not in line
    assert "'no_such_dilemma'" in line and "fidelity_slider" in line and "rivers_guardian" in line


def test_show_strips_control_sequences_from_document_text(tmp_path: Path) -> None:
    # XML cannot hold ESC, but it can hold the 8-bit C1 controls (CSI U+009B, OSC U+009D)
    path = paragraphs_doc(tmp_path / "esc.docx", "Dilemma 1: The Escape", "Category: Terminal",
                          "Text with \x9b31m colour, \x9d52;c;aGk=\x9c a clipboard write and [bold]markup[/] text.",
                          "Question: Safe?")
    result = invoke("dilemmas", "show", "escape", "--document", str(path))
    assert result.exit_code == 0, result.stderr
    assert not any("\x80" <= ch <= "\x9f" for ch in result.stdout)
    assert "Text with colour, a clipboard write and [bold]markup[/] text." in " ".join(result.stdout.split())
