"""Read dilemma documents (.docx) as people really write them: Word headings or bold inline labels, real or
typed lists, text in runs and tables. A section the document does not give loads as empty with a
DilemmaWarning (never borrowed from a neighbour); a file that cannot be read as a dilemma document raises
DocumentError naming the file. What the loader reads: docs/DOCUMENTS.md.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ebtui.core.doclists import HAND_MARKER, open_docx, split_inline_list, table_rows
from ebtui.core.records import Dilemma

if TYPE_CHECKING:  # python-docx is imported lazily: only reading a .docx needs it
    from docx.document import Document as DocxDocument
    from docx.oxml.xmlchemy import BaseOxmlElement
    from docx.styles.style import BaseStyle
    from docx.table import Table, _Cell
    from docx.text.paragraph import Paragraph

__all__ = [
    "DilemmaDocument",
    "DilemmaWarning",
    "DocumentError",
    "SECTION_NAMES",
    "dilemma_id",
    "load_dilemmas",
    "load_document",
    "split_inline_list",
]


class DocumentError(Exception):
    """The file cannot be read as a dilemma document. str(exc) is "<file>: <problem>"."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = " ".join(problem.split())  # always one line
        super().__init__(f"{self.path}: {self.problem}")


class DilemmaWarning(UserWarning):
    """Something in a document was missing or odd but the document still loads."""

    def __init__(self, message: str, *, path: str = "", dilemma_id: str = "", section: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.dilemma_id = dilemma_id
        self.section = section


#: record field -> the name a reader sees in messages
SECTION_NAMES: dict[str, str] = {
    "category": "Category",
    "core_scenario": "Core Scenario",
    "complications": "Complications",
    "questions": "Questions",
    "asymmetric_features": "Asymmetric Features",
    "consistency_case": "Consistency Case",
}
_LIST_SECTIONS = frozenset({"complications", "questions", "asymmetric_features"})

# normalised label text -> section key; "meta:<name>" keys go to Dilemma.metadata
_LABELS: dict[str, str] = {
    "category": "category",
    "categories": "category",
    "structure": "meta:structure",
    "core scenario": "core_scenario",
    "scenario": "core_scenario",
    "the scenario": "core_scenario",
    "complications": "complications",
    "complication": "complications",
    "complicating factors": "complications",
    "questions": "questions",
    "question": "questions",
    "key questions": "questions",
    "key question": "questions",
    "discussion questions": "questions",
    "asymmetric features": "asymmetric_features",
    "asymmetric feature": "asymmetric_features",
    "asymmetries": "asymmetric_features",
    "consistency case": "consistency_case",
    "consistency test": "consistency_case",
    "consistency test case": "consistency_case",
}

_DILEMMA_TITLE = re.compile(r"^dilemma\s+(?:\d+[a-z]?|[ivxlc]+)\s*(?:[:.)\u2013\u2014-]\s*(?P<title>.+))?$", re.I)
_PROBES_TITLE = re.compile(r"\bprobes?\b", re.I)
_LABEL = re.compile(r"^(?P<label>[^\W\d_][\w /&'\u2019()-]{0,48}?)\s*[:\uff1a]\s*(?P<rest>.*)$", re.S)
_WS = re.compile(r"\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2032": "'"})


@dataclass
class DilemmaDocument:
    """Everything a dilemma document gives."""

    path: str
    title: str = ""
    dilemmas: list[Dilemma] = field(default_factory=list)
    #: group name (as the document spells it) -> follow-up probes, in document order
    probes: dict[str, list[str]] = field(default_factory=dict)
    #: one line each, the same messages issued as DilemmaWarning
    warnings: list[str] = field(default_factory=list)

    def get(self, dilemma_id: str) -> Dilemma | None:
        return next((d for d in self.dilemmas if d.id == dilemma_id), None)


def dilemma_id(title: str) -> str:
    """"The Gardener's Dilemma" -> "gardeners_dilemma" (no leading "The", apostrophes dropped)."""
    text = unicodedata.normalize("NFKD", title.translate(_QUOTES))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"^\s*the\s+", "", text, flags=re.I).replace("'", "").lower()
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def load_dilemmas(path: str | Path | None = None) -> list[Dilemma]:
    """The dilemmas of a document (None = the built-in document)."""
    return load_document(path).dilemmas


