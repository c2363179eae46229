"""The dilemma loader on Word documents written the ways people write them (generated here with python-docx)."""

from __future__ import annotations

import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import docx
import pytest
from docx.document import Document

from ebtui.core.dilemmas import (
    DilemmaDocument,
    DilemmaWarning,
    DocumentError,
    dilemma_id,
    load_dilemmas,
    load_document,
)
from tests.support.docx_docs import bold_label, dilemma_doc, save

# ------------------------------------------------------------------------------------------ helpers


def numbered(doc: Document, text: str, num_id: int = 1):
    """A list paragraph numbered through numPr on an ordinary style (as pandoc and Word write them)."""
    p = doc.add_paragraph(text)
    num_pr = p._p.get_or_add_pPr().get_or_add_numPr()
    num_pr.get_or_add_ilvl().val = 0
    num_pr.get_or_add_numId().val = num_id
    return p


def assert_fields(dilemma: object, **expected: object) -> None:
    """Each named field of `dilemma` equals its expected value."""
    assert {name: getattr(dilemma, name) for name in expected} == expected


def quiet_load(path: Path) -> DilemmaDocument:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        return load_document(path)


def full_bold_label_dilemma(doc: Document, n: int, title: str) -> None:
    p = doc.add_paragraph()
    p.add_run(f"Dilemma {n}: {title}").bold = True
    meta = doc.add_paragraph()
    meta.add_run("Category:").bold = True
    meta.add_run(f" Category {n} | ")
    meta.add_run("Structure:").bold = True
    meta.add_run(" Asymmetric")
    doc.add_paragraph(f"Scenario {n}, first paragraph.")
    doc.add_paragraph(f"Scenario {n}, second paragraph.")
    bold_label(doc, "Complications:")
    doc.add_paragraph(f"1. First complication of {n}.")
    doc.add_paragraph(f"2) Second complication of {n}.")
    bold_label(doc, "Question:", f"The one question of {n}?")
    bold_label(doc, "Asymmetric Features:")
    doc.add_paragraph(f"\u2022 Power structure: feature one of {n}")
    doc.add_paragraph(f"- Consent status: feature two of {n}")
    bold_label(doc, "Consistency Case:")
    doc.add_paragraph(f"The consistency case of {n}.")


# ---------------------------------------------------------------------------------------- variants


def test_heading_style_variant_with_intro_and_closing(tmp_path: Path) -> None:
    doc = docx.Document()
    doc.add_heading("A Book of Dilemmas", level=0)
    doc.add_heading("Introduction", level=1)
    doc.add_paragraph("This introduction explains how to use the document. It is not a dilemma.")
    for n, title in enumerate(["The Lantern Keeper", "The Second Lantern"], 1):
        doc.add_heading(title, level=1)  # no "Dilemma N:" prefix
        doc.add_paragraph(f"Category: Stewardship {n} | Structure: Symmetric")
        doc.add_heading("Core Scenario", level=2)
        doc.add_paragraph(f"The keeper {n} tends a lantern.")
        doc.add_heading("Option A", level=3)  # a sub-heading inside the scenario stays there
        doc.add_paragraph("Let the lantern go out.")
        doc.add_heading("Complications", level=2)
        doc.add_paragraph(f"The oil is borrowed ({n}).", style="List Number")
        doc.add_paragraph("The ship is late.", style="List Number")
        doc.add_heading("Questions:", level=2)  # a trailing colon on a heading is fine
        doc.add_paragraph("Who owns the light?", style="List Bullet")
        doc.add_heading("Asymmetric Features", level=2)
        doc.add_paragraph("Power structure: the keeper alone holds the key.", style="List Bullet")
        doc.add_heading("Consistency Case", level=2)
        doc.add_paragraph("A neighbour keeps a spare key.")
    doc.add_heading("Closing Notes", level=1)
    doc.add_paragraph("Thanks to everyone who read drafts. Question: none.")
    loaded = quiet_load(save(doc, tmp_path))
    assert loaded.title == "A Book of Dilemmas"
    assert [d.id for d in loaded.dilemmas] == ["lantern_keeper", "second_lantern"]
    assert_fields(loaded.dilemmas[0], title="The Lantern Keeper", category="Stewardship 1",
                  metadata={"structure": "Symmetric"},
                  core_scenario="The keeper 1 tends a lantern.\n\nOption A\n\nLet the lantern go out.",
                  complications=["The oil is borrowed (1).", "The ship is late."], questions=["Who owns the light?"],
                  asymmetric_features=["Power structure: the keeper alone holds the key."],
                  consistency_case="A neighbour keeps a spare key.")
    assert loaded.warnings == []


