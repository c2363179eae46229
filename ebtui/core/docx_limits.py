"""Bounds on a .docx before anything is unpacked: a zip bomb is refused in milliseconds. Each part's declared
size is checked against a cap per part and for the whole package, then each part is unpacked as a stream
with a running count (headers can lie). Caps: $EBTUI_DOCX_MAX_PART_MB, $EBTUI_DOCX_MAX_TOTAL_MB, MAX_PARTS
(docs/DOCUMENTS.md, "Size caps").
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ebtui.core.views import numbers as num

DEFAULT_PART_MB = 32
DEFAULT_TOTAL_MB = 128
MAX_PARTS = 10_000
_CHUNK = 1 << 20


@dataclass(frozen=True)
class DocxLimits:
    part_bytes: int
    total_bytes: int
    parts: int = MAX_PARTS


def _env_mb(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else float(default)
    except ValueError:
        value = float(default)
    return int(max(value, 0.001) * 1_000_000)


def docx_limits() -> DocxLimits:
    return DocxLimits(_env_mb("EBTUI_DOCX_MAX_PART_MB", DEFAULT_PART_MB),
                      _env_mb("EBTUI_DOCX_MAX_TOTAL_MB", DEFAULT_TOTAL_MB))


def _mb(n: int) -> str:
    return f"{num.shown(n / 1e6, ',.1f')} MB" if n < 10**9 else f"{num.shown(n / 1e9, ',.1f')} GB"


def check_docx_package(zf: zipfile.ZipFile, path: Path, error: Callable[[Path, str], Exception],
                       limits: DocxLimits | None = None) -> None:
    """Raise `error(path, problem)` if the package unpacks past a cap (by its headers, then by a bounded
    streaming unpack of every part, which also checks each part's CRC)."""
    lim = limits or docx_limits()
    infos = zf.infolist()
    if len(infos) > lim.parts:
        raise error(path, f"refused: {len(infos):,} parts in the package (at most {lim.parts:,})")
    declared = 0
    for info in infos:
        if info.file_size > lim.part_bytes:
            raise error(path, f"refused: part {info.filename} unpacks to {_mb(info.file_size)}, more than the "
                              f"{_mb(lim.part_bytes)} a part may (EBTUI_DOCX_MAX_PART_MB)")
        declared += info.file_size
    if declared > lim.total_bytes:
        raise error(path, f"refused: it unpacks to {_mb(declared)}, more than the {_mb(lim.total_bytes)} a "
                          "document may (EBTUI_DOCX_MAX_TOTAL_MB)")
    total = 0
    for info in infos:
        size = 0
        with zf.open(info) as part:
            while chunk := part.read(_CHUNK):
                size += len(chunk)
                total += len(chunk)
                if size > lim.part_bytes or total > lim.total_bytes:
                    raise error(path, f"refused: part {info.filename} unpacks past the size caps "
                                      "(EBTUI_DOCX_MAX_PART_MB / EBTUI_DOCX_MAX_TOTAL_MB)")