def load_document(path: str | Path | None = None) -> DilemmaDocument:
    """Read a dilemma document (None = the built-in one). Raises DocumentError; warns DilemmaWarning."""
    if path is None:
        from ebtui.locations import builtin_document

        path = builtin_document()
    path = Path(path)
    docx_document = _open_docx(path)
    items = list(_flatten(docx_document))
    if not any(item.text for item in items):
        raise DocumentError(path, "empty document (no text in it)")
    document, pending = _Builder(str(path), items).build()
    if not document.dilemmas:
        raise DocumentError(
            path,
            "no dilemma found (expected titles like 'Dilemma 1: The Title' or sections like "
            "'Category:' and 'Questions:')",
        )
    for message, extra in pending:
        warnings.warn(DilemmaWarning(message, path=str(path), **extra), stacklevel=2)
    return document


# --------------------------------------------------------------------------------------------- reading


def _open_docx(path: Path) -> DocxDocument:
    document: DocxDocument = open_docx(path, DocumentError)
    return document


@dataclass
class _Para:
    """One paragraph reduced to what the parser needs."""

    text: str
    heading: int | None = None  # 0 = Title style, 1.. = Heading N
    is_list: bool = False
    all_bold: bool = False
    bold_prefix: str = ""
    # a two-column "label | content" table row is turned into a label paragraph plus its content
    forced_label: str | None = None
    level: int = 0  # list level (w:ilvl) of a numbered paragraph


def _norm(text: str) -> str:
    return _WS.sub(" ", text.replace("\xa0", " ")).strip()


def _label_key(label: str) -> str | None:
    label = label.translate(_QUOTES).lower().replace("-", " ").replace("_", " ")
    label = re.sub(r"\(.*?\)", "", label)  # "Complications (Team A)"
    return _LABELS.get(_WS.sub(" ", label).strip().strip("*").strip())


def _flatten(document: DocxDocument) -> Iterator[_Para]:
    return _Reader(document).walk(document.element.body, document)


