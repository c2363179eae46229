"""Lists as people type them: inline "1. ... 2. ..." in one paragraph, and lists given as numbered tables."""

from __future__ import annotations

import warnings
from pathlib import Path

import docx
import pytest

from ebtui.core.dilemmas import DilemmaWarning, load_document, split_inline_list
from tests.support.docx_docs import dilemma_doc


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("1. Is it fair? 2. Who pays? 3. When?", ["Is it fair?", "Who pays?", "When?"]),
        ("1) Keep it 2) Sell it", ["Keep it", "Sell it"]),
        ("(a) the owner; (b) the tenant; and (c) the town", ["the owner", "the tenant", "the town"]),
        ("(1) first (2) second", ["first", "second"]),
        ("(i) one way (ii) another", ["one way", "another"]),
        ("a) north b) south", ["north", "south"]),
        # "2." inside an item is not a marker when a later "2." follows a sentence end
        ("1. Should a 2. grade pass? 2. Who decides?", ["Should a 2. grade pass?", "Who decides?"]),
    ],
)
def test_split_inline_list(text: str, items: list[str]) -> None:
    assert split_inline_list(text) == items


@pytest.mark.parametrize(
    "text",
    [
        "Should she leave the lamp?",
        "1. Only one item here",
        "In 2. half of cases 3. things differ",  # does not start with the first marker
        "Should we act now (a) or later (b)?",
        "2. Starts at two 3. then three",
    ],
)
def test_not_an_inline_list(text: str) -> None:
    assert split_inline_list(text) == [text.strip()]


def _doc_with_table(rows: list[tuple[str, str]], *, auto_number: bool = False) -> docx.document.Document:
    doc = _base_doc()
    p = doc.add_paragraph()
    p.add_run("Questions:").bold = True
    table = doc.add_table(rows=len(rows), cols=2)
    for row, (num, text) in zip(table.rows, rows, strict=True):
        row.cells[0].text = num
        row.cells[1].text = text
        if auto_number and num == "":
            para = row.cells[0].paragraphs[0]
            num_pr = para._p.get_or_add_pPr().get_or_add_numPr()
            num_pr.get_or_add_ilvl().val = 0
            num_pr.get_or_add_numId().val = 1
    p = doc.add_paragraph()
    p.add_run("Consistency Case:").bold = True
    p.add_run(" Two flatmates share a bicycle.")
    return doc


