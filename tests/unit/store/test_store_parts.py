"""The parts ResultsStore is composed of (lock, text cache, index, round files), each on its own, and the
store's attributes that live in a part."""

from __future__ import annotations

import fcntl
import threading
from pathlib import Path

import pytest

from ebtui.core.store import ResultsStore
from ebtui.core.store.files import TextCache
from ebtui.core.store.index import StoreIndex
from ebtui.core.store.lock import StoreLock
from ebtui.core.store.round_files import score_override
from tests.support.factories import make_round, open_store


def _flock_free(path: Path) -> bool:
    """Whether another open file description can take the flock on `path` now."""
    with path.open("rb") as probe:  # closing it releases what it took
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def test_the_lock_creates_the_root_calls_on_open_once_and_holds_the_flock_while_writing(tmp_path: Path) -> None:
    root = tmp_path / "new" / "store"
    lock = StoreLock(root)
    opened: list[bool] = []
    lock.on_open = lambda: opened.append(root.is_dir())
    with lock.writing():
        with lock.writing():  # re-entrant within the instance
            assert not _flock_free(lock.path)
        assert not _flock_free(lock.path)  # still held by the outer level
    assert _flock_free(lock.path)
    with lock.writing():
        pass
    assert opened == [True]  # once, after the root was made and before the lock file was opened
    lock.close()
    assert _flock_free(lock.path)


def test_the_lock_keeps_other_threads_out_while_writing(tmp_path: Path) -> None:
    lock = StoreLock(tmp_path)
    entered = threading.Event()

    def other() -> None:
        with lock.mutex:
            entered.set()

    with lock.writing():
        t = threading.Thread(target=other)
        t.start()
        assert not entered.wait(0.1)
    assert entered.wait(5)
    t.join()
    lock.close()


def test_the_text_cache_needs_the_same_stamp_and_drops_the_least_recently_used() -> None:
    cache = TextCache()
    cache.CACHE_SIZE = 2
    cache.put("a", (1, 1, 1), b"A")
    cache.put("b", (1, 2, 1), b"B")
    assert cache.get("a", (1, 1, 1)) == b"A"  # a is now the most recently used
    assert cache.get("a", (1, 9, 1)) is None  # the file changed since
    cache.put("c", (1, 3, 1), b"C")
    assert cache.get("b", (1, 2, 1)) is None
    assert cache.get("a", (1, 1, 1)) == b"A"
    assert cache.get("c", (1, 3, 1)) == b"C"


def test_the_store_attributes_kept_by_its_parts_are_read_and_set_there(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path, durable=False)
    assert ResultsStore.FLUSH_MIN_SAVES == StoreIndex.FLUSH_MIN_SAVES
    assert ResultsStore.CACHE_SIZE == TextCache.CACHE_SIZE
    store.FLUSH_MIN_SAVES = 3
    store.FLUSH_SECONDS = 3600
    assert store.index.FLUSH_MIN_SAVES == 3 and StoreIndex.FLUSH_MIN_SAVES != 3
    for i in range(3):
        store.save_round(make_round(i, text_size=10))
    assert store.index_writes == 1  # the third save reached the store's own threshold
    store.durable = True
    assert store.index.durable and store.files.durable
    assert (store.rounds_dir, store.index_path, store.tournaments_dir, store.lock_path) == (
        tmp_path / "rounds", tmp_path / "index.json", tmp_path / "tournaments", tmp_path / ".lock")
    store.close()


def test_unreadable_files_are_problems_of_the_index_and_leave_its_queries(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    keep, spoil = make_round(0, text_size=10), make_round(1, text_size=10)
    store.save_round(keep)
    store.save_round(spoil)
    store.round_path(spoil.id).write_text("{ truncated")
    found = store.unreadable()
    assert [p for p, _ in found] == [str(store.round_path(spoil.id))]
    assert store.problems == found == store.index.problems
    assert [e["id"] for e in store.query()] == [keep.id]
    store.close()


def test_the_shallow_check_finds_unindexed_files_from_the_trusted_note_alone(tmp_path: Path) -> None:
    """`unreadable(deep=False)` (a warm report's check) on a store whose index.check.json is trusted takes the
    index's ids from the note and never reads index.json — and finds the same unreadable files as after
    loading the index; a file changed in place is left to the deep check in both."""
    store = open_store(tmp_path)
    rounds = [make_round(i, text_size=10) for i in range(4)]
    for r in rounds:
        store.save_round(r)
    (store.rounds_dir / "r-stray.json").write_text("not json")  # never indexed
    (store.rounds_dir / ".hidden.json").write_text("x")
    store.close()
    first = open_store(tmp_path)
    first.rebuild_index()  # a full check: the note now counts the stray file
    first.close()
    first.round_path(rounds[1].id).write_text("{ truncated")  # indexed, then spoiled in place

    light = open_store(tmp_path)
    found = light.unreadable(deep=False)
    assert light.index._entries is None  # index.json not read
    assert [p for p, _ in found] == [str(light.rounds_dir / "r-stray.json")]
    assert light.problems == found
    light.close()
    loaded = open_store(tmp_path)
    loaded.index.ensure_loaded()
    assert loaded.unreadable(deep=False) == found
    assert {p for p, _ in loaded.unreadable()} == {p for p, _ in found} | {str(loaded.round_path(rounds[1].id))}
    loaded.close()


def test_a_score_override_is_checked_before_the_store_is_touched() -> None:
    with pytest.raises(ValueError, match="whole number from 1 to 10"):
        score_override("r-x", "a", "consistency", 11, "", "")
    build = score_override("r-x", "a", "consistency", None, "", "")
    with pytest.raises(ValueError, match="no override to clear"):
        build(make_round(0, text_size=10))
