"""The built-in document: eight complete dilemmas, up to date with its editable source."""

from __future__ import annotations

import warnings
from pathlib import Path

import docx

from ebtui.core.dilemmas import DilemmaWarning, load_document
from ebtui.core.records import CRITERIA
from ebtui.data import build_builtin
from ebtui.locations import builtin_document

FIELDS = ("id", "title", "category", "core_scenario", "complications", "questions", "asymmetric_features",
          "consistency_case")


def _strict_load(path: Path | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DilemmaWarning)  # a missing section would fail the test
        return load_document(path)


def test_eight_dilemmas_every_field_filled() -> None:
    doc = _strict_load()
    assert doc.warnings == []
    assert len(doc.dilemmas) == 8
    assert len({d.id for d in doc.dilemmas}) == 8
    assert len({d.category for d in doc.dilemmas}) == 8  # varied categories
    for d in doc.dilemmas:
        for name in FIELDS:
            assert getattr(d, name), (d.id, name)
        assert d.metadata.get("structure") in ("Symmetric", "Asymmetric")
        assert 2 <= len(d.core_scenario.split("\n\n")) <= 4, d.id
        assert 2 <= len(d.complications) <= 4, d.id
        assert 2 <= len(d.questions) <= 3, d.id
        assert 2 <= len(d.asymmetric_features) <= 3, d.id
        assert all(item.strip() for item in d.complications + d.questions + d.asymmetric_features)
    structures = {d.metadata["structure"] for d in doc.dilemmas}
    assert structures == {"Symmetric", "Asymmetric"}


def test_probe_groups_one_per_judging_criterion() -> None:
    doc = _strict_load()
    keys = [name.lower().replace(" ", "_") for name in doc.probes]
    assert keys == list(CRITERIA)
    assert all(len(items) >= 2 for items in doc.probes.values())


def test_committed_docx_is_up_to_date_with_its_source(tmp_path: Path) -> None:
    rebuilt = build_builtin.build(build_builtin.SOURCE, tmp_path / "rebuilt.docx")
    fresh, committed = _strict_load(rebuilt), _strict_load(builtin_document())

    def strip_source(doc):
        return [d.model_dump(exclude={"source"}) for d in doc.dilemmas]

    assert strip_source(committed) == strip_source(fresh), (
        "ebtui/data/builtin_dilemmas.docx is stale: run .venv/bin/python -m ebtui.data.build_builtin"
    )
    assert committed.probes == fresh.probes
    assert committed.title == fresh.title


def test_source_text_matches_loaded_text() -> None:
    """What the loader returns is exactly what the source says (paragraphs and items, whitespace folded)."""
    import tomllib

    source = tomllib.loads(build_builtin.SOURCE.read_text(encoding="utf-8"))
    doc = _strict_load()
    assert [d.title for d in doc.dilemmas] == [s["title"] for s in source["dilemma"]]
    for d, s in zip(doc.dilemmas, source["dilemma"], strict=True):
        assert d.core_scenario == "\n\n".join(build_builtin.paragraphs(s["core_scenario"]))
        assert d.consistency_case == "\n\n".join(build_builtin.paragraphs(s["consistency_case"]))
        assert d.complications == [" ".join(x.split()) for x in s["complications"]]
        assert d.category == s["category"]


def test_docx_uses_real_heading_styles_and_numbered_lists() -> None:
    document = docx.Document(str(builtin_document()))
    styles = [p.style.name for p in document.paragraphs]
    assert styles.count("Heading 1") >= 9  # eight dilemmas + probes (+ introduction)
    numbered = [p for p in document.paragraphs if p.style.name == "List Number"]
    assert numbered
    for p in numbered:
        assert p._p.pPr.numPr is not None
        assert not p.text[:1].isdigit()  # numbers live in numbering definitions, not in the text
