"""Checks made before any model call is spent, each failing with one line naming what is wrong and where.

The front ends run them after loading the document and resolving the models (those raise their own
one-line errors) and before the first call: a round whose answers cannot be saved must not be paid for.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ebtui.core.views import numbers as num


class PreflightError(Exception):
    """One line: what is wrong and where."""


def _probe(directory: Path) -> None:
    """Create and remove a file in `directory` (a real write: permissions, read-only mounts, a full disk)."""
    fd, name = tempfile.mkstemp(prefix=".ebtui-probe-", dir=directory)
    try:
        os.write(fd, b"ebtui")
    finally:
        os.close(fd)
        os.unlink(name)
    _remove_stale_probes(directory)


#: a probe older than this was left by a process killed between creating and removing it
STALE_PROBE_S = 60.0


def _remove_stale_probes(directory: Path) -> None:
    import time

    now = time.time()
    try:
        names = [n for n in os.listdir(directory) if n.startswith(".ebtui-probe-")]
    except OSError:
        return
    for name in names:
        path = directory / name
        try:
            if now - path.stat().st_mtime > STALE_PROBE_S:
                path.unlink()
        except OSError:
            continue


def _marked_read_only(path: Path) -> bool:
    """No write permission bit at all (chmod a-w): read-only by intent, also for root, who could write."""
    try:
        return path.stat().st_mode & 0o222 == 0
    except OSError:
        return False


def _reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    return exc.strerror or type(exc).__name__


def _write_probe(folder: Path, problem: str, read_only: str) -> None:
    """Raise PreflightError("<problem>: <why>") unless a file can really be written in `folder`."""
    if _marked_read_only(folder):
        raise PreflightError(f"{problem}: {read_only}")
    try:
        _probe(folder)
    except OSError as exc:
        raise PreflightError(f"{problem}: {_reason(exc)}") from None


def check_store_writable(root: str | os.PathLike[str]) -> Path:
    """Raise PreflightError unless the results store at `root` can be written (created if it is missing).

    Nothing is created here: a missing store is checked through its nearest existing parent. Existing
    sub-folders (rounds, tournaments, reports) and files (index.json, .lock) are checked too.
    """
    root = Path(root).expanduser()
    shown = str(root)
    if root.exists() and not root.is_dir():
        raise PreflightError(f"results store {shown} is not a directory")
    if not root.exists():
        parent = root.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise PreflightError(f"results store {shown} cannot be created: {parent} is not a directory")
        _write_probe(parent, f"results store {shown} cannot be created in {parent}", "it is read-only")
        return root
    # a real write in the store's own folder only: a probe inside rounds/ would change its mtime, which the
    # store's fast open takes as "round files changed" (a full re-check of the index)
    _write_probe(root, f"results store directory {root} is not writable", "it is read-only (no write permission)")
    for d in (root / sub for sub in ("rounds", "tournaments", "reports")):
        if not d.exists():
            continue
        if not d.is_dir():
            raise PreflightError(f"results store {shown}: {d} is not a directory")
        if _marked_read_only(d) or not os.access(d, os.W_OK | os.X_OK):
            raise PreflightError(f"results store directory {d} is not writable: permission denied")
    for name in ("index.json", ".lock"):
        f = root / name
        if f.exists() and (not os.access(f, os.W_OK) or _marked_read_only(f)):
            raise PreflightError(f"results store file {f} is not writable: permission denied")
    return root


def command_hint(words: Iterable[str], options: Iterable[tuple[str, object]]) -> str:
    """A command line to paste as is: the words, then each option given (None/False left out, True a flag),
    every value shell-quoted."""
    parts = [shlex.quote(str(w)) for w in words]
    for flag, value in options:
        if value is None or value is False:
            continue
        parts.append(flag)
        if value is not True:
            parts.append(shlex.quote(str(value)))
    return " ".join(parts)


#: a round file's bytes per token of its prompts and answers: ~4 characters a token, plus the JSON's
#: indentation and escapes (measured on scripted rounds: see tests/reliability/test_faults_disk.py)
BYTES_PER_TOKEN = 5.0
#: per round besides its text: the index document, the note's columns, the judgment's parsed fields
BYTES_PER_ROUND = 8192
#: headroom kept free besides (the index is rewritten whole, beside the old one, before the rename)
HEADROOM_BYTES = 512 << 10


def store_bytes_needed(rounds: int, tokens: int) -> int:
    """About how many bytes `rounds` rounds of `tokens` tokens (prompts and answers together) take."""
    return int(tokens * BYTES_PER_TOKEN) + rounds * BYTES_PER_ROUND + HEADROOM_BYTES


def _mb(n: float) -> str:
    return f"{num.shown(n / 1e6, ',.1f')} MB" if n >= 1e5 else f"{num.shown(n / 1e3, ',.0f')} kB"


def check_free_space(root: str | os.PathLike[str], needed: int, what: str) -> int:
    """Raise PreflightError unless the disk of the store at `root` (or its nearest existing parent) has
    `needed` bytes free; the bytes free."""
    path = Path(root).expanduser()
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        free = shutil.disk_usage(path).free
    except OSError:
        return -1  # cannot tell: the write checks still hold
    if free < needed:
        raise PreflightError(f"not enough space for the results store {root}: {what} needs about "
                             f"{_mb(needed)} and {_mb(free)} is free on its disk")
    return free
