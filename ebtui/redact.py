"""Secrets kept out of everything ebtui stores or shows: the one redactor. Every configured API key's value
is registered here when models.toml is loaded; `redact(text)` replaces the value, and any piece of it of
`MIN_PIECE` or more characters (servers echo parts of keys), with `[REDACTED]`. Provider errors, the round
engine, the store, the command line and log records apply it. Nothing of ebtui is imported here.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from typing import Any, AnyStr

MASK = "[REDACTED]"
#: the shortest piece of a key that is redacted on its own
MIN_PIECE = 8
#: a value shorter than this is no secret worth matching (placeholders such as "no-key")
MIN_SECRET = 8

_lock = threading.Lock()
_secrets: set[str] = set()
#: per secret (as str and as UTF-8 bytes): its aligned ANCHOR-character pieces and where they sit in it
_anchors: tuple[dict[str, list[tuple[str, int]]], dict[bytes, list[tuple[bytes, int]]]] = ({}, {})
_record_factory_installed = False
ANCHOR = 4


def _anchor_map(secrets: Iterable[AnyStr]) -> dict[AnyStr, list[tuple[AnyStr, int]]]:
    """Every ANCHOR-long piece of each secret at an offset that is a multiple of ANCHOR: any piece of a
    secret MIN_PIECE (= 2 * ANCHOR) long or more holds one of them whole, so finding these (plain
    substring searches, fast) finds every candidate, which is then grown both ways against the secret."""
    out: dict[AnyStr, list[tuple[AnyStr, int]]] = {}
    for secret in secrets:
        for i in range(0, len(secret) - ANCHOR + 1, ANCHOR):
            out.setdefault(secret[i:i + ANCHOR], []).append((secret, i))
    return out


def register(*values: str | None) -> None:
    """Add secret values (an API key read from the environment); short or empty values are ignored."""
    global _anchors
    new = {v.strip() for v in values if isinstance(v, str) and len(v.strip()) >= MIN_SECRET}
    with _lock:
        if new <= _secrets:
            return
        _secrets.update(new)
        _anchors = (_anchor_map(_secrets), _anchor_map({s.encode("utf-8") for s in _secrets}))
    _install_record_factory()


def forget_all() -> None:
    """Drop every registered secret (tests; a process otherwise keeps them until it ends)."""
    global _anchors
    with _lock:
        _secrets.clear()
        _anchors = ({}, {})


def register_env(names: Iterable[str | None]) -> None:
    """Register the values of these environment variables (the configured models' key variables)."""
    register(*(os.environ.get(n) for n in names if n))


def active() -> bool:
    return bool(_secrets)


def _find_spans(text: AnyStr, anchors: dict[AnyStr, list[tuple[AnyStr, int]]]) -> list[tuple[int, int]]:
    """Where pieces (>= MIN_PIECE long) of a secret sit in `text`, merged, in order."""
    found: list[tuple[int, int]] = []
    n = len(text)
    for anchor, places in anchors.items():
        p = text.find(anchor)
        while p != -1:
            for secret, i in places:
                left = 0
                while left < i and p - left - 1 >= 0 and text[p - left - 1] == secret[i - left - 1]:
                    left += 1
                right = ANCHOR
                while i + right < len(secret) and p + right < n and text[p + right] == secret[i + right]:
                    right += 1
                if left + right >= MIN_PIECE:
                    found.append((p - left, p + right))
            p = text.find(anchor, p + 1)
    found.sort()
    merged: list[tuple[int, int]] = []
    for s, e in found:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def _masked(text: AnyStr, anchors: dict[AnyStr, list[tuple[AnyStr, int]]], mask: AnyStr) -> AnyStr:
    """`text` with every span `_find_spans` finds replaced by `mask`."""
    if not anchors or not text:
        return text
    parts: list[AnyStr] = []
    last = 0
    for s, e in _find_spans(text, anchors):
        parts += [text[last:s], mask]
        last = e
    if not parts:
        return text
    parts.append(text[last:])
    return text[:0].join(parts)


def redact(text: str) -> str:
    """`text` with every registered secret, and every piece of one of MIN_PIECE characters or more,
    replaced by MASK."""
    return _masked(text, _anchors[0], MASK) if isinstance(text, str) else text


def redact_bytes(data: bytes) -> bytes:
    """The same over UTF-8 bytes (a file about to be written)."""
    return _masked(data, _anchors[1], MASK.encode())


def _install_record_factory() -> None:
    """Log records carry redacted messages (whatever handler writes them, wherever)."""
    global _record_factory_installed
    with _lock:
        if _record_factory_installed:
            return
        _record_factory_installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: leave it for logging to report
            return record
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return record

    logging.setLogRecordFactory(factory)


class RedactingStream:
    """A text stream that redacts what is written to it (the command line's stdout and stderr)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, s: Any) -> Any:
        if isinstance(s, str):
            s = redact(s)
        elif isinstance(s, bytes | bytearray):
            s = redact_bytes(bytes(s))
        return self._inner.write(s)

    def writelines(self, lines: Iterable[Any]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
