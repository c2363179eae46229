"""What in a store's rounds/ folder cannot be read, found afresh each time it is asked. Nothing here ever
deletes or rewrites a round file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import ValidationError

from ebtui.core.records import Round
from ebtui.core.store.files import unreadable_reason
from ebtui.core.store.index import IndexMixin


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


def unreadable_entries(store: IndexMixin, *, deep: bool = True) -> list[tuple[str, str]]:
    """Every entry in `rounds/` the store cannot read, as (path, reason), looked for afresh on every call: a
    folder listing compared with the index, reading only the entries the index lacks — and with `deep`, one
    stat per entry, so a file changed in place since it was indexed (truncated) is read again too (about
    30 ms per 1,000 rounds). An entry found unreadable is left out of the store's queries from then on; it
    is never deleted."""
    out: list[tuple[str, str]] = []
    with store._lock:
        store._ensure_loaded()
        entries = store._entries
        assert entries is not None
        try:
            it = os.scandir(store.rounds_dir)
        except FileNotFoundError:
            return out
        except OSError as exc:
            return [(str(store.rounds_dir), unreadable_reason(exc))]
        suspects: list[str] = []
        with it:
            for de in it:
                name = de.name
                if name[0] == "." or not name.endswith(".json"):
                    continue
                known = entries.get(name[:-5])
                if known is None:
                    suspects.append(name)
                elif deep:
                    try:
                        st = de.stat()
                    except OSError:
                        suspects.append(name)
                        continue
                    if st.st_mtime_ns != known.get("mtime_ns") or st.st_size != known.get("size"):
                        suspects.append(name)
        for name in sorted(suspects):
            rid = name[:-5]
            path = store.rounds_dir / name
            reason = why_unreadable(path, rid)
            if reason is None:
                continue
            out.append((str(path), reason))
            store._problem(str(path), reason)
            if entries.pop(rid, None) is not None:
                store._dirty.add(rid)
    return out
