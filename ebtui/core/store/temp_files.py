"""Temporary files a killed writer leaves behind (atomic-write temps, index markers, preflight probes), and
removing them. Used by the index after a full check and by `ebtui store check`."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

#: the name prefix of an index marker (`.unindexed-<pid>-<n>`): a round file written but not yet indexed
MARKER_PREFIX = ".unindexed-"
#: a preflight probe file (no pid in its name) older than this is left over from a killed process
PROBE_STALE_S = 60.0


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def stale_temp_files(root: Path) -> list[Path]:
    """Temporary files a killed process left: atomic-write temps (`.<name>.<pid>.<thread>.tmp`) and index
    markers (`.unindexed-<pid>-<n>`) of processes that are gone, and preflight probes older than a minute."""
    out: list[Path] = []
    now = time.time()
    for folder in (root, root / "rounds", root / "tournaments"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.startswith("."):
                continue
            path = folder / name
            pid: int | None = None
            if name.endswith(".tmp"):
                parts = name.rsplit(".", 3)
                if len(parts) == 4 and parts[1].isdigit():
                    pid = int(parts[1])
            elif name.startswith(MARKER_PREFIX):
                head = name[len(MARKER_PREFIX):].split("-", 1)[0]
                pid = int(head) if head.isdigit() else None
            elif name.startswith(".ebtui-probe-"):
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime > PROBE_STALE_S:
                        out.append(path)
                continue
            if pid is not None and not _pid_alive(pid):
                out.append(path)
    return sorted(out)


def remove_stale_temp_files(root: Path) -> list[Path]:
    """Remove what `stale_temp_files` finds; the paths removed."""
    removed = []
    for path in stale_temp_files(root):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            continue
        removed.append(path)
    return removed
