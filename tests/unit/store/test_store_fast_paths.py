"""The store's fast paths keep its guarantees: a trusted open (no stat of every round file), the light
`load_rounds` before the index is parsed, and the BackgroundSaver (one writer thread, coalescing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.records import Round, RoundStatus
from ebtui.core.store import BackgroundSaver, ResultsStore, StoreError
from ebtui.core.store.index import StoreIndex
from tests.support.factories import make_round, open_store
from tests.support.paths import subprocess_env


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "store"


def _fill(root: Path, n: int = 12) -> list[Round]:
    rounds = [
        make_round(i, team_a=("alpha", "beta")[i % 2], team_b=("beta", "gamma")[i % 2],
                   dilemma=("d1", "d2", "d3")[i % 3], tournament=("t1", None)[i % 2], text_size=20,
                   status=(RoundStatus.COMPLETE, RoundStatus.INCOMPLETE)[i % 4 == 3])
        for i in range(n)
    ]
    s = open_store(root)
    for r in rounds:
        s.save_round(r)
    s.close()
    return rounds


def _no_scan(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every full check (the stat of every round file) instead of forbidding it."""
    scans: list[str] = []
    original = StoreIndex._scan

    def scan(self: StoreIndex) -> dict[str, tuple[int, int, int]]:
        scans.append(str(self.root))
        return original(self)

    monkeypatch.setattr(StoreIndex, "_scan", scan)
    return scans


def _ids(rows: list[Any]) -> list[str]:
    return [r["id"] if isinstance(r, dict) else r.id for r in rows]


# ------------------------------------------------------------------------------------------ trusted open


