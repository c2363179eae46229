"""Is the process that was writing a round still alive?

A round is saved with status "running" while it plays. If its process is killed (kill -9, a crash, a
closed terminal) the file stays "running" forever; readers must show it as interrupted, that is
incomplete, and `run_round(..., resume=round)` can continue it. The round engine stamps each round it
plays with its writer (host, pid, process start time); a reader on the same host checks that stamp.
"""

from __future__ import annotations

import functools
import os
import socket

WRITER_KEY = "writer"  # the field of Round.settings (RoundSettings.writer) holding writer_stamp()


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux /proc), so a reused pid is not mistaken
    for the writer; None where /proc is not available."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    try:
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


@functools.cache
def _host() -> str:
    return socket.gethostname()


def writer_stamp() -> list[object]:
    """This process, as a round's writer: [host, pid, start ticks or None]."""
    pid = os.getpid()
    return [_host(), pid, _start_ticks(pid)]


def writer_alive(stamp: object) -> bool | None:
    """True/False for a writer on this host; None when it cannot be told (no stamp, another host)."""
    if not isinstance(stamp, list | tuple) or len(stamp) != 3:
        return None
    host, pid, ticks = stamp
    if host != _host() or not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # exists, owned by someone else
    if ticks is not None:
        now = _start_ticks(pid)
        if now is not None and now != ticks:
            return False  # the pid was reused by another process
    return True


def interrupted(status: str, stamp: object) -> bool:
    """A round saved as running whose writer is known to be gone."""
    return str(status) == "running" and writer_alive(stamp) is False
