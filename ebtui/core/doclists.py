"""List items as people type them in documents: hand-typed markers ("1.", "(a)", "Q3."), inline
enumerations in one paragraph ("1. ... 2. ... 3. ..."), and the number column of a list given as a table.
Also: opening a .docx with one clear error per problem. Used by the dilemma loader (ebtui.core.dilemmas)."""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.core.docx_limits import check_docx_package

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument

__all__ = [
    "CELL_NUMBER", "HAND_MARKER", "counts_up", "open_docx", "ordinals", "split_inline_list", "table_rows",
]

# hand-typed list markers: "1.", "1)", "(1)", "a)", "(a)", bullets and dashes
HAND_MARKER = re.compile(
    r"^\s*(?:(?i:q(?:uestion)?)\s*\d{1,3}\s*[.:)]|\(?\d{1,3}[.):]|\d{1,3}\s+[\u2013\u2014-]|[a-z]\.|\(?[ivx]{1,4}[.)]"
    r"|\([a-zA-Z]\)|[a-zA-Z]\)|[\u2022\u00b7\u25aa\u25cf\u2023\u25e6*\u2013\u2014-])\s+"
)
# the first cell of a numbered table row: "1", "1.", "(1)", "a)", "iv.", "Q1", "#1", a bullet
CELL_NUMBER = re.compile(
    r"^(?:(?:q|no\.?|#|item|question)\s*)?(?:\(?\d{1,3}[.):]?|\(?[a-z][.)]|\([a-z]\)|\(?[ivx]{1,4}[.)]|\([ivx]{1,4}\))$"
    r"|^[\u2022\u00b7\u25aa\u25cf\u2023\u25e6*\u2013\u2014-]$",
    re.I,
)
_ROMAN = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii")
# inline enumerations in one paragraph: how the first marker looks, and how to spell marker k (0-based)
_INLINE_KINDS: tuple[tuple[re.Pattern[str], Callable[[int], str]], ...] = (
    (re.compile(r"^1[.)]\s+"), lambda k: rf"{k + 1}[.)]"),
    (re.compile(r"^\(1\)\s*"), lambda k: rf"\({k + 1}\)"),
    (re.compile(r"^\(a\)\s*", re.I), lambda k: rf"\({chr(97 + k)}\)"),
    (re.compile(r"^a\)\s+", re.I), lambda k: rf"{chr(97 + k)}\)"),
    (re.compile(r"^\(i\)\s*", re.I), lambda k: rf"\({_ROMAN[k]}\)" if k < len(_ROMAN) else r"(?!)"),
    (re.compile(r"^i[.)]\s+", re.I), lambda k: rf"{_ROMAN[k]}[.)]" if k < len(_ROMAN) else r"(?!)"),
)


def ordinals(cells: list[str]) -> list[int | None]:
    """The positions a table's number cells give ("3." -> 3, "(b)" -> 2, "Q2" -> 2, "ii." -> 2); None for an
    empty (auto-numbered) cell or a bullet. Single letters are read as roman numerals when that counts up."""
    cores = [re.sub(r"^(?:q|no\.?|#|item|question)\s*", "", c.strip(), flags=re.I).strip("().:").lower()
             for c in cells]

    def read(core: str, roman: bool) -> int | None:
        if not core:
            return None
        if core.isdigit():
            return int(core)
        if roman and core in _ROMAN:
            return _ROMAN.index(core) + 1
        if len(core) == 1 and core.isalpha():
            return ord(core) - 96
        if core in _ROMAN:
            return _ROMAN.index(core) + 1
        return None

    letters = [read(c, False) for c in cores]
    if letters and letters[0] == 9:  # "i", "ii", ... rather than the ninth letter
        return [read(c, True) for c in cores]
    return letters