class _Reader:
    """Turns body elements into _Para items; style facts are looked up once per style id (python-docx's own
    style lookups are linear scans, which made a 200-paragraph document take most of a second)."""

    def __init__(self, document: DocxDocument) -> None:
        from docx.oxml.ns import qn

        self.document = document
        self.qn = qn
        self._styles: dict[tuple[str, str | None], tuple[int | None, bool, bool | None]] = {}

    def style_facts(self, kind: str, style_id: str | None) -> tuple[int | None, bool, bool | None]:
        """(heading level, is a list style, bold) for a paragraph ("p") or character ("c") style id."""
        key = (kind, style_id)
        if key not in self._styles:
            from docx.enum.style import WD_STYLE_TYPE

            wd_type = WD_STYLE_TYPE.PARAGRAPH if kind == "p" else WD_STYLE_TYPE.CHARACTER
            try:
                style = self.document.styles.get_by_id(style_id, wd_type) if style_id else (
                    self.document.styles.default(wd_type))
            except Exception:  # a style id the styles part does not define
                style = None
            heading: int | None = None
            is_list = False
            bold: bool | None = None
            for st in _style_chain(style):
                name = (st.name or "").lower()
                m = re.match(r"heading\s*(\d)", name)
                if heading is None and m:
                    heading = int(m.group(1))
                elif heading is None and name == "title":
                    heading = 0
                st_ppr = st.element.pPr
                if not is_list and st_ppr is not None and st_ppr.numPr is not None:
                    num_id = st_ppr.numPr.numId
                    is_list = num_id is None or num_id.val != 0
                if not is_list and name.startswith("list"):
                    is_list = True
                if bold is None:
                    bold = st.font.bold if hasattr(st, "font") else None
                    if bold is None and name in ("strong", "bold"):
                        bold = True
            self._styles[key] = (heading, is_list, bold)
        return self._styles[key]

    def walk(self, container: BaseOxmlElement, parent: DocxDocument | _Cell) -> Iterator[_Para]:
        from docx.table import Table
        from docx.text.paragraph import Paragraph

        qn = self.qn
        for child in container.iterchildren():
            if child.tag == qn("w:p"):
                yield self.para(Paragraph(child, parent))
            elif child.tag == qn("w:tbl"):
                yield from self.table(Table(child, parent))
            elif child.tag == qn("w:sdt"):  # content controls wrap ordinary paragraphs
                content = child.find(qn("w:sdtContent"))
                if content is not None:
                    yield from self.walk(content, parent)

    def table(self, table: Table) -> Iterator[_Para]:
        """A "label | content" table gives labelled sections; a numbered table gives list items; any other
        table gives one line per row."""
        rows: list[list[_Cell]] = []
        for row in table.rows:
            cells: list[_Cell] = []
            for cell in row.cells:
                if cells and cell._tc is cells[-1]._tc:  # merged cells repeat
                    continue
                cells.append(cell)
            rows.append(cells)
        plain: list[list[_Cell]] = []  # consecutive rows that are not "label | content", read together
        for cells in rows:
            if len(cells) == 2:
                label = _norm(cells[0].text).rstrip(":\uff1a").strip()
                if _label_key(label) or _DILEMMA_TITLE.match(label):
                    yield from self._plain_rows(plain)
                    plain = []
                    inner = [p for p in self.walk(cells[1]._tc, cells[1]) if p.text]
                    if _DILEMMA_TITLE.match(label) and not _label_key(label):
                        yield _Para(text=label, all_bold=True, bold_prefix=label)
                        yield from inner
                    elif inner and not inner[0].is_list and _label_key(label) not in _LIST_SECTIONS:
                        yield _Para(text=f"{label}: {inner[0].text}", forced_label=label)
                        yield from inner[1:]
                    else:
                        yield _Para(text=f"{label}:", forced_label=label)
                        yield from inner
                    continue
            plain.append(cells)
        yield from self._plain_rows(plain)

    def _auto_numbered(self, cell: _Cell) -> bool:
        """A cell whose only content is Word/LibreOffice numbering (the number lives in numPr, not the text)."""
        return any(self.para(p).is_list for p in cell.paragraphs)

    def _plain_rows(self, rows: list[list[_Cell]]) -> Iterator[_Para]:
        """Rows that are not "label | content": see doclists.table_rows (a numbered table is a list)."""
        texts = [[_norm(c.text) for c in cells] for cells in rows]
        auto = [not t[0] and self._auto_numbered(cells[0]) if t else False for t, cells in zip(texts, rows, strict=True)]
        for text, is_item in table_rows(texts, auto):
            yield _Para(text=text, is_list=is_item)

    def para(self, p: Paragraph) -> _Para:
        from docx.text.run import Run

        qn = self.qn
        text = _norm(p.text)
        p_pr = p._p.pPr
        outline = None
        is_list = False
        level = 0
        style_id = None
        if p_pr is not None:
            # python-docx types the oxml child as its ZeroOrOne descriptor, not the CT_NumPr element it is
            num_pr: Any = p_pr.numPr
            if num_pr is not None and num_pr.numId is not None and num_pr.numId.val != 0:
                is_list = True
                level = num_pr.ilvl.val if num_pr.ilvl is not None else 0
            ol = p_pr.find(qn("w:outlineLvl"))
            if ol is not None:
                outline = int(ol.get(qn("w:val"), "9"))
            style_id = p_pr.style
        heading, style_list, style_bold = self.style_facts("p", style_id)
        is_list = is_list or style_list
        if heading is None and outline is not None and outline < 9:
            heading = outline + 1
        if heading is not None:
            # LibreOffice saves heading styles with outline numbering (numPr on the style): a heading is
            # still a heading, not a list item
            is_list = False
        bold_prefix: list[str] = []
        all_bold = bool(text)
        leading = True
        for r_el in p._p.iter(qn("w:r")):
            run = Run(r_el, p)
            rt = run.text
            bold = run.bold
            if bold is None and r_el.rPr is not None and r_el.rPr.style:
                bold = self.style_facts("c", r_el.rPr.style)[2]
            if bold is None:
                bold = style_bold
            if not rt.strip():
                if leading:
                    bold_prefix.append(rt)
                continue
            if not bold:
                all_bold = False
                leading = False
            elif leading:
                bold_prefix.append(rt)
        return _Para(text=text, heading=heading, is_list=is_list, all_bold=all_bold,
                     bold_prefix=_norm("".join(bold_prefix)), level=level)


def _style_chain(style: BaseStyle | None) -> Iterator[BaseStyle]:
    from docx.styles.style import CharacterStyle

    seen = 0
    while style is not None and seen < 10:
        yield style
        style = style.base_style if isinstance(style, CharacterStyle) else None  # paragraph styles too
        seen += 1


