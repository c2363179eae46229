"""Telling a killed round's writer from a live one."""

from __future__ import annotations

import os
import subprocess
import sys

from ebtui.core.liveness import interrupted, writer_alive, writer_stamp


def test_this_process_is_alive() -> None:
    stamp = writer_stamp()
    assert stamp[1] == os.getpid()
    assert writer_alive(stamp) is True
    assert not interrupted("running", stamp)


def test_a_finished_process_is_gone() -> None:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    stamp = [writer_stamp()[0], int(proc.stdout), None]
    assert writer_alive(stamp) is False
    assert interrupted("running", stamp)
    assert not interrupted("complete", stamp)  # only a running round can be interrupted


def test_a_reused_pid_is_not_the_writer() -> None:
    host, pid, ticks = writer_stamp()
    if ticks is None:  # no /proc here: start times cannot be compared
        return
    assert writer_alive([host, pid, ticks + 1]) is False


def test_unknown_when_it_cannot_be_told() -> None:
    assert writer_alive(None) is None
    assert writer_alive(["another-host.example", 1, None]) is None
    assert writer_alive(["x"]) is None
    assert not interrupted("running", None)