def split_inline_list(text: str) -> list[str]:
    """"1. A? 2. B? 3. C?" (or "(a) ... (b) ...", "1) ... 2) ...", "(i) ... (ii) ...") typed in one paragraph
    -> ["A?", "B?", "C?"]; anything else -> [text]. The markers must start the text and count up from the
    first; where a marker's text also occurs inside an item, the one after a sentence end is taken."""
    text = text.strip()
    for first, spell in _INLINE_KINDS:
        m = first.match(text)
        if not m:
            continue
        starts = [(0, m.end())]  # (marker start, item start)
        pos = m.end()
        k = 1
        while True:
            rx = re.compile(rf"(?<=\s)(?P<mark>{spell(k)})(?=\s)", re.I)
            found = [x for x in rx.finditer(text, pos)]
            if not found:
                break
            after_stop = [x for x in found if re.search(r"[.?!;:,)\u201d\"']\s*$", text[:x.start()])]
            pick = (after_stop or found)[0]
            starts.append((pick.start(), pick.end()))
            pos = pick.end()
            k += 1
        if len(starts) < 2:
            continue
        items = []
        for i, (_, item_start) in enumerate(starts):
            end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
            item = text[item_start:end].strip().rstrip(";,").strip()
            if item.lower().endswith((" and", " or")) and i + 1 < len(starts):
                item = item.rsplit(" ", 1)[0].rstrip(";,").strip()
            items.append(item)
        if all(items):
            return items
    return [text]


def counts_up(cells: list[str]) -> bool:
    """The number cells of a table's rows count up from the first (1, 2, 3 / a, b / i, ii / Q1, Q2), or are
    all empty (the numbers are Word/LibreOffice numbering) or bullets."""
    known = [o for o in ordinals(cells) if o is not None]
    if not known:
        return True
    return (len(known) == len(cells) and known[0] in (0, 1)
            and known == list(range(known[0], known[0] + len(known))))



def table_rows(texts: list[list[str]], auto_numbered: list[bool]) -> list[tuple[str, bool]]:
    """A table's rows (cell texts) as (line, is list item). A list given as a table — the item number in the
    first column (typed, counting up, or Word/LibreOffice numbering: `auto_numbered`), the item in the next —
    gives one item per row with the number dropped and its header row ("No. | Question") dropped; any
    other table gives one line per row, its cells joined by " | "."""
    numbered = [len(t) >= 2 and any(t[1:]) and (bool(CELL_NUMBER.match(t[0])) or auto)
                for t, auto in zip(texts, auto_numbered, strict=True)]
    n = sum(numbered)
    # the numbers must count up from the first (1, 2, 3 / a, b / i, ii): "10 | 40 pounds" rows are data
    if n and n >= len(texts) - 1 and counts_up([t[0] for t, k in zip(texts, numbered, strict=True) if k]):
        out = []
        for i, (t, is_item) in enumerate(zip(texts, numbered, strict=True)):
            if is_item:
                out.append((" | ".join(x for x in t[1:] if x), True))
            elif not (i == 0 and sum(1 for x in t if x) >= 2 and all(len(x.split()) <= 3 for x in t)):
                # a header row ("No. | Question") is dropped; a one-cell row ("Questions:") is kept
                out.append((" | ".join(x for x in t if x), False))
        return [(line, item) for line, item in out if line]
    return [(line, False) for line in (" | ".join(x for x in t if x) for t in texts) if line]


def open_docx(path: Path, error: Callable[[Path, str], Exception]) -> DocxDocument:
    """The python-docx Document of a .docx file, or `error(path, problem)` raised naming what is wrong."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    if not path.exists():
        raise error(path, "no such file")
    if path.is_dir():
        raise error(path, "is a directory, not a .docx file")
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise error(path, f"cannot be read ({exc.strerror or exc})") from None
    if not head:
        raise error(path, "empty file (0 bytes), not a .docx document")
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        raise error(path, "is a legacy Word .doc (or other OLE) file, not a .docx; save it as .docx")
    if not head.startswith(b"PK"):
        raise error(path, "not a .docx file (a .docx is a zip package; this is not one)")
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if "word/document.xml" not in names:
                raise error(path, "not a Word .docx file (zip package without word/document.xml)")
            check_docx_package(zf, path, error)  # a zip bomb is refused before it is unpacked
    except zipfile.BadZipFile as exc:
        raise error(path, f"corrupt .docx (bad zip: {exc})") from None
    except (OSError, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
        raise error(path, f"corrupt .docx ({exc})") from None
    try:
        return docx.Document(str(path))
    except PackageNotFoundError:
        raise error(path, "not a Word .docx file") from None
    except Exception as exc:  # lxml / KeyError / ValueError from a damaged package
        raise error(path, f"corrupt .docx ({type(exc).__name__}: {exc})") from None
