"""The round engine with a real ResultsStore: saves go through the store's background writer, the event
loop never waits for the disk, and RoundFinished (or a cancellation) still means "on disk"."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.events import PhaseFinished, RoundFinished
from ebtui.core.records import PHASE_ORDER, PhaseStatus, Round, RoundStatus
from ebtui.core.round import play_round, run_round
from ebtui.core.store import ResultsStore, StoreError
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import open_store, round_spec, scripted_clients


class SlowDiskStore(ResultsStore):
    """Every write takes `delay` seconds (a slow, fsyncing disk), and records what state it wrote."""

    def __init__(self, root: Path, delay: float) -> None:
        super().__init__(root, durable=False)
        self.delay = delay
        self.written: list[tuple[str, int]] = []  # (round status, phases complete)

    def save_round(self, round_: Round) -> Path:
        time.sleep(self.delay)
        done = sum(p.status == PhaseStatus.COMPLETE for p in round_.phases)
        self.written.append((str(round_.status), done))
        return super().save_round(round_)


async def test_round_finished_means_the_whole_round_is_on_disk(tmp_path: Path) -> None:
    store = SlowDiskStore(tmp_path / "s", delay=0.02)
    seen: list[Round] = []
    async for ev in run_round(round_spec(), scripted_clients(), store):
        if isinstance(ev, RoundFinished):
            # read back by another instance (another process would see the same)
            seen.append(ResultsStore(tmp_path / "s").load_round(ev.round.id))
    assert len(seen) == 1
    r = seen[0]
    assert r.status == RoundStatus.COMPLETE and r.judgment is not None
    assert [p.phase_type for p in r.phases] == list(PHASE_ORDER)
    assert store.written[-1] == ("complete", 5)
    # states are written in order: the number of finished phases never goes down
    done = [d for _, d in store.written]
    assert done == sorted(done)
    store.close()


async def test_a_slow_disk_does_not_block_the_event_loop(tmp_path: Path) -> None:
    store = SlowDiskStore(tmp_path / "s", delay=0.3)  # each write blocks its thread for 300 ms
    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = loop.time()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    cl = scripted_clients(alpha=ScriptedClient("alpha", tokens_per_second=2000), beta=ScriptedClient("beta", tokens_per_second=2000))
    r = await play_round(round_spec(), cl, store)
    stop.set()
    await tick
    assert r.status == RoundStatus.COMPLETE
    assert len(gaps) > 10
    # written from the writer thread: the loop kept ticking (a save in place would stall it 300 ms)
    assert max(gaps) < 0.2, max(gaps)
    # and fewer writes than hand-offs: snapshots made during a write were coalesced
    assert len(store.written) < 11
    assert ResultsStore(tmp_path / "s").load_round(r.id).status == RoundStatus.COMPLETE
    store.close()


async def test_cancelling_leaves_the_round_incomplete_on_disk(tmp_path: Path) -> None:
    store = SlowDiskStore(tmp_path / "s", delay=0.01)
    slow = scripted_clients(beta=ScriptedClient("beta", tokens_per_second=50))
    rid: list[str] = []

    async def consume() -> None:
        async for ev in run_round(round_spec(), slow, store):
            if isinstance(ev, PhaseFinished):
                rid.append(ev.round_id)

    task = asyncio.create_task(consume())
    for _ in range(400):
        await asyncio.sleep(0.01)
        if rid:
            break
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # no flush needed: the engine waited for its last write before the cancellation propagated
    r = ResultsStore(tmp_path / "s").load_round(rid[0])
    assert r.status == RoundStatus.INCOMPLETE and r.error == "cancelled"
    assert r.phase("presentation").status == PhaseStatus.COMPLETE
    assert any(p.status == PhaseStatus.CANCELLED for p in r.phases)
    store.close()


async def test_a_store_that_cannot_write_stops_the_round_with_its_error(tmp_path: Path) -> None:
    class Broken(ResultsStore):
        def save_round(self, round_: Round) -> Any:
            raise StoreError(f"{self.round_path(round_.id)}: read-only file system")

    store = Broken(tmp_path / "s", durable=False)
    with pytest.raises(StoreError, match="read-only"):
        await play_round(round_spec(), scripted_clients(), store)
    store.close()


async def test_rounds_one_after_another_each_land_before_the_next(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    ids = []
    for _ in range(5):
        r = await play_round(round_spec(), scripted_clients(), store)
        ids.append(r.id)
        assert ResultsStore(tmp_path / "s").load_round(r.id).status == RoundStatus.COMPLETE
    store.close()
    assert [e["id"] for e in ResultsStore(tmp_path / "s").query()] == ids
