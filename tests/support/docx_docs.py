"""Word documents of dilemmas written here with python-docx, the ways people write them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docx
from docx.document import Document


def bold_label(doc: Document, label: str, rest: str = "", style: str | None = None) -> Any:
    """A paragraph opening with `label` in bold, then `rest`."""
    p = doc.add_paragraph(style=style)
    p.add_run(label).bold = True
    if rest:
        p.add_run(" " + rest)
    return p


def dilemma_doc(title: str, category: str, scenario: str, *, level: int = 2) -> Document:
    """A new document opening with "Dilemma 1: `title`" (a heading of `level`), a bold "Category:" line and
    the scenario's paragraph."""
    doc = docx.Document()
    doc.add_heading(f"Dilemma 1: {title}", level=level)
    bold_label(doc, "Category:", category)
    doc.add_paragraph(scenario)
    return doc


def save(doc: Document, tmp_path: Path, name: str = "doc.docx") -> Path:
    path = tmp_path / name
    doc.save(str(path))
    return path


def paragraphs_doc(path: Path, heading: str, *paragraphs: str, level: int = 1) -> Path:
    """A document of one heading and plain paragraphs (labels typed inline, nothing bold), saved at `path`."""
    doc = docx.Document()
    doc.add_heading(heading, level=level)
    for text in paragraphs:
        doc.add_paragraph(text)
    doc.save(str(path))
    return path
