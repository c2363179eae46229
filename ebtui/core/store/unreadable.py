"""What in a store's rounds/ folder cannot be read, found afresh each time it is asked. Nothing here ever
deletes or rewrites a round file."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Set
from pathlib import Path

from pydantic import ValidationError

from ebtui.core.records import Round
from ebtui.core.store.entries import IndexDoc
from ebtui.core.store.files import unreadable_reason


def why_unreadable(path: Path, rid: str) -> str | None:
    """Why the round file at `path` cannot be used (None: it can, or it is gone). Never blocks: a FIFO or a
    device is not opened."""
    try:
        st = os.stat(path)  # follows links: a loop is ELOOP, a dangling link FileNotFoundError
    except FileNotFoundError:
        return "dangling symbolic link" if os.path.islink(path) else None
    except OSError as exc:
        return unreadable_reason(exc)
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    try:
        round_ = Round.model_validate_json(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValidationError, ValueError) as exc:
        return unreadable_reason(exc)
    if round_.id != rid:
        return f"file name does not match round id {round_.id!r}"
    return None


def unreadable_entries(rounds_dir: Path, known: Mapping[str, IndexDoc] | Set[str], *,
                       deep: bool = True) -> list[tuple[str, str]]:
    """Every entry in `rounds_dir` that cannot be read, as (path, reason), looked for afresh on every call: a
    folder listing compared with the index documents `known`, reading only the entries the index lacks — and
    with `deep`, one stat per entry, so a file changed in place since it was indexed (truncated) is read again
    too (about 30 ms per 1,000 rounds). A folder that cannot be listed is one entry: (rounds_dir, reason).
    Without `deep` the index's ids suffice (`known` a set)."""
    out: list[tuple[str, str]] = []
    if not deep:  # the names alone (a listing without DirEntry objects: a third of the time)
        try:
            names = os.listdir(rounds_dir)
        except FileNotFoundError:
            return out
        except OSError as exc:
            return [(str(rounds_dir), unreadable_reason(exc))]
        return _reasons(rounds_dir, [n for n in names if n[:1] != "." and n.endswith(".json") and
                                     n[:-5] not in known])
    try:
        it = os.scandir(rounds_dir)
    except FileNotFoundError:
        return out
    except OSError as exc:
        return [(str(rounds_dir), unreadable_reason(exc))]
    suspects: list[str] = []
    with it:
        for de in it:
            name = de.name
            if name[0] == "." or not name.endswith(".json"):
                continue
            rid = name[:-5]
            if rid not in known:
                suspects.append(name)
            elif isinstance(known, Mapping):
                doc = known[rid]
                try:
                    st = de.stat()
                except OSError:
                    suspects.append(name)
                    continue
                if st.st_mtime_ns != doc.get("mtime_ns") or st.st_size != doc.get("size"):
                    suspects.append(name)
    return _reasons(rounds_dir, suspects)


def _reasons(rounds_dir: Path, suspects: list[str]) -> list[tuple[str, str]]:
    """(path, reason) for each suspect entry that cannot be read, in name order."""
    out: list[tuple[str, str]] = []
    for name in sorted(suspects):
        path = rounds_dir / name
        reason = why_unreadable(path, name[:-5])
        if reason is not None:
            out.append((str(path), reason))
    return out
