"""Concurrent use: a human overrides scores (the store API, from another process than the tournament's)
while a tournament writes to the same store. No write is lost on either side: every round is saved, and
every override is in the round files and in the index afterwards — also overrides made on rounds the
tournament was still playing (and so still held in memory, about to save again)."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from ebtui.core.records import CRITERIA, RoundStatus
from ebtui.core.store import StoreError
from tests.support.factories import open_store
from tests.support.processes import started
from tests.support.reliability_helpers import TRIO, load_round_files, round_files, trio_tournament


def override_during_tournament(tmp_path: Path, dilemmas: int, seed: int) -> None:
    rng = random.Random(seed)
    cmd = trio_tournament(tmp_path, "concurrent", dilemmas=dilemmas, concurrency=4, latency_s=0.08,
                          tokens_per_second=3000.0)
    root = tmp_path / "store"
    env = {**os.environ, "EBTUI_STORE_FSYNC": "0"}
    with started(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        store = open_store(root)
        made: dict[tuple[str, str, str], tuple[int, str]] = {}  # (round, team, criterion) -> (value, note)
        on_running = 0
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(rng.uniform(0.0, 0.05))
            files = round_files(root)
            if not files:
                continue
            rid = rng.choice(files).stem
            team = rng.choice(["a", "b"])
            crit = rng.choice(CRITERIA)
            value = rng.randint(1, 10)
            note = f"override {len(made)} by the human"
            try:
                r = store.apply_override(rid, team, crit, value, note, author="tester")
            except StoreError:
                continue  # not readable this instant (never happens with atomic writes, but do not guess)
            made[(rid, team, crit)] = (value, note)
            if r.status == RoundStatus.RUNNING:
                on_running += 1
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    store.close()
    assert len(made) >= 10, "too few overrides made while the tournament ran"
    assert on_running >= 1, "no override landed on a round still being played"

    # the tournament lost nothing: every round saved and complete
    rounds = {r.id: r for r in load_round_files(root)}
    n = dilemmas * len(TRIO) * (len(TRIO) - 1)
    assert len(rounds) == n
    assert all(r.status == RoundStatus.COMPLETE and r.judgment is not None for r in rounds.values())
    assert all(r.judgment.judge_model for r in rounds.values())  # type: ignore[union-attr]
    # the human lost nothing: every override in the round files ...
    for (rid, team, crit), (value, note) in made.items():
        j = rounds[rid].judgment
        assert j is not None
        active = j.active_overrides().get((team, crit))
        assert active is not None, (rid, team, crit)
        assert (active.value, active.note) == (value, note), (rid, team, crit)
        assert j.effective_scores(team).as_dict()[crit] == value  # type: ignore[arg-type]
        assert j.parse_method != "manual"  # the judge's own judgment is there too, not replaced
    # ... and in the index, as a fresh reader sees it, and after a rebuild from the files
    for fresh in (open_store(root), None):
        if fresh is None:
            fresh = open_store(root)
            assert fresh.rebuild_index() == n
        entries = {e["id"]: e for e in fresh.query()}
        assert set(entries) == set(rounds)
        for (rid, team, crit), (value, _) in made.items():
            scores = entries[rid][f"scores_{team}"]  # in CRITERIA order (or by name)
            got = scores[crit] if isinstance(scores, dict) else scores[CRITERIA.index(crit)]
            assert got == value, (rid, team, crit)
        for rid, r in rounds.items():
            assert entries[rid]["overrides"] == len(r.judgment.active_overrides())  # type: ignore[union-attr]


def test_overrides_while_a_tournament_writes(tmp_path: Path) -> None:
    override_during_tournament(tmp_path, dilemmas=2, seed=6)


@pytest.mark.slow
def test_many_overrides_while_a_long_tournament_writes(tmp_path: Path) -> None:
    override_during_tournament(tmp_path, dilemmas=6, seed=7)


async def test_score_card_overrides_while_a_tournament_writes(tmp_path: Path) -> None:
    """The same through the TUI: the score card (Pilot) corrects scores of rounds the tournament is playing."""
    import asyncio

    from textual.widgets import Input

    from ebtui.tui.app import EbtuiApp
    from ebtui.tui.screens.score import ScoreCardScreen
    from ebtui.tui.widgets.score_card import ScoreGrid
    from tests.support.tui_helpers import services_for

    cmd = trio_tournament(tmp_path, "tui-concurrent", dilemmas=2, concurrency=3, latency_s=0.1,
                          tokens_per_second=2000.0)
    root = tmp_path / "store"
    env = {**os.environ, "EBTUI_STORE_FSYNC": "0"}
    with started(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        store = open_store(root)
        services = services_for(store, lambda names: {}, TRIO)
        made: dict[str, tuple[str, int]] = {}  # round id -> (criterion, value) set through the card
        app = EbtuiApp(services, load_user_themes=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await pilot.pause()
            deadline = time.monotonic() + 60
            while proc.poll() is None and len(made) < 4 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                candidates = [p.stem for p in round_files(root) if p.stem not in made]
                if not candidates:
                    continue
                rid = candidates[0]
                round_ = store.load_round(rid)
                if round_.judgment is None:
                    continue  # the card edits a judgment; a running round gets one as soon as it is judged
                await app.push_screen(ScoreCardScreen(round_))
                await pilot.pause()
                grid = app.screen.query_one(ScoreGrid)
                row = len(made) % len(CRITERIA)
                grid.cursor_coordinate = grid.cursor_coordinate._replace(row=row, column=1)
                await pilot.press("e")
                await pilot.pause()
                value = 1 + len(made)
                app.screen.query_one("#score-value", Input).value = str(value)
                app.screen.query_one("#score-note", Input).value = f"card {len(made)}"
                await pilot.press("enter")
                made[rid] = (CRITERIA[row], value)
                end = time.monotonic() + 10
                while time.monotonic() < end:  # the card saves in a worker thread
                    await pilot.pause(0.05)
                    j = store.load_round(rid).judgment
                    if j is not None and (("a", CRITERIA[row]) in j.active_overrides()):
                        break
                await pilot.press("escape")
                await pilot.pause()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert len(made) >= 2
    rounds = {r.id: r for r in load_round_files(root)}
    assert len(rounds) == 12 and all(r.status == RoundStatus.COMPLETE for r in rounds.values())
    entries = {e["id"]: e for e in open_store(root).query()}
    for rid, (crit, value) in made.items():
        j = rounds[rid].judgment
        assert j is not None and j.effective_scores("a").as_dict()[crit] == value, (rid, crit)
        scores = entries[rid]["scores_a"]
        assert (scores[crit] if isinstance(scores, dict) else scores[CRITERIA.index(crit)]) == value