def test_bold_label_variant_with_hand_typed_numbers_and_bullets(tmp_path: Path) -> None:
    doc = docx.Document()
    doc.add_paragraph("Some notes before the first dilemma, not a dilemma.")
    full_bold_label_dilemma(doc, 1, "The Copy's Debt")
    full_bold_label_dilemma(doc, 2, "Second Thoughts")
    loaded = quiet_load(save(doc, tmp_path))
    assert [d.id for d in loaded.dilemmas] == ["copys_debt", "second_thoughts"]
    assert_fields(loaded.dilemmas[0], title="The Copy's Debt", category="Category 1",
                  metadata={"structure": "Asymmetric"},
                  core_scenario="Scenario 1, first paragraph.\n\nScenario 1, second paragraph.",
                  complications=["First complication of 1.", "Second complication of 1."],
                  questions=["The one question of 1?"],
                  asymmetric_features=["Power structure: feature one of 1", "Consent status: feature two of 1"],
                  consistency_case="The consistency case of 1.")
    assert loaded.dilemmas[1].consistency_case == "The consistency case of 2."
    assert loaded.warnings == []


def test_real_numbered_paragraphs_carry_no_number_text(tmp_path: Path) -> None:
    doc = dilemma_doc("Numbers", "Lists", "A scenario.")
    bold_label(doc, "Questions:")
    numbered(doc, "First question?")
    numbered(doc, "Second question?")
    bold_label(doc, "Complications:")
    doc.add_paragraph("(1) Hand-typed with parentheses.")
    doc.add_paragraph("10. Hand-typed double digit.")
    bold_label(doc, "Consistency Case:", "A case.")
    loaded = quiet_load(save(doc, tmp_path))
    d = loaded.dilemmas[0]
    assert d.questions == ["First question?", "Second question?"]
    assert d.complications == ["Hand-typed with parentheses.", "Hand-typed double digit."]


def test_runs_split_mid_word(tmp_path: Path) -> None:
    doc = docx.Document()
    t = doc.add_paragraph()
    for piece in ("Dil", "emma 1", ": The Spl", "it Ti", "tle"):
        t.add_run(piece).bold = True
    meta = doc.add_paragraph()
    for piece, bold in (("Cat", True), ("egory", True), (":", True), (" Mor", False), ("al Sta", False),
                        ("tus ", False), ("| ", False), ("Struc", True), ("ture:", True), (" Sym", False),
                        ("metric", False)):
        meta.add_run(piece).bold = bold
    s = doc.add_paragraph()
    for piece in ("A scen", "ario in ", "five ", "ru", "ns."):
        s.add_run(piece)
    q = doc.add_paragraph()
    q.add_run("Quest").bold = True
    q.add_run("ion:").bold = True
    q.add_run(" Wh")
    q.add_run("y?")
    c = doc.add_paragraph()
    c.add_run("Consistency ").bold = True
    c.add_run("Case:").bold = True
    c.add_run(" Another ca")
    c.add_run("se.")
    d = quiet_load(save(doc, tmp_path)).dilemmas[0]
    assert (d.id, d.title) == ("split_title", "The Split Title")
    assert d.category == "Moral Status"
    assert d.metadata == {"structure": "Symmetric"}
    assert d.core_scenario == "A scenario in five runs."
    assert d.questions == ["Why?"]
    assert d.consistency_case == "Another case."


