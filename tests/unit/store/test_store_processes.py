"""The store across processes: SIGKILL in the middle of saving, exit without close(), concurrent writers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ebtui.core.records import Round, RoundStatus
from ebtui.core.store import ResultsStore, entry_scores
from tests.support.paths import subprocess_env


def _python(code: str, *args: str) -> list[str]:
    """A child Python running `code` (with `sys` imported); run it with env=subprocess_env()."""
    return [sys.executable, "-c", "import sys\n" + textwrap.dedent(code), *args]


SAVE_LOOP = """
    from tests.support.factories import make_round
    from ebtui.core.records import RoundStatus
    from ebtui.core.store import ResultsStore, entry_scores
    store = ResultsStore(sys.argv[1], durable=sys.argv[2] == "durable")
    i = 0
    while True:  # save each round after every "phase", as the round engine does
        r = make_round(i, status=RoundStatus.RUNNING, judged=False, text_size=4000)
        phases = r.phases
        for n in range(1, 6):
            r.phases = phases[:n]
            if n == 5:
                r.judgment = make_round(i).judgment
                r.status = RoundStatus.COMPLETE
            store.save_round(r)
        i += 1
        if i == 3:
            print("ready", flush=True)
"""


def _wait_for(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert word in line, f"subprocess said {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}"


@pytest.mark.parametrize("durable", ["durable", "fast"])
def test_sigkill_during_saves_leaves_every_file_parseable_and_the_index_catches_up(
    tmp_path: Path, durable: str
) -> None:
    root = tmp_path / "store"
    for kill_after in (0.15, 0.4):
        proc = subprocess.Popen(
            _python(SAVE_LOOP, str(root), durable), env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        _wait_for(proc, "ready")
        time.sleep(kill_after)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL

    files = sorted((root / "rounds").glob("*.json"))
    assert len(files) >= 3
    for f in files:
        Round.model_validate_json(f.read_text())  # every round file parses: no torn writes
    index = root / "index.json"
    if index.exists():
        json.loads(index.read_text())  # the index file is replaced atomically too
    store = ResultsStore(root)
    rows = store.query()
    assert {r["id"] for r in rows} == {f.stem for f in files}  # nothing saved is missing from queries
    # a round in flight when killed shows as running with the phases saved so far
    for row in rows:
        r = store.load_round(row["id"])
        assert (r.status == RoundStatus.COMPLETE) == (len(r.phases) == 5 and r.judgment is not None)


def test_exit_without_close_flushes_the_index(tmp_path: Path) -> None:
    root = tmp_path / "store"
    code = """
        from tests.support.factories import make_round
        from ebtui.core.store import ResultsStore, entry_scores
        store = ResultsStore(sys.argv[1], durable=False)
        for i in range(10):
            store.save_round(make_round(i, text_size=10))
        print(store.index_writes)
    """
    out = subprocess.run(_python(code, str(root)), env=subprocess_env(), capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "0"  # nothing written during the saves (batched) ...
    data = json.loads((root / "index.json").read_text())
    assert len(data["rounds"]) == 10  # ... but written at exit


WRITER = """
    from tests.support.factories import make_round
    from ebtui.core.records import RoundStatus
    from ebtui.core.store import ResultsStore, entry_scores
    store = ResultsStore(sys.argv[1], durable=False)
    store.FLUSH_MIN_SAVES = 8
    n = int(sys.argv[2])
    for i in range(n):
        r = make_round(i, round_id=f"r-{i:04d}", status=RoundStatus.RUNNING, judged=False, text_size=200)
        phases = r.phases
        for k in range(1, 6):
            r.phases = phases[:k]
            if k == 5:
                r.judgment = make_round(i).judgment  # the engine replaces the judgment wholesale
                r.status = RoundStatus.COMPLETE
            store.save_round(r)
    store.close()
    print("done", flush=True)
"""

OVERRIDER = """
    import json, time
    from ebtui.core.store import ResultsStore, StoreError
    store = ResultsStore(sys.argv[1], durable=False)
    n = int(sys.argv[2])
    done = set()
    deadline = time.monotonic() + 60
    while len(done) < n and time.monotonic() < deadline:
        store.refresh()
        for row in store.query():
            if row["id"] not in done:
                store.apply_override(row["id"], "b", "framework_awareness", 2, "human " + row["id"])
                done.add(row["id"])
    store.close()
    print(json.dumps(sorted(done)), flush=True)
"""


def test_concurrent_writer_and_overrider_lose_no_write_on_either_side(tmp_path: Path) -> None:
    root = tmp_path / "store"
    n = 60
    writer = subprocess.Popen(_python(WRITER, str(root), str(n)), env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    overrider = subprocess.Popen(_python(OVERRIDER, str(root), str(n)), env=subprocess_env(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    w_out, w_err = writer.communicate(timeout=120)
    o_out, o_err = overrider.communicate(timeout=120)
    assert writer.returncode == 0, w_err
    assert overrider.returncode == 0, o_err
    overridden = json.loads(o_out)
    assert len(overridden) == n  # the overrider saw and overrode every round

    store = ResultsStore(root)
    rows = {r["id"]: r for r in store.query()}
    assert sorted(rows) == [f"r-{i:04d}" for i in range(n)]
    for i in range(n):
        r = store.load_round(f"r-{i:04d}")
        # the writer's last save is there ...
        assert r.status == RoundStatus.COMPLETE and len(r.phases) == 5
        assert r.judgment is not None and r.judgment.team_b_scores.framework_awareness == 6
        # ... and so is the human's override, whenever it landed
        assert r.judgment.effective_scores("b").framework_awareness == 2, r.id
        assert [o.note for o in r.judgment.overrides] == [f"human {r.id}"]
        # and the index agrees with the files
        assert entry_scores(rows[r.id], "b")["framework_awareness"] == 2 and rows[r.id]["status"] == "complete"
    assert os.path.exists(root / "index.json")