def test_a_store_closed_cleanly_reopens_without_the_full_check(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rounds = _fill(root)
    # a clean close leaves the note and no marker
    assert (root / "index.check.json").exists()
    assert not [n for n in os.listdir(root) if n.startswith(".unindexed-")]
    scans = _no_scan(monkeypatch)
    s = ResultsStore(root)
    assert _ids(s.query()) == [r.id for r in rounds]
    assert scans == []  # the index was trusted: no stat of every round file
    s.close()


def test_files_added_or_deleted_behind_the_stores_back_force_the_full_check(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds = _fill(root)
    late = make_round(50, dilemma="late", text_size=20)
    (root / "rounds" / f"{late.id}.json").write_text(late.model_dump_json(indent=2))
    (root / "rounds" / f"{rounds[1].id}.json").unlink()
    scans = _no_scan(monkeypatch)
    s = ResultsStore(root)
    ids = _ids(s.query())
    assert late.id in ids and rounds[1].id not in ids and len(ids) == len(rounds)
    assert len(scans) == 1
    s.close()
    # the full check noted that the index matches again: the next open trusts it
    assert _ids(ResultsStore(root).query()) == ids and len(scans) == 1


def test_unflushed_saves_of_a_live_writer_are_seen_by_a_new_instance(root: Path) -> None:
    writer = open_store(root)
    writer.save_round(make_round(0, text_size=20))
    writer.flush()  # index and note written ...
    writer.save_round(make_round(1, text_size=20))  # ... then a save the index lacks (marker left)
    assert [n for n in os.listdir(root) if n.startswith(".unindexed-")]
    reader = ResultsStore(root)
    assert len(reader.query()) == 2  # the marker forced the full check
    assert len(ResultsStore(root).load_rounds()) == 2  # the light path too
    writer.close()
    assert not [n for n in os.listdir(root) if n.startswith(".unindexed-")]
    assert len(ResultsStore(root).query()) == 2


def test_a_killed_writers_marker_forces_one_full_check_then_is_cleared(root: Path) -> None:
    _fill(root, 3)
    code = (
        "import os, sys\n"
        "from tests.support.factories import make_round\n"
        "from ebtui.core.store import ResultsStore\n"
        "s = ResultsStore(sys.argv[1], durable=False)\n"
        "s.save_round(make_round(7, dilemma='killed', text_size=20))\n"
        "os._exit(0)  # no close, no atexit: the index lacks round 7\n"
    )
    subprocess.run([sys.executable, "-c", code, str(root)], env=subprocess_env(), check=True)
    markers = [n for n in os.listdir(root) if n.startswith(".unindexed-")]
    assert markers  # left behind by the dead process
    s = ResultsStore(root)
    assert s.query(dilemma="killed")  # found by the full check
    assert not [n for n in os.listdir(root) if n.startswith(".unindexed-")]  # the dead writer's marker went
    s.close()


@pytest.mark.parametrize("note", ["", "{", "[]", '{"format": 1}', None])
def test_a_bad_or_stale_note_means_the_full_check(root: Path, monkeypatch: pytest.MonkeyPatch, note: str | None) -> None:
    rounds = _fill(root, 5)
    path = root / "index.check.json"
    if note is None:  # a note about an older index.json
        data = json.loads(path.read_text())
        data["index"][0] += 1
        path.write_text(json.dumps(data))
    else:
        path.write_text(note)
    scans = _no_scan(monkeypatch)
    s = ResultsStore(root)
    assert _ids(s.load_rounds()) == [r.id for r in rounds]
    assert _ids(s.query()) == [r.id for r in rounds]
    assert len(scans) == 1


def test_a_corrupt_index_is_still_rebuilt_even_with_a_note(root: Path) -> None:
    rounds = _fill(root, 4)
    (root / "index.json").write_text("{ broken")
    assert _ids(ResultsStore(root).query()) == [r.id for r in rounds]


# ------------------------------------------------------------------------------------------ light load_rounds


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"model": "alpha"},
        {"model": "beta", "role": "team_b"},
        {"dilemma": "d2", "model": "beta"},
        {"status": "incomplete"},
        {"status": ["complete", "incomplete"], "tournament": "t1", "newest_first": True, "limit": 3},
        {"judge": "gamma", "needs_review": False, "limit": 0},
        {"dilemma": "nope"},
    ],
)
def test_light_load_rounds_matches_the_index(root: Path, monkeypatch: pytest.MonkeyPatch, filters: dict) -> None:
    _fill(root)
    expected = _ids(ResultsStore(root).query(**filters))
    fresh = ResultsStore(root)
    got = fresh.load_rounds(**filters)
    assert _ids(got) == expected
    assert not fresh.index.loaded  # answered from the note's columns: index.json was not parsed
    assert all(isinstance(r, Round) for r in got)


def test_light_load_rounds_checks_filters_like_query(root: Path) -> None:
    _fill(root, 3)
    with pytest.raises(ValueError, match="role filter needs a model"):
        ResultsStore(root).load_rounds(role="judge")
    with pytest.raises(TypeError, match="unknown filter"):
        ResultsStore(root).load_rounds(colour="red")


def test_light_load_rounds_sees_an_index_another_instance_wrote_later(root: Path) -> None:
    _fill(root, 3)
    reader = ResultsStore(root)
    assert len(reader.load_rounds()) == 3
    writer = open_store(root)
    writer.save_round(make_round(30, text_size=20))
    writer.close()
    assert len(reader.load_rounds()) == 4


# ------------------------------------------------------------------------------------------ background saver


class _SlowStore(ResultsStore):
    """A store whose writes take a while (a slow disk), recording what it wrote."""

    delay = 0.05

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.written: list[tuple[str, str]] = []  # (round id, error text = the version marker)
        self.started = threading.Event()

    def save_round(self, round_: Round) -> Path:
        self.started.set()
        time.sleep(self.delay)
        self.written.append((round_.id, round_.error or ""))
        return super().save_round(round_)


