"""The BackgroundSaver gives up a write whose round has a newer snapshot waiting (before its fsync and
rename), but never two writes of a round in a row; the file only ever holds a whole snapshot."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.store import ResultsStore, WriteAbandoned
from tests.support.factories import make_round


class _GatedStore(ResultsStore):
    """Each round-file write waits at a gate (after serialising, before the file is written)."""

    def __init__(self, *a: object, **kw: object) -> None:
        super().__init__(*a, **kw)  # type: ignore[arg-type]
        self.entered = threading.Semaphore(0)
        self.gate = threading.Semaphore(0)
        self.log: list[tuple[str, str]] = []

    def _write_round_file(self, path: Path, data: bytes) -> None:
        if path.parent == self.rounds_dir:
            self.entered.release()
            assert self.gate.acquire(timeout=10)
        version = json.loads(data)["error"]
        try:
            super()._write_round_file(path, data)
        except WriteAbandoned:
            self.log.append(("abandoned", version))
            raise
        self.log.append(("written", version))


def _hand(bg: object, r: object, version: str) -> None:
    r.error = version  # type: ignore[attr-defined]
    bg.save_round(r)  # type: ignore[attr-defined]


def _writing_v1(root: Path, i: int, *, durable: bool = False) -> tuple[_GatedStore, Any, Any]:
    """A gated store whose background saver is writing version "v1" of round `i`, held at the gate:
    (store, saver, round)."""
    store = _GatedStore(root, durable=durable)
    bg = store.background_saver()
    r = make_round(i, text_size=20)
    _hand(bg, r, "v1")
    assert store.entered.acquire(timeout=5)
    return store, bg, r


def test_a_write_superseded_while_in_progress_is_given_up_and_the_newer_one_written(root: Path) -> None:
    store, bg, r = _writing_v1(root, 0, durable=True)  # v1 is being written
    _hand(bg, r, "v2")
    store.gate.release()  # v1 goes on, finds v2 waiting: given up before its rename
    assert store.entered.acquire(timeout=5)
    store.gate.release()
    bg.landed(r.id).result(5)
    assert store.log == [("abandoned", "v1"), ("written", "v2")] and bg.abandoned == 1
    assert ResultsStore(root).load_round(r.id).error == "v2"
    assert not [p.name for p in store.rounds_dir.iterdir() if p.name.endswith(".tmp")]  # no leftovers
    store.close()


def test_never_two_given_up_in_a_row(root: Path) -> None:
    store, bg, r = _writing_v1(root, 1)
    _hand(bg, r, "v2")
    store.gate.release()  # v1 given up
    assert store.entered.acquire(timeout=5)  # v2 in progress
    _hand(bg, r, "v3")
    store.gate.release()  # v2 is written all the same: the round's previous write was given up
    assert store.entered.acquire(timeout=5)
    store.gate.release()
    bg.landed(r.id).result(5)
    assert store.log == [("abandoned", "v1"), ("written", "v2"), ("written", "v3")]
    assert ResultsStore(root).load_round(r.id).error == "v3"
    store.close()


def test_a_waiter_for_a_given_up_snapshot_is_answered_by_the_newer_write(root: Path) -> None:
    store, bg, r = _writing_v1(root, 2)
    early = bg.landed(r.id)  # waits for v1
    _hand(bg, r, "v2")
    store.gate.release()
    assert store.entered.acquire(timeout=5)
    assert not early.done()  # v1 was given up: not on disk, so not reported landed
    store.gate.release()
    assert early.result(5) == store.round_path(r.id)
    assert ResultsStore(root).load_round(r.id).error == "v2"
    store.close()


def test_another_rounds_pending_snapshot_does_not_give_up_a_write(root: Path) -> None:
    store = _GatedStore(root, durable=False)
    bg = store.background_saver()
    a, b = make_round(3, text_size=20), make_round(4, text_size=20)
    _hand(bg, a, "a1")
    assert store.entered.acquire(timeout=5)
    _hand(bg, b, "b1")
    store.gate.release()
    assert store.entered.acquire(timeout=5)
    store.gate.release()
    bg.flush(5)
    assert store.log == [("written", "a1"), ("written", "b1")] and bg.abandoned == 0
    store.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"