def test_dilemma_written_as_a_label_table(tmp_path: Path) -> None:
    doc = docx.Document()
    doc.add_heading("Dilemma 1: The Tabled Motion", level=1)
    table = doc.add_table(rows=6, cols=2)
    cells = [
        ("Category", "Procedure"),
        ("Core Scenario", "A motion is tabled.\nIt waits."),
        ("Complications", "One\nTwo"),
        ("Questions", "Should it wait?"),
        ("Asymmetric Features", "Power structure: the chair decides"),
        ("Consistency Case", "A bill in committee."),
    ]
    for row, (label, content) in zip(table.rows, cells, strict=True):
        row.cells[0].text = label
        cell = row.cells[1]
        lines = content.split("\n")
        cell.text = lines[0]
        for line in lines[1:]:
            cell.add_paragraph(line)
    d = quiet_load(save(doc, tmp_path)).dilemmas[0]
    assert d.id == "tabled_motion"
    assert d.category == "Procedure"
    assert d.core_scenario == "A motion is tabled.\n\nIt waits."
    assert d.complications == ["One", "Two"]
    assert d.questions == ["Should it wait?"]
    assert d.asymmetric_features == ["Power structure: the chair decides"]
    assert d.consistency_case == "A bill in committee."


def test_data_table_inside_a_scenario_is_kept_as_rows(tmp_path: Path) -> None:
    doc = dilemma_doc("Options", "Choice", "Three options are on the table:", level=1)
    table = doc.add_table(rows=2, cols=3)
    for r, values in enumerate((("Option", "Cost", "Risk"), ("A", "High", "Low"))):
        for c, value in enumerate(values):
            table.rows[r].cells[c].text = value
    bold_label(doc, "Question:", "Which?")
    d = quiet_load(save(doc, tmp_path)).dilemmas[0]
    assert d.core_scenario == "Three options are on the table:\n\nOption | Cost | Risk\n\nA | High | Low"
    assert d.questions == ["Which?"]


def test_smart_quotes(tmp_path: Path) -> None:
    doc = dilemma_doc("The Keeper\u2019s \u201cPromise\u201d", "Trust", "She said \u201cnever\u201d and meant it\u2019s final.")
    bold_label(doc, "Question:", "Is \u2018never\u2019 binding?")
    d = quiet_load(save(doc, tmp_path)).dilemmas[0]
    assert d.id == "keepers_promise"
    assert d.title == "The Keeper\u2019s \u201cPromise\u201d"
    assert d.core_scenario == "She said \u201cnever\u201d and meant it\u2019s final."
    assert d.questions == ["Is \u2018never\u2019 binding?"]


def test_missing_sections_load_empty_with_warnings_not_neighbouring_text(tmp_path: Path) -> None:
    doc = dilemma_doc("The Sparse One", "Gaps", "Only a scenario here.")
    bold_label(doc, "Questions:")
    numbered(doc, "Only question?")
    doc.add_heading("Dilemma 2: The Full One", level=2)
    bold_label(doc, "Category:", "Whole")
    doc.add_paragraph("Scenario two.")
    bold_label(doc, "Complications:")
    numbered(doc, "Complication two.")
    bold_label(doc, "Questions:")
    numbered(doc, "Question two?")
    bold_label(doc, "Asymmetric Features:")
    numbered(doc, "Feature two.")
    bold_label(doc, "Consistency Case:", "Case two.")
    path = save(doc, tmp_path)
    with pytest.warns(DilemmaWarning) as record:
        loaded = load_document(path)
    sparse, full = loaded.dilemmas
    assert (sparse.complications, sparse.asymmetric_features, sparse.consistency_case) == ([], [], "")
    assert sparse.questions == ["Only question?"]
    assert full.complications == ["Complication two."]
    assert full.consistency_case == "Case two."
    got = sorted((w.message.dilemma_id, w.message.section) for w in record)
    assert got == [("sparse_one", "Asymmetric Features"), ("sparse_one", "Complications"),
                   ("sparse_one", "Consistency Case")]
    for w in record:
        assert "sparse_one" in str(w.message) and str(path) in str(w.message)
    assert len(loaded.warnings) == 3


def test_duplicate_titles_get_distinct_ids_with_a_warning(tmp_path: Path) -> None:
    doc = docx.Document()
    full_bold_label_dilemma(doc, 1, "Twice")
    full_bold_label_dilemma(doc, 2, "Twice")
    loaded = quiet_load(save(doc, tmp_path))
    assert [d.id for d in loaded.dilemmas] == ["twice", "twice_2"]
    assert any("twice_2" in w for w in loaded.warnings)