def test_background_saver_writes_the_newest_snapshot_in_order_and_skips_superseded_ones(root: Path) -> None:
    store = _SlowStore(root, durable=False)
    bg = store.background_saver()
    assert store.background_saver() is bg  # one writer per store
    r = make_round(0, text_size=20)
    r.error = "v1"
    bg.save_round(r)
    assert store.started.wait(5)
    for v in range(2, 6):  # all handed over while the first write is still in progress
        r.error = f"v{v}"
        bg.save_round(r)
    bg.landed(r.id).result(5)
    # v1 (in progress), then straight to the newest; v2-v4 were superseded, never written
    assert [v for _, v in store.written] == ["v1", "v5"]
    assert ResultsStore(root).load_round(r.id).error == "v5"
    store.close()


def test_background_saver_writes_the_state_at_hand_off_not_later_mutations(root: Path) -> None:
    store = _SlowStore(root, durable=False)
    bg = store.background_saver()
    r = make_round(0, text_size=20, status=RoundStatus.RUNNING)
    bg.save_round(r)
    r.status = RoundStatus.COMPLETE  # the engine goes on mutating its round ...
    r.phases[0].response = "changed after the hand-off"  # ... and its phases in place
    store.flush()
    on_disk = ResultsStore(root).load_round(r.id)
    assert on_disk.status == RoundStatus.RUNNING
    assert on_disk.phases[0].response.startswith("Answer of")
    store.close()


def test_background_saver_lags_by_at_most_one_write(root: Path) -> None:
    store = _SlowStore(root, durable=False)
    store.delay = 0.2
    bg = store.background_saver()
    r = make_round(0, text_size=20)
    r.error = "v1"
    bg.save_round(r)
    assert store.started.wait(10)  # v1 is being written (a fixed sleep let a loaded machine coalesce v1 into v2)
    r.error = "v2"
    bg.save_round(r)
    # v2 lands without anyone waiting for it, as the very next write after v1 (the one in flight); the deadline
    # is generous because a loaded test machine stretches each 0.2 s write: what counts is the order of writes
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if store.written and store.written[-1][1] == "v2" and ResultsStore(root).load_round(r.id).error == "v2":
            break
        time.sleep(0.01)
    assert ResultsStore(root).load_round(r.id).error == "v2"
    assert [w[1] for w in store.written] == ["v1", "v2"]
    store.close()


def test_background_saver_failures_are_raised_to_the_saver_and_recorded(root: Path) -> None:
    class Failing(ResultsStore):
        def save_round(self, round_: Round) -> Path:
            raise StoreError(f"{self.round_path(round_.id)}: disk full")

    store = Failing(root, durable=False)
    bg = store.background_saver()
    r = make_round(0, text_size=20)
    bg.save_round(r)
    with pytest.raises(StoreError, match="disk full"):
        bg.landed(r.id).result(5)
    bg.save_round(r)
    bg.flush()
    with pytest.raises(StoreError, match="disk full"):  # the next hand-off raises it
        bg.save_round(r)
    assert bg.errors and "disk full" in bg.errors[0]
    store.close()


def test_close_writes_everything_pending_and_later_saves_write_in_place(root: Path) -> None:
    store = _SlowStore(root, durable=False)
    store.delay = 0.01
    bg = store.background_saver()
    rounds = [make_round(i, text_size=20) for i in range(8)]
    for r in rounds:
        bg.save_round(r)
    store.close()
    assert len(ResultsStore(root).query()) == 8
    assert isinstance(bg, BackgroundSaver) and bg.closed
    late = make_round(9, text_size=20)
    bg.save_round(late)  # after close: written at once
    assert ResultsStore(root).load_round(late.id).id == late.id


def test_many_threads_handing_off_lose_nothing(root: Path) -> None:
    store = open_store(root)
    bg = store.background_saver()
    rounds = [make_round(i, text_size=20) for i in range(40)]

    def hand_off(part: list[Round]) -> None:
        for r in part:
            for v in range(3):
                r.error = f"v{v}"
                bg.save_round(r)

    threads = [threading.Thread(target=hand_off, args=(rounds[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    again = ResultsStore(root)
    assert len(again.query()) == 40
    assert {r.error for r in again.load_rounds()} == {"v2"}
