"""Reading the dilemmas a round is played on: a document (bad ones are one UsageError line), a dilemma by
id, and the built-in set from its cache (what the app's setup screen lists before its first frame)."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.core.records import Dilemma
from ebtui.errors import UsageError

if TYPE_CHECKING:  # python-docx and the document reader load when a .docx is read, not at start-up
    from ebtui.core.dilemmas import DilemmaDocument as DilemmaDocument

#: the built-in dilemmas, parsed from the .docx and kept as JSON beside it (checked against the .docx's hash, so
#: a stale one is never used): reading the .docx means python-docx, lxml and the parser, ≈ 0.3 s at start-up
PACKAGED_CACHE = "builtin_dilemmas.cache.json"


def open_document(path: str | Path | None) -> DilemmaDocument:
    """A dilemma document (None: the built-in one), its warnings on `DilemmaDocument.warnings` only (not
    issued as Python warnings). A file that is not a dilemma document is a UsageError naming it."""
    from ebtui.core.dilemmas import DilemmaWarning, DocumentError, load_document

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DilemmaWarning)  # the same messages are on the document
        try:
            return load_document(path)
        except DocumentError as exc:
            raise UsageError(str(exc)) from None


def find_dilemma(dilemmas: Sequence[Dilemma], wanted: str, where: str) -> Dilemma:
    """The dilemma with id `wanted` (exactly, else ignoring case); a UsageError listing the ids otherwise."""
    for d in dilemmas:
        if d.id == wanted:
            return d
    for d in dilemmas:
        if d.id.lower() == wanted.lower():
            return d
    known = ", ".join(d.id for d in dilemmas)
    raise UsageError(f"unknown dilemma {wanted!r} in {where} (known: {known})")


def app_dilemmas(path: Path | None) -> list[Dilemma]:
    """The dilemmas of a document for the app (None: the built-in ones, from their cache when it matches,
    else parsed and cached for the next start). A bad document is a UsageError; warns DilemmaWarning."""
    from ebtui.core.dilemmas import DocumentError, load_dilemmas

    if path is None:
        cached = cached_builtin_dilemmas()
        if cached is not None:
            return cached
    try:
        dilemmas = load_dilemmas(path)
    except DocumentError as exc:
        raise UsageError(str(exc)) from None
    if path is None:
        write_builtin_cache(dilemmas)
    return dilemmas


def builtin_key(doc: Path) -> str:
    """What a cache of the built-in dilemmas must match: the document's bytes and the Dilemma record's fields."""
    h = hashlib.sha256(doc.read_bytes())
    h.update(",".join(Dilemma.model_fields).encode())
    return h.hexdigest()


def user_cache_dir() -> Path:
    from ebtui.locations import user_cache_dir

    return user_cache_dir()


def builtin_cache_paths() -> list[Path]:
    from ebtui.locations import package_data_dir

    return [package_data_dir() / PACKAGED_CACHE, user_cache_dir() / PACKAGED_CACHE]


def cached_builtin_dilemmas() -> list[Dilemma] | None:
    """The built-in dilemmas from a cache that matches the shipped document, or None (then parse it)."""
    from ebtui.locations import builtin_document

    doc = builtin_document()
    try:
        key = builtin_key(doc)
    except OSError:
        return None
    for path in builtin_cache_paths():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("key") == key:
                # the cache holds no path (it ships in the package): the source is where the document is now
                return [Dilemma.model_validate({**d, "source": str(doc)}) for d in data["dilemmas"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return None


def write_builtin_cache(dilemmas: list[Dilemma], path: Path | None = None) -> Path | None:
    """Keep the parsed built-in dilemmas for the next start (atomically; a cache that cannot be written is
    only a slower next start, never an error)."""
    from ebtui.locations import builtin_document

    path = path or builtin_cache_paths()[1]
    try:
        data = {"key": builtin_key(builtin_document()),
                "dilemmas": [d.model_dump(mode="json", exclude={"source"}) for d in dilemmas]}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return None
    return path
