"""The loader on real .docx files written by pandoc and LibreOffice (tests/data/docx, made by
tests/data/docx/make_fixtures.py from this project's own Markdown in tests/data/docx/src).

The committed files are always checked; when pandoc and soffice are installed they are also rebuilt into a
temporary folder and checked the same way, and the shared public document re-saved by LibreOffice is checked
against what its README says a correct loader gets.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from ebtui.core.dilemmas import DilemmaWarning, load_document
from tests.support.paths import PUBLIC_DILEMMAS, ROOT

DOCX = ROOT / "tests" / "data" / "docx"
MAKERS = ("pandoc", "lo", "lohtml", "lort")

# per source: dilemma id -> (questions, complications, asymmetric features); plus exact questions where useful
EXPECTED: dict[str, dict[str, tuple[int, int, int]]] = {
    "table_questions": {"lighthouse_keeper": (3, 2, 0), "orchard_ledger": (2, 0, 2)},
    "inline_numbers": {"borrowed_boat": (3, 2, 0), "quiet_promise": (2, 0, 2), "split_vote": (4, 0, 0)},
    "numbered_lists": {"night_shift": (3, 2, 0), "seed_vault": (2, 0, 2)},
    "public_shapes": {"tidal_clock": (2, 0, 0), "second_key": (1, 0, 3)},
    "question_labels": {"ferry_fare": (3, 0, 0), "shared_well": (2, 0, 0)},
}
QUESTIONS = {
    ("table_questions", "lighthouse_keeper"): [
        "Should she leave the lamp?", "Does it matter that the ferry is only probably at sea?",
        "Would a standing order from the harbour master change the answer?"],
    ("table_questions", "orchard_ledger"): [
        "What does the cooperative owe its newer members?", "Should the elderly members be treated differently?"],
    ("inline_numbers", "borrowed_boat"): [
        "Does the fisher owe the neighbour a new boat?", "Does the swimmer owe anything?",
        "Would it matter if the fisher had asked and been refused?"],
    ("inline_numbers", "quiet_promise"): [
        "Should the doctor keep the promise?", "Does the daughter\u2019s own risk change the answer?"],
    ("question_labels", "ferry_fare"): [
        "Is a two-tier fare fair?", "Should islanders who moved recently pay the lower fare?",
        "Would a cap on tourist numbers be better?"],
}
# what an item number left in the text looks like
LEFTOVER = re.compile(r"^\s*(?:\(?\d+[.):]|\(?[a-z][.)]|\([ivx]+\)|[ivx]+\.|q(?:uestion)?\s*\d)|\|"
                      r"|\s(?:\d+[.)]|\([a-z]\))\s+[A-Z]", re.I)


def _load(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        return load_document(path)


def _check(path: Path, source: str) -> None:
    doc = _load(path)
    expected = EXPECTED[source]
    assert [d.id for d in doc.dilemmas] == list(expected), path.name
    for d in doc.dilemmas:
        got = (len(d.questions), len(d.complications), len(d.asymmetric_features))
        assert got == expected[d.id], f"{path.name} {d.id}: (questions, complications, features) {got}"
        for item in (*d.questions, *d.complications, *d.asymmetric_features):
            assert not LEFTOVER.search(item), f"{path.name} {d.id}: item number left in {item!r}"
        if (source, d.id) in QUESTIONS:
            assert d.questions == QUESTIONS[(source, d.id)], path.name
        assert d.core_scenario and d.consistency_case and d.category, f"{path.name} {d.id}"
        assert "Category" not in d.core_scenario and "Questions" not in d.core_scenario


CASES = [(f"{maker}_{source}.docx", source) for source in EXPECTED for maker in MAKERS]


@pytest.mark.parametrize(("name", "source"), CASES)
def test_committed_fixture_loads(name: str, source: str) -> None:
    _check(DOCX / name, source)


def test_every_source_has_its_fixtures() -> None:
    sources = {p.stem for p in (DOCX / "src").glob("*.md")}
    assert sources == set(EXPECTED)
    for name, _ in CASES:
        assert (DOCX / name).is_file(), name


def test_public_shapes_keep_options_and_structure() -> None:
    for maker in MAKERS:
        doc = _load(DOCX / f"{maker}_public_shapes.docx")
        tidal = doc.get("tidal_clock")
        assert tidal is not None and tidal.category == "Time" and tidal.metadata["structure"] == "Symmetric"
        assert "Option A: Set it early" in tidal.core_scenario and "Option B: Set it late" in tidal.core_scenario
        assert tidal.complications == []  # no complications section: empty, not borrowed
        assert doc.get("second_key").questions == ["Should he open it without her present?"]
        assert doc.probes == {"On method": ["What would change your mind?", "Who is missing from your account?"]}


def _tools() -> list[str]:
    return [t for t in ("pandoc", "soffice") if shutil.which(t) is None]


def test_fixtures_regenerate_the_same(tmp_path: Path) -> None:
    missing = _tools()
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install pandoc libreoffice-writer-nogui)")
    spec = importlib.util.spec_from_file_location("make_fixtures", DOCX / "make_fixtures.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.build(tmp_path)
    assert {p.name for p in made} == {name for name, _ in CASES}
    for name, source in CASES:
        _check(tmp_path / name, source)


def test_public_document_resaved_by_libreoffice(tmp_path: Path) -> None:
    if not PUBLIC_DILEMMAS.exists():
        pytest.skip(f"shared fixture absent (a fresh clone has no ../shared beside it): {PUBLIC_DILEMMAS}")
    if shutil.which("soffice") is None:
        pytest.skip("soffice not installed (apt-get install libreoffice-writer-nogui)")
    profile = tmp_path / "profile"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
                    "--convert-to", "docx:MS Word 2007 XML", "--outdir", str(tmp_path), str(PUBLIC_DILEMMAS)],
                   check=True, capture_output=True, timeout=240)
    resaved = _load(tmp_path / PUBLIC_DILEMMAS.name)
    original = _load(PUBLIC_DILEMMAS)
    assert [d.id for d in resaved.dilemmas] == [
        "gradient_entity", "unborn_parameters", "preference_sculptor", "gardeners_dilemma", "collective_veto",
        "suffering_gradient", "moral_status_lottery", "dependents_transformation"]
    for a, b in zip(resaved.dilemmas, original.dilemmas, strict=True):
        assert a.model_dump(exclude={"source"}) == b.model_dump(exclude={"source"})
    counts = {d.id: len(d.questions) for d in resaved.dilemmas}
    assert (counts["gradient_entity"], counts["unborn_parameters"], counts["moral_status_lottery"]) == (3, 1, 3)