@pytest.mark.parametrize("as_heading", [True, False])
def test_probes_from_bold_labels(tmp_path: Path, as_heading: bool) -> None:
    doc = docx.Document()
    full_bold_label_dilemma(doc, 1, "Only One")
    if as_heading:
        doc.add_heading("Follow-up Probes", level=1)
    else:
        bold_label(doc, "Universal Follow-up Probes")
    doc.add_paragraph("Ask these afterwards.")
    bold_label(doc, "Honesty:")
    doc.add_paragraph("1. What are you least sure of?")
    doc.add_paragraph("2. What would change your mind?")
    loaded = quiet_load(save(doc, tmp_path))
    assert [d.id for d in loaded.dilemmas] == ["only_one"]
    assert loaded.dilemmas[0].consistency_case == "The consistency case of 1."  # nothing borrowed
    assert loaded.probes == {"Honesty": ["What are you least sure of?", "What would change your mind?"]}


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("The Gardener\u2019s Dilemma", "gardeners_dilemma"),
        ("The Dependent's Transformation", "dependents_transformation"),
        ("Theory of Mind", "theory_of_mind"),
        ("  The  Two-Body   Problem ", "two_body_problem"),
        ("Caf\u00e9 Society", "cafe_society"),
    ],
)
def test_dilemma_id(title: str, expected: str) -> None:
    assert dilemma_id(title) == expected


def test_none_means_the_builtin_document() -> None:
    dilemmas = load_dilemmas()
    assert len(dilemmas) == 8
    assert dilemmas == load_dilemmas(None)


# ------------------------------------------------------------------------------------------- errors


def _corrupt_zip(tmp_path: Path) -> Path:
    good = tmp_path / "good.docx"
    doc = docx.Document()
    full_bold_label_dilemma(doc, 1, "Whole")
    doc.save(str(good))
    data = good.read_bytes()
    bad = tmp_path / "corrupt.docx"
    bad.write_bytes(data[: len(data) // 2])
    return bad


def _zip_without_document(tmp_path: Path) -> Path:
    path = tmp_path / "notword.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("hello.txt", "hi")
    return path


def _malformed_xml(tmp_path: Path) -> Path:
    good = save(docx.Document(), tmp_path, "good.docx")
    bad = tmp_path / "badxml.docx"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "word/document.xml":
                data = data[: len(data) // 2]
            dst.writestr(item, data)
    return bad


def _empty_file(tmp_path: Path) -> Path:
    path = tmp_path / "empty.docx"
    path.write_bytes(b"")
    return path


def _foreign_file(tmp_path: Path) -> Path:
    path = tmp_path / "picture.docx"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    return path


def _legacy_doc(tmp_path: Path) -> Path:
    path = tmp_path / "old.doc"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512))
    return path


def _empty_docx(tmp_path: Path) -> Path:
    return save(docx.Document(), tmp_path, "blank.docx")


def _no_dilemma_docx(tmp_path: Path) -> Path:
    doc = docx.Document()
    doc.add_heading("Meeting minutes", level=1)
    doc.add_paragraph("We discussed the budget. Nothing was decided.")
    return save(doc, tmp_path, "minutes.docx")


def _missing(tmp_path: Path) -> Path:
    return tmp_path / "nope.docx"


def _directory(tmp_path: Path) -> Path:
    d = tmp_path / "adir.docx"
    d.mkdir()
    return d


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (_corrupt_zip, "corrupt .docx"),
        (_zip_without_document, "not a Word .docx file"),
        (_malformed_xml, "corrupt .docx"),
        (_empty_file, "empty file"),
        (_foreign_file, "not a .docx file"),
        (_legacy_doc, "legacy Word .doc"),
        (_empty_docx, "empty document"),
        (_no_dilemma_docx, "no dilemma found"),
        (_missing, "no such file"),
        (_directory, "is a directory"),
    ],
)
def test_unreadable_documents_raise_document_error(
    tmp_path: Path, make: Callable[[Path], Path], problem: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(DocumentError) as info:
        load_document(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert problem in message
    assert "\n" not in message
    assert info.value.path == str(path)
