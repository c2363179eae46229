"""Child processes in tests: wait for a condition, start a command that is always reaped, kill -9 it once
something has happened."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition",
             poll: float = 0.02) -> Any:
    """The first true value of `predicate()`, polled every `poll` seconds; the test fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    pytest.fail(f"timed out waiting for {what}")


@contextmanager
def started(cmd: list[str], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """`cmd` running (subprocess.Popen with `popen`), killed and reaped on leaving if it still runs."""
    proc = subprocess.Popen(cmd, **popen)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def kill_9_when(proc: subprocess.Popen[Any], ready: Callable[[], bool], timeout: float, what: str) -> None:
    """SIGKILL `proc` as soon as `ready()` holds (polled every 50 ms); the test fails if the process ends first
    or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
        if ready():
            break
    else:
        pytest.fail(f"{what} before the run ended" if proc.poll() is not None else f"timed out waiting: {what}")
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