# --------------------------------------------------------------------------------------------- parsing


@dataclass
class _Block:
    kind: str  # "dilemma" | "probes" | "other"
    title: str
    heading: int | None
    explicit: bool  # title said "Dilemma N:"
    paras: list[_Para] = field(default_factory=list)
    labels_seen: int = 0


class _Builder:
    def __init__(self, path: str, items: list[_Para]) -> None:
        self.path = path
        self.items = [i for i in items if i.text]
        self.pending: list[tuple[str, dict[str, str]]] = []

    def warn(self, message: str, **extra: str) -> None:
        self.pending.append((message, extra))

    # -- splitting the document into blocks (one per title) ----------------------------------------

    def _label_of(self, p: _Para) -> tuple[str, str] | None:
        """(section key, inline text) when the paragraph is a section label."""
        if p.forced_label is not None:
            key = _label_key(p.forced_label)
            rest = p.text.split(":", 1)[1] if ":" in p.text else ""
            return (key, rest.strip()) if key else None
        if p.heading is not None:
            key = _label_key(p.text.rstrip(":\uff1a"))
            if key:
                return key, ""
        m = _LABEL.match(p.text)
        if m:
            key = _label_key(m.group("label"))
            if key:
                return key, m.group("rest").strip()
        # a bold label without a colon: "**Questions** 1. ... 2. ..."
        key = _label_key(p.bold_prefix) if p.bold_prefix and not p.is_list else None
        if key and p.text.startswith(p.bold_prefix):
            return key, p.text[len(p.bold_prefix):].strip()
        return None

    def _title_of(self, p: _Para, nxt: _Para | None) -> tuple[str, bool] | None:
        """(title, explicit) when the paragraph starts a new block."""
        if p.is_list or self._label_of(p):
            return None
        m = _DILEMMA_TITLE.match(p.text.rstrip())
        if m and (p.heading is not None or p.all_bold or len(p.text) <= 120):
            return (m.group("title") or p.text).strip(), True
        if p.heading is not None:
            return p.text, False
        if p.all_bold and len(p.text) <= 80 and _PROBES_TITLE.search(p.text):
            return p.text.rstrip(":\uff1a").strip(), False
        # a bold stand-alone line right before a "Category:" line is a title written without a heading
        if p.all_bold and len(p.text) <= 100 and not p.text.endswith((".", ":")) and nxt is not None:
            lab = self._label_of(nxt)
            if lab and lab[0] == "category":
                return p.text, False
        return None

    def blocks(self) -> tuple[str, list[_Block]]:
        doc_title = ""
        blocks: list[_Block] = []
        current: _Block | None = None
        for i, p in enumerate(self.items):
            nxt = self.items[i + 1] if i + 1 < len(self.items) else None
            title = self._title_of(p, nxt)
            if title is not None and current is not None:
                text, explicit = title
                deeper = (p.heading is not None and current.heading is not None and p.heading > current.heading)
                # sub-headings stay inside a dilemma (e.g. "Option A") or a probes section (its groups)
                if not explicit and deeper and current.kind == "probes":
                    title = None
                elif not explicit and deeper and (current.explicit or current.labels_seen):
                    title = None
            if title is not None:
                text, explicit = title
                if _PROBES_TITLE.search(text) and not explicit:
                    kind = "probes"
                else:
                    kind = "dilemma" if explicit else "other"
                current = _Block(kind, text, p.heading, explicit)
                blocks.append(current)
                if not doc_title and p.heading is not None and p.heading <= 1 and not explicit:
                    doc_title = text
                continue
            if current is None:
                current = _Block("other", "", None, False)
                blocks.append(current)
            current.paras.append(p)
            if self._label_of(p) and current.kind != "probes":
                current.labels_seen += 1
        # a block titled without "Dilemma N:" is a dilemma when it has a category or two kinds of sections
        for b in blocks:
            if b.kind == "other" and b.title:
                keys = {lab[0] for lab in (self._label_of(p) for p in b.paras) if lab}
                if "category" in keys or len(keys - {"meta:structure"}) >= 2:
                    b.kind = "dilemma"
        return doc_title, blocks

    # -- one dilemma ----------------------------------------------------------------------------------

    def dilemma(self, block: _Block) -> Dilemma:
        category = ""
        metadata: dict[str, str] = {}
        text_parts: dict[str, list[str]] = {"core_scenario": [], "consistency_case": []}
        lists: dict[str, list[str]] = {k: [] for k in _LIST_SECTIONS}
        section = "core_scenario"  # text before the first label is the scenario
        list_base: dict[str, int] = {}  # the list level of a section's first numbered item
        for p in block.paras:
            label = self._label_of(p)
            if label is not None:
                key, rest = label
                if key in ("category", "meta:structure"):
                    # "Category: Moral Status | Structure: Symmetric" -> category + metadata
                    for piece in p.text.split("|"):
                        m = _LABEL.match(piece.strip())
                        if not m:
                            continue
                        k = _label_key(m.group("label"))
                        value = m.group("rest").strip()
                        if k == "category":
                            category = value
                        elif value:
                            name = k[5:] if k and k.startswith("meta:") else m.group("label")
                            metadata[_meta_key(name)] = value
                    continue
                section = key
                if rest:
                    self._add(section, rest, False, text_parts, lists)
                continue
            if p.is_list and section in _LIST_SECTIONS:
                base = list_base.setdefault(section, p.level)
                if p.level > base and lists[section]:  # a sub-item belongs to the item above it
                    lists[section][-1] += " " + HAND_MARKER.sub("", p.text, count=1).strip()
                    continue
            self._add(section, p.text, p.is_list, text_parts, lists)
        title = block.title
        record = Dilemma(
            id=dilemma_id(title) or "dilemma",
            title=title,
            category=category,
            core_scenario="\n\n".join(text_parts["core_scenario"]),
            complications=lists["complications"],
            questions=lists["questions"],
            asymmetric_features=lists["asymmetric_features"],
            consistency_case="\n\n".join(text_parts["consistency_case"]),
            metadata=metadata,
            source=self.path,
        )
        return record

    @staticmethod
    def _add(section: str, text: str, is_list: bool, text_parts: dict[str, list[str]],
             lists: dict[str, list[str]]) -> None:
        if section in _LIST_SECTIONS:
            items = split_inline_list(text)
            if len(items) > 1:  # "Questions: 1. ... 2. ... 3. ..." in one paragraph
                lists[section].extend(items)
                return
            item = HAND_MARKER.sub("", text, count=1).strip()
            if item:
                lists[section].append(item)
        else:
            text_parts[section].append(f"- {text}" if is_list else text)

    # -- probes -----------------------------------------------------------------------------------------

    def probes(self, block: _Block, into: dict[str, list[str]]) -> None:
        group: str | None = None
        for p in block.paras:
            is_group = (p.heading is not None or (p.all_bold and not p.is_list)) and len(p.text) <= 80
            if is_group:
                group = p.text.rstrip(":\uff1a").strip()
                into.setdefault(group, [])
                continue
            if group is None:
                if not p.is_list and not HAND_MARKER.match(p.text):
                    continue  # an introductory sentence, not a probe
                group = "General"
                into.setdefault(group, [])
            item = HAND_MARKER.sub("", p.text, count=1).strip()
            if item:
                into[group].append(item)

    # -- the whole document ------------------------------------------------------------------------------

    def build(self) -> tuple[DilemmaDocument, list[tuple[str, dict[str, str]]]]:
        doc_title, blocks = self.blocks()
        document = DilemmaDocument(path=self.path, title=doc_title)
        seen: dict[str, int] = {}
        for block in blocks:
            if block.kind == "probes":
                self.probes(block, document.probes)
                continue
            if block.kind != "dilemma":
                continue
            d = self.dilemma(block)
            if d.id in seen:
                seen[d.id] += 1
                new_id = f"{d.id}_{seen[d.id]}"
                self.warn(f"{self.path}: two dilemmas are titled {d.title!r}; the second is given id {new_id!r}",
                          dilemma_id=new_id)
                d.id = new_id
            else:
                seen[d.id] = 1
            for fld, name in SECTION_NAMES.items():
                if not getattr(d, fld):
                    self.warn(f"{self.path}: dilemma {d.id!r} ({d.title}) has no {name} section; loaded as empty",
                              dilemma_id=d.id, section=name)
            document.dilemmas.append(d)
        document.warnings = [m for m, _ in self.pending]
        return document, self.pending


def _meta_key(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.translate(_QUOTES).lower()).strip("_")