@pytest.mark.parametrize(
    ("rows", "auto"),
    [
        ([("1", "Who pays for it?"), ("2", "Must he tell her?")], False),
        ([("No.", "Question"), ("1.", "Who pays for it?"), ("2.", "Must he tell her?")], False),
        ([("#", "Question"), ("Q1", "Who pays for it?"), ("Q2", "Must he tell her?")], False),
        ([("(a)", "Who pays for it?"), ("(b)", "Must he tell her?")], False),
        ([("Number", "Question"), ("", "Who pays for it?"), ("", "Must he tell her?")], True),
    ],
)
def test_numbered_table_gives_one_item_per_row_without_numbers(tmp_path: Path, rows, auto: bool) -> None:
    path = tmp_path / "t.docx"
    _doc_with_table(rows, auto_number=auto).save(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        (d,) = load_document(path).dilemmas
    assert d.questions == ["Who pays for it?", "Must he tell her?"]
    assert d.consistency_case == "Two flatmates share a bicycle."


def test_an_ordinary_table_in_the_scenario_is_kept_as_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.docx"
    doc = _doc_with_table([("1", "Who pays for it?")])
    # a data table inside the scenario: not numbered, kept whole
    body = doc.element.body
    table = doc.add_table(rows=2, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Ladder price", "40 pounds"
    table.rows[1].cells[0].text, table.rows[1].cells[1].text = "Repair", "15 pounds"
    scenario = body[2]  # the scenario paragraph
    scenario.addnext(table._tbl)
    doc.save(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        (d,) = load_document(path).dilemmas
    assert "Ladder price | 40 pounds" in d.core_scenario and "Repair | 15 pounds" in d.core_scenario
    assert d.questions == ["Who pays for it?"]


def test_a_data_table_with_numbers_is_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "t.docx"
    doc = _doc_with_table([("i.", "Who pays for it?"), ("ii.", "Must he tell her?")])
    table = doc.add_table(rows=2, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "10", "people on the ferry"
    table.rows[1].cells[0].text, table.rows[1].cells[1].text = "40", "people on the quay"
    doc.element.body[2].addnext(table._tbl)
    doc.save(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        (d,) = load_document(path).dilemmas
    assert "10 | people on the ferry" in d.core_scenario and "40 | people on the quay" in d.core_scenario
    assert d.questions == ["Who pays for it?", "Must he tell her?"]


def _base_doc() -> docx.document.Document:
    return dilemma_doc("The Shared Ladder", "Neighbours",
                       "Two neighbours share a ladder; one breaks it while the other is away.")


def _load_one(doc: docx.document.Document, tmp_path: Path):
    path = tmp_path / "t.docx"
    doc.save(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)
        (d,) = load_document(path).dilemmas
    return d


def test_label_in_a_merged_first_row_of_a_numbered_table(tmp_path: Path) -> None:
    doc = _base_doc()
    table = doc.add_table(rows=3, cols=2)
    merged = table.rows[0].cells[0].merge(table.rows[0].cells[1])
    merged.text = "Questions:"
    for row, (n, q) in zip(table.rows[1:], [("1", "Who pays for it?"), ("2", "Must he tell her?")], strict=True):
        row.cells[0].text, row.cells[1].text = n, q
    d = _load_one(doc, tmp_path)
    assert d.questions == ["Who pays for it?", "Must he tell her?"]
    assert "Questions" not in d.core_scenario


def test_bold_label_without_colon_then_inline_numbers(tmp_path: Path) -> None:
    doc = _base_doc()
    p = doc.add_paragraph()
    p.add_run("Questions").bold = True
    p.add_run(" 1. Who pays for it? 2. Must he tell her? 3. Should they buy a new one together?")
    d = _load_one(doc, tmp_path)
    assert d.questions == ["Who pays for it?", "Must he tell her?", "Should they buy a new one together?"]


def test_numbered_sub_items_belong_to_their_question(tmp_path: Path) -> None:
    doc = _base_doc()
    p = doc.add_paragraph()
    p.add_run("Questions:").bold = True
    for text, level in [("Who pays for it?", 1), ("if it was old,", 2), ("if it was new?", 2),
                        ("Must he tell her?", 1)]:
        para = doc.add_paragraph(text)
        num_pr = para._p.get_or_add_pPr().get_or_add_numPr()
        num_pr.get_or_add_ilvl().val = level
        num_pr.get_or_add_numId().val = 1
    d = _load_one(doc, tmp_path)
    assert d.questions == ["Who pays for it? if it was old, if it was new?", "Must he tell her?"]


@pytest.mark.parametrize(
    "typed",
    ["1. Who pays?", "1) Who pays?", "(1) Who pays?", "1: Who pays?", "1 - Who pays?", "1 \u2013 Who pays?",
     "Q1. Who pays?", "Question 1: Who pays?", "a) Who pays?", "(a) Who pays?", "a. Who pays?", "iv. Who pays?",
     "\u2022 Who pays?", "- Who pays?"],
)
def test_hand_typed_markers_are_dropped(typed: str) -> None:
    from ebtui.core.doclists import HAND_MARKER

    assert HAND_MARKER.sub("", typed, count=1) == "Who pays?"


@pytest.mark.parametrize("text", ["3 people drown if she waits.", "10% of the harvest is lost.", "Is 2 too many?"])
def test_text_starting_with_a_number_keeps_it(text: str) -> None:
    from ebtui.core.doclists import HAND_MARKER

    assert HAND_MARKER.sub("", text, count=1) == text
