"""Store entries the filesystem cannot read (a symlink loop, a directory, a FIFO, a truncated file, bad JSON,
permission denied) are skipped and named every time the store is read — `rounds list`, `report --json`,
`tournaments list` — and `ebtui store check [--repair]` lists them, rebuilds the index and removes stale
temporary files. Tests run as root, who reads any file: permission denied is emulated by a shim."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import Round
from ebtui.core.round import RoundSpec, play_round
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import open_store


def ebtui(*args: str) -> subprocess.CompletedProcess[str]:
    """As a user runs it: a process of its own."""
    return subprocess.run([sys.executable, "-m", "ebtui", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "EBTUI_STORE_FSYNC": "0"})


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    """The same command in this process (faster; what it prints and its exit code, as above)."""
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-3000:]


@pytest.fixture
def broken_store(tmp_path: Path) -> tuple[Path, list[str], dict[str, str]]:
    """Four real rounds, then: one truncated in place, a symlink loop, a directory, a FIFO and bad JSON."""
    root = tmp_path / "st"
    dilemma = load_dilemmas()[0]
    clients = {m: ScriptedClient(m) for m in ("alpha", "beta", "judge")}
    ids = []
    with open_store(root) as store:
        for i in range(4):
            spec = RoundSpec(dilemma, "alpha" if i % 2 else "beta", "beta" if i % 2 else "alpha", "judge",
                             tournament_id="t1")
            ids.append(asyncio.run(play_round(spec, clients, store)).id)
    rounds = root / "rounds"
    trunc = rounds / f"{ids[0]}.json"
    trunc.write_bytes(trunc.read_bytes()[:300])  # truncated in place, after it was indexed
    os.symlink("loop.json", rounds / "loop.json")
    (rounds / "adir.json").mkdir()
    os.mkfifo(rounds / "pipe.json")
    (rounds / "garbage.json").write_text('{"id": "garbage", "phases": [', encoding="utf-8")
    bad = {
        str(trunc): "bad or truncated JSON",
        str(rounds / "loop.json"): "symbolic links",
        str(rounds / "adir.json"): "not a regular file",
        str(rounds / "pipe.json"): "not a regular file",
        str(rounds / "garbage.json"): "bad or truncated JSON",
    }
    return root, ids, bad


def _named(text: str, bad: dict[str, str]) -> None:
    for path, reason in bad.items():
        line = next((ln for ln in text.splitlines() if path in ln), None)
        assert line is not None, f"{path} not named in:\n{text}"
        assert reason in line, line


def test_rounds_list_names_every_unreadable_entry_every_time(broken_store) -> None:  # noqa: ANN001
    root, ids, bad = broken_store
    for run in (ebtui, invoke):  # the second time the index is trusted: they are still named
        proc = run("rounds", "list", "--store", str(root))
        no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert f"ebtui: {len(bad)} unreadable round entries skipped:" in proc.stdout
        _named(proc.stdout, bad)
        assert f"3 round(s); {len(bad)} unreadable skipped" in proc.stdout
        json_proc = invoke("rounds", "list", "--json", "--store", str(root))  # stdout stays JSON
        assert len(json.loads(json_proc.stdout)) == 3
        _named(json_proc.stderr, bad)
        table = proc.stdout.split("\n\n")[0]  # the rows, before the summary and the names
        for rid in ids[1:]:
            assert rid in table
        assert ids[0] not in table


def test_report_json_lists_the_unreadable_paths_and_reasons(broken_store) -> None:  # noqa: ANN001
    root, ids, bad = broken_store
    invoke("rounds", "list", "--store", str(root))  # met once before: the report names them again
    proc = invoke("report", "--json", "--store", str(root))
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    got = {e["path"]: e["reason"] for e in data["unreadable"]}
    assert set(got) == set(bad)
    for path, reason in bad.items():
        assert reason in got[path]
    _named(proc.stderr, bad)


def test_tournaments_list_counts_and_names_them(broken_store) -> None:  # noqa: ANN001
    root, ids, bad = broken_store
    (root / "tournaments").mkdir()
    os.symlink("t-loop.json", root / "tournaments" / "t-loop.json")
    proc = invoke("tournaments", "list", "--store", str(root))
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    _named(proc.stderr, bad)
    assert "unreadable tournament entry skipped" in proc.stderr and "t-loop.json" in proc.stderr


def test_permission_denied_is_named_too(broken_store, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Root reads anything: the shim makes one good round file answer EACCES, as it would for a user."""
    root, ids, bad = broken_store
    denied = root / "rounds" / f"{ids[1]}.json"
    os.utime(denied)  # changed since indexed: the store must read it again, and meets the denial
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == denied:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = CliRunner().invoke(cli, ["report", "--json", "--store", str(root)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    got = {e["path"]: e["reason"] for e in data["unreadable"]}
    assert got[str(denied)] == "cannot read: permission denied"
    assert set(got) == {*bad, str(denied)}


def test_store_check_lists_repairs_and_says_what_it_did(broken_store) -> None:  # noqa: ANN001
    root, ids, bad = broken_store
    stale = root / "rounds" / f".{ids[1]}.json.999999.1.tmp"  # left by a killed writer (no such pid)
    stale.write_text("{", encoding="utf-8")
    (root / "index.json").write_text("not json", encoding="utf-8")
    proc = ebtui("store", "check", "--store", str(root))
    no_traceback(proc)
    assert proc.returncode == 1
    _named(proc.stdout, bad)
    # the open found index.json corrupt, checked every file and removed the dead writer's temporary file
    assert "index.json is unreadable" in proc.stdout and "Removed 1 stale temporary file(s)." in proc.stdout
    assert not stale.exists()
    stale.write_text("{", encoding="utf-8")  # another one, which only --repair looks for (the index is fine now)
    proc = invoke("store", "check", "--repair", "--store", str(root))
    no_traceback(proc)
    assert "Removed 1 stale temporary file(s)." in proc.stdout and str(stale) in proc.stdout
    assert "Rebuilt index.json from the round files: 3 round(s) indexed, 5 unreadable skipped." in proc.stdout
    assert not stale.exists()
    for path in bad:  # never deleted
        assert os.path.lexists(path)
    assert proc.returncode == 1  # the unreadable files remain for a human to look at
    proc = invoke("store", "check", "--json", "--store", str(root))
    data = json.loads(proc.stdout)
    assert data["rounds"] == 3 and data["index_problem"] is None and data["stale_temp_files"] == []
    assert {e["path"] for e in data["unreadable"]} == set(bad)


def test_a_stale_temp_file_is_cleaned_up_by_the_next_full_check(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s")
    r = Round(dilemma_id="d", team_a_model="a", team_b_model="b", judge_model="j")
    store.save_round(r)
    store.close()
    stale = tmp_path / "s" / ".index.json.999999.2.tmp"
    stale.write_text("{}", encoding="utf-8")
    (tmp_path / "s" / "index.json").unlink()  # the next open does the full check
    again = open_store(tmp_path / "s")
    assert [e["id"] for e in again.query()] == [r.id]
    assert not stale.exists()


def test_a_probe_left_by_a_kill_during_start_up_is_removed_by_the_next_start(tmp_path: Path) -> None:
    from ebtui.core.preflight import check_store_writable

    root = tmp_path / "s"
    root.mkdir()
    old = root / ".ebtui-probe-abc123"
    old.write_bytes(b"ebtui")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    fresh = root / ".ebtui-probe-def456"  # another process's, being written now: left alone
    fresh.write_bytes(b"")
    check_store_writable(root)
    assert not old.exists() and fresh.exists()
