"""Crash safety: `kill -9` a tournament at random moments, again and again; after every kill each saved
file parses, the index is rebuilt when needed, and a resume finishes the schedule with nothing lost or
repeated (phases completed before a kill are kept exactly as they were)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PHASE_ORDER, PhaseStatus, RoundStatus, Tournament
from ebtui.core.tournament import make_schedule
from ebtui.core.tournament.config import load_tournament_config
from tests.support.factories import open_store
from tests.support.reliability_helpers import load_round_files, round_files, trio_tournament


def setup_tournament(tmp_path: Path, dilemmas: int) -> tuple[list[str], Path]:
    # ~0.1 s a call: a tournament takes a few seconds, so a kill lands mid-phase as often as not
    cmd = trio_tournament(tmp_path, "crash", dilemmas=dilemmas, concurrency=4, latency_s=0.05,
                          tokens_per_second=2000.0, price_in=1.0, price_out=4.0)
    return cmd, tmp_path / "t.toml"


def check_files_parse(store: Path) -> None:
    """Every saved file parses: round files, tournament files, and index.json when it exists."""
    for p in round_files(store):
        json.loads(p.read_text(encoding="utf-8"))
    load_round_files(store)
    tdir = store / "tournaments"
    for p in sorted(tdir.glob("*.json")) if tdir.is_dir() else []:
        if not p.name.startswith("."):
            Tournament.model_validate_json(p.read_text(encoding="utf-8"))
    index = store / "index.json"
    if index.exists():
        data = json.loads(index.read_text(encoding="utf-8"))
        assert isinstance(data, dict)


def kill_at_random_moments(tmp_path: Path, kills: int, dilemmas: int, seed: int) -> None:
    rng = random.Random(seed)
    cmd, cfg_path = setup_tournament(tmp_path, dilemmas)
    store = tmp_path / "store"
    env = {**os.environ, "EBTUI_STORE_FSYNC": "0"}
    cfg = load_tournament_config(cfg_path)
    tid = cfg.tournament_id()
    schedule = make_schedule(cfg, load_dilemmas())
    expected_ids = {sr.round_id(tid) for sr in schedule.rounds}
    expected_keys = {sr.schedule_key for sr in schedule.rounds}

    kept: dict[tuple[str, str], tuple[object, str]] = {}  # completed phases, as first seen on disk
    killed = 0
    for i in range(kills):
        resume = ["--resume", tid] if i else []
        proc = subprocess.Popen([*cmd, *resume], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        try:
            # wait until the run is under way (it has written something), then kill it at a random moment
            deadline = time.monotonic() + 30
            while not round_files(store) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 1.2))
            if proc.poll() is not None:
                break  # it finished before the kill landed: nothing left to interrupt
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
        killed += 1

        # every saved file still parses
        check_files_parse(store)
        rounds = load_round_files(store)
        assert {r.id for r in rounds} <= expected_ids  # no stray or duplicated round
        assert len({r.schedule_key for r in rounds}) == len(rounds)
        # phases completed before this kill are exactly as they were after earlier kills
        for r in rounds:
            for p in r.phases:
                if p.status == PhaseStatus.COMPLETE:
                    seen = kept.setdefault((r.id, p.phase_type.value), (p.timestamp, p.response))
                    assert seen == (p.timestamp, p.response), (r.id, p.phase_type)
        # the index catches up with the files on open (it may lag behind them after a kill) ...
        rs = open_store(store)
        assert {e["id"] for e in rs.query(tournament=tid)} == {r.id for r in rounds}
        rs.close()
        # ... and a lost or torn index is rebuilt from the round files
        if i % 2 == 0 and (store / "index.json").exists():
            raw = (store / "index.json").read_bytes()
            (store / "index.json").write_bytes(raw[: len(raw) // 2])
            rs = open_store(store)
            assert {e["id"] for e in rs.query(tournament=tid)} == {r.id for r in rounds}
            rs.close()
            json.loads((store / "index.json").read_text(encoding="utf-8"))
    assert killed >= 1

    res = subprocess.run([*cmd, "--resume", tid], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    check_files_parse(store)
    after = load_round_files(store)
    assert {r.id for r in after} == expected_ids  # nothing lost
    assert sorted(r.schedule_key for r in after) == sorted(expected_keys)  # nothing repeated
    assert len(round_files(store)) == len(schedule)
    for r in after:
        assert r.status == RoundStatus.COMPLETE, (r.id, r.error)
        assert [p.phase_type for p in r.phases] == list(PHASE_ORDER)
        assert all(p.status == PhaseStatus.COMPLETE and p.response for p in r.phases)
        for p in r.phases:
            if (r.id, p.phase_type.value) in kept:
                assert kept[(r.id, p.phase_type.value)] == (p.timestamp, p.response)
    rs = open_store(store)
    assert len(rs.query(tournament=tid, status="complete")) == len(schedule)
    assert rs.load_tournament(tid).status.value == "complete"
    assert rs.rebuild_index() == len(schedule)


def test_kill_9_at_random_moments_then_resume(tmp_path: Path) -> None:
    kill_at_random_moments(tmp_path, kills=2, dilemmas=2, seed=9)


@pytest.mark.slow
def test_kill_9_ten_times_then_resume(tmp_path: Path) -> None:
    kill_at_random_moments(tmp_path, kills=10, dilemmas=4, seed=10)
