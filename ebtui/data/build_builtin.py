"""Build ebtui/data/builtin_dilemmas.docx from its editable source, builtin_dilemmas.toml.

    .venv/bin/python -m ebtui.data.build_builtin [--source FILE] [--output FILE]

Real Word heading styles (Title, Heading 1, Heading 2) and list paragraphs (numbering restarted per list),
so the document is also a fair test of the loader on a document written the way Word writes it.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "builtin_dilemmas.toml"
OUTPUT = HERE / "builtin_dilemmas.docx"

TEXT_FIELDS = ("core_scenario", "consistency_case")
LIST_FIELDS = ("complications", "questions", "asymmetric_features")
SECTIONS = (
    ("Core Scenario", "core_scenario"),
    ("Complications", "complications"),
    ("Questions", "questions"),
    ("Asymmetric Features", "asymmetric_features"),
    ("Consistency Case", "consistency_case"),
)


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs, each folded onto one line."""
    return [" ".join(block.split()) for block in text.strip().split("\n\n") if block.strip()]


def load_source(path: Path = SOURCE) -> dict[str, Any]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    for i, d in enumerate(data.get("dilemma", []), 1):
        for key in ("title", "category", "structure", *TEXT_FIELDS, *LIST_FIELDS):
            if not d.get(key):
                raise SystemExit(f"{path}: dilemma {i} ({d.get('title', '?')}): '{key}' is missing or empty")
    return data


def _restarted_num(document: Any, style_name: str) -> int:
    """A new numbering instance for one list, so each list starts again at 1."""
    numbering = document.part.numbering_part.element
    style_num_id = document.styles[style_name].element.pPr.numPr.numId.val
    abstract_id = numbering.num_having_numId(style_num_id).abstractNumId.val
    num = numbering.add_num(abstract_id)
    num.add_lvlOverride(ilvl=0).add_startOverride(1)
    return int(num.numId)


def _list(document: Any, items: list[str], style_name: str = "List Number") -> None:
    num_id = _restarted_num(document, style_name) if style_name == "List Number" else None
    for item in items:
        p = document.add_paragraph(item, style=style_name)
        if num_id is not None:
            num_pr = p._p.get_or_add_pPr().get_or_add_numPr()
            num_pr.get_or_add_ilvl().val = 0
            num_pr.get_or_add_numId().val = num_id


def build(source: Path = SOURCE, output: Path = OUTPUT) -> Path:
    import docx

    data = load_source(source)
    document = docx.Document()
    document.core_properties.title = data.get("title", "Dilemmas")
    document.core_properties.author = "ebtui"
    document.add_heading(data.get("title", "Dilemmas"), level=0)
    document.add_heading("About these dilemmas", level=1)
    for para in paragraphs(data.get("introduction", "")):
        document.add_paragraph(para)
    for n, d in enumerate(data["dilemma"], 1):
        document.add_heading(f"Dilemma {n}: {d['title']}", level=1)
        meta = document.add_paragraph()
        meta.add_run("Category:").bold = True
        meta.add_run(f" {d['category']} | ")
        meta.add_run("Structure:").bold = True
        meta.add_run(f" {d['structure']}")
        for heading, key in SECTIONS:
            document.add_heading(heading, level=2)
            if key in LIST_FIELDS:
                _list(document, [" ".join(item.split()) for item in d[key]])
            else:
                for para in paragraphs(d[key]):
                    document.add_paragraph(para)
    probes = data.get("probes", {})
    if probes:
        document.add_heading("Universal Follow-up Probes", level=1)
        if probes.get("intro"):
            document.add_paragraph(probes["intro"])
        for group in probes.get("group", []):
            document.add_heading(group["name"], level=2)
            _list(document, group["items"], "List Bullet")
    output.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(output))
    return output


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    print(build(args.source, args.output))


if __name__ == "__main__":
    main()
