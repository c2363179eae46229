"""A full disk, for real: the results store on a small tmpfs that fills up while a round or a tournament is
being played (the fake server fills it when a given call arrives, so the disk fills mid-run, and counts
every call). Skipped with the reason when this machine cannot mount one (not root, no permission); the
store logic below the CLI is also tested with an injected ENOSPC, which needs nothing."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ebtui.core.records import Round, RoundStatus
from ebtui.core.store import ResultsStore, StoreWriteError
from tests.support.factories import open_store
from tests.support.fault_server import FaultServer

KEY = "sk-fake-" + uuid.uuid4().hex + uuid.uuid4().hex
DILEMMA = "fidelity_slider"


def ebtui(*args: str, env: dict[str, str] | None = None, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ebtui", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "EBTUI_FAKE_KEY": KEY, "EBTUI_STORE_FSYNC": "0", **(env or {})})


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    both = proc.stdout + proc.stderr
    assert "Traceback" not in both and "ExceptionGroup" not in both, both[-3000:]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs mounted at tmp_path/disk (unmounted after)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a real full disk needs root to mount a small tmpfs (the ENOSPC tests below still run)")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(disk: Path) -> None:
    """Fill the disk to the last byte."""
    with contextlib.suppress(OSError), open(disk / f"filler-{uuid.uuid4().hex}", "wb", buffering=0) as f:
        block = b"x" * 65536
        while True:
            try:
                f.write(block)
            except OSError:
                block = block[: len(block) // 2]
                if not block:
                    break


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.json")) if p.is_file()}


def test_run_on_a_disk_that_fills_mid_round_says_one_line_keeps_the_round_and_prints_the_resume_line(
        small_disk: Path, tmp_path: Path) -> None:
    store = small_disk / "store"
    with FaultServer(on_call=lambda n: fill(small_disk) if n == 2 else None) as srv:
        models = tmp_path / "models.toml"
        models.write_text(srv.models_toml())
        proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "fake", "--team-b", "fake", "--judge", "fake",
                     "--models", str(models), "--store", str(store))
        calls = len(srv.calls)
    no_traceback(proc)
    assert proc.returncode == 1
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ebtui: error:")]
    assert len(errors) == 1, proc.stderr
    assert f"cannot write to {store / 'rounds'}: no space left on the device" in errors[0]
    assert "was not saved" in errors[0]
    rid = errors[0].split("round ")[-1].split()[0]
    assert f"--resume {rid}" in proc.stderr
    # the round in flight is kept elsewhere, whole and readable, with the phases done before the disk filled
    kept = Path(proc.stderr.split("is kept in ")[1].split(";")[0])
    rescued = Round.model_validate_json(kept.read_bytes())
    assert rescued.id == rid and rescued.phase("presentation") is not None
    assert rescued.phase("presentation").status.value == "complete"
    # the round stopped where the disk filled: the calls in flight then (the second, and the consistency
    # test that starts beside it) and no more, even when a save still lands on the "full" disk (the pages
    # of a replaced file or of a failed temporary file): a call needs room for its round's next save
    assert calls <= 3
    # on the disk: the round as last saved (never half-written) ...
    on_disk = Round.model_validate_json((store / "rounds" / f"{rid}.json").read_bytes())
    assert on_disk.id == rid
    # ... and read back as interrupted, since its process is gone: resume continues it
    assert ResultsStore(store).load_round(rid).status == RoundStatus.INCOMPLETE
    assert not [p for p in (store / "rounds").iterdir() if p.name.endswith(".tmp")]
    kept.unlink()


def test_run_with_room_for_the_start_up_check_only_calls_no_model(small_disk: Path, tmp_path: Path) -> None:
    """One free page: the store's write check passes, the round's first save does not — and no call is made."""
    store = small_disk / "store"
    store.mkdir()
    page = small_disk / "page"
    page.write_bytes(b"x" * 4096)
    fill(small_disk)
    page.unlink()
    with FaultServer() as srv:
        models = tmp_path / "models.toml"
        models.write_text(srv.models_toml())
        proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "fake", "--team-b", "fake", "--judge", "fake",
                     "--models", str(models), "--store", str(store))
        assert srv.calls == []
    no_traceback(proc)
    assert proc.returncode in (1, 2), proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ebtui: error:")]
    assert len(errors) == 1 and "no space left on the device" in errors[0], proc.stderr
    if proc.returncode == 1:  # the write check passed; the first save failed: nothing to resume, run it again
        assert "Run it again with" in proc.stderr and "--resume" not in proc.stderr


def test_override_on_a_full_disk_says_it_was_not_saved_and_changes_nothing(small_disk: Path) -> None:
    store = small_disk / "store"
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "scripted", "--team-b", "scripted",
                 "--judge", "scripted", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    rid = next((store / "rounds").glob("*.json")).stem
    before = snapshot(store)
    fill(small_disk)
    for args in (["override", rid, "--team", "a", "--criterion", "consistency", "--value", "3", "--note", "n"],
                 ["accept", rid, "--all"]):
        proc = ebtui("rounds", *args, "--store", str(store))
        no_traceback(proc)
        assert proc.returncode != 0
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "no space left on the device" in lines[0], proc.stderr
        assert "not saved" in lines[0] and str(store / "rounds") in lines[0]
        assert snapshot(store) == before


def _tournament(tmp_path: Path, srv: FaultServer, store: Path, rounds_per_pairing: int = 3) -> Path:
    models = tmp_path / "models.toml"
    models.write_text(srv.models_toml("alpha") + srv.models_toml("beta") + srv.models_toml("gamma"))
    cfg = tmp_path / "t.toml"
    cfg.write_text(f'name = "full"\nmodels = ["alpha", "beta"]\ndilemmas = ["{DILEMMA}"]\n'
                   f'rounds_per_pairing = {rounds_per_pairing}\njudges = ["gamma"]\nconcurrency = 1\nexpected_output_tokens = 100\n'
                   f'store = "{store}"\n')
    return cfg


def test_a_tournament_stops_starting_calls_at_the_first_failed_save(small_disk: Path, tmp_path: Path) -> None:
    store = small_disk / "store"
    fill_at = 7  # in the second round
    with FaultServer(on_call=lambda n: fill(small_disk) if n == fill_at else None) as srv:
        cfg = _tournament(tmp_path, srv, store)
        proc = ebtui("tournament", str(cfg), "--models", str(tmp_path / "models.toml"))
        calls = len(srv.calls)
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if "ebtui: error:" in ln]
    assert len(errors) == 1 and "no space left on the device" in errors[0], proc.stderr
    assert "--resume" in proc.stderr
    # 6 rounds of 5 calls were planned; it stopped within the round in flight when the disk filled, not
    # 23 calls later. (A "full" disk frees pages as failed temp files are removed, so a save can still land
    # between the fill and the first failed save, and a call after it is allowed; none after the failure —
    # the injected-ENOSPC test below checks that order exactly.)
    assert fill_at <= calls <= fill_at + 3, calls
    # the first round, saved before the disk filled, is kept whole
    firsts = [Round.model_validate_json(p.read_bytes()) for p in (store / "rounds").glob("*.json")]
    assert any(r.status == RoundStatus.COMPLETE for r in firsts)


def test_a_tournament_that_cannot_fit_is_refused_before_any_call(small_disk: Path, tmp_path: Path) -> None:
    with FaultServer() as srv:
        cfg = _tournament(tmp_path, srv, small_disk / "store", rounds_per_pairing=100)
        proc = ebtui("tournament", str(cfg), "--models", str(tmp_path / "models.toml"))
        assert srv.calls == []
    no_traceback(proc)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert line.startswith("ebtui: error: not enough space for the results store") and "needs about" in line
    assert "MB" in line and "200 round(s)" in line
    needs = float(line.split("needs about ")[1].split(" MB")[0])
    dry = ebtui("tournament", str(cfg), "--models", str(tmp_path / "models.toml"), "--dry-run")
    assert f"Disk: about {needs:,.1f} MB" in dry.stdout  # the dry run says the same (nothing played yet)


# --------------------------------------------------------------------------------------------- no mount needed


def test_a_failed_round_write_is_one_store_write_error_and_the_file_is_unchanged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ebtui.core.store import files, round_files

    store = open_store(tmp_path / "s")
    r = Round(dilemma_id="d", team_a_model="a", team_b_model="b", judge_model="j")
    store.save_round(r)
    before = store.round_path(r.id).read_bytes()
    real = files.atomic_write

    def full(path: Path, data: bytes, **kw: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(round_files, "atomic_write", full)
    r.error = "changed"
    with pytest.raises(StoreWriteError) as info:
        store.save_round(r)
    assert str(info.value) == (f"cannot write to {store.rounds_dir}: no space left on the device — round {r.id} "
                               "was not saved")
    assert store.write_failure is info.value
    assert store.round_path(r.id).read_bytes() == before
    with pytest.raises(StoreWriteError, match="the change to round"):
        store.apply_override(r.id, "a", "consistency", 4, "n")
    monkeypatch.setattr(round_files, "atomic_write", real)
    store.close()  # the pending index write may fail or not: never raises


def test_no_call_starts_after_a_failed_save_with_an_injected_enospc(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same through the engine with the disk shimmed: round writes fail from the 3rd on. Each call
    starts only once its phase's save has landed; after the first failed write none starts; the error
    carries the round as played."""
    import asyncio
    from typing import Any

    from ebtui.core import replies
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.round import RoundSpec, play_round
    from ebtui.core.store import round_files
    from ebtui.providers.scripted import ScriptedClient

    monkeypatch.setattr(replies, "LOW_SPACE_BYTES", 1 << 62)  # "low on space": every call waits for its save
    log: list[str] = []
    real = round_files.atomic_write

    def shim(path: Path, data: bytes, **kw: Any) -> None:
        if sum(1 for x in log if x.startswith("write")) >= 2:
            log.append("write failed")
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data, **kw)
        log.append("write")

    class Logged(ScriptedClient):
        def stream(self, *args: Any, **kw: Any) -> Any:
            log.append("call")
            return super().stream(*args, **kw)

    monkeypatch.setattr(round_files, "atomic_write", shim)
    store = open_store(tmp_path / "s")
    spec = RoundSpec(load_dilemmas()[0], "s", "s", "s")
    with pytest.raises(StoreWriteError) as info:
        asyncio.run(play_round(spec, {"s": Logged("s")}, store))
    first_failure = log.index("write failed")
    assert "call" not in log[first_failure:], log
    assert log[0] == "write" and log[1] == "call"  # the presentation's call waited for its save
    assert info.value.round is not None and info.value.round.phase("presentation").status.value == "complete"
    assert store.write_failure is not None


def test_a_call_that_fails_after_a_save_failed_is_not_retried(tmp_path: Path) -> None:
    """The disk fills while a call is in flight and that call then fails (a 5xx): its retry would be a new
    call to the server, so it is not made — the phase fails (and the next save raises the store's error)."""
    import asyncio
    from typing import Any

    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.round import RoundSpec, play_round
    from ebtui.providers.retry import RetryingClient, RetryPolicy
    from ebtui.providers.scripted import ScriptedClient, ScriptedFault

    store = open_store(tmp_path / "s")

    class FillsTheDisk(ScriptedClient):
        def stream(self, *args: Any, **kw: Any) -> Any:
            store.write_failure = StoreWriteError(store.rounds_dir, "no space left on the device", "round x")
            return super().stream(*args, **kw)

    inner = FillsTheDisk("s", faults=[ScriptedFault(kind="server", times=5)])
    client = RetryingClient(inner, RetryPolicy(attempts=3, backoff_s=0.01))
    spec = RoundSpec(load_dilemmas()[0], "s", "s", "s")
    result = asyncio.run(play_round(spec, {"s": client}, store))  # (this shim's writes do land)
    assert inner.calls == 1  # without the check: 3 attempts
    presentation = result.phase("presentation")
    assert presentation is not None and presentation.error_kind == "unavailable"
    assert "not retried: cannot write to" in (presentation.error or "")


def test_no_call_starts_once_the_disk_is_full_even_when_a_save_still_lands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills as the 2nd call starts, but saves still land (a replaced round file frees its pages, a
    failed temporary file gives its own back): no save fails, yet no call may start after the fill beyond
    the two in flight then (the response and the consistency test) — 3 calls, not 5 — and the round stops
    with the store's one-line ENOSPC error, the round as played carried for the front end to keep."""
    import asyncio
    from types import SimpleNamespace
    from typing import Any

    from ebtui.core import replies
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.round import RoundSpec, play_round
    from ebtui.providers.scripted import ScriptedClient

    calls: list[str] = []
    real_statvfs = os.statvfs

    def statvfs(path: Any) -> Any:
        if len(calls) < 2:
            return real_statvfs(path)
        return SimpleNamespace(f_bavail=1, f_frsize=4096, f_bsize=4096, f_blocks=512, f_bfree=1)  # one page

    class Counted(ScriptedClient):
        def stream(self, *args: Any, **kw: Any) -> Any:
            calls.append("call")
            return super().stream(*args, **kw)

    monkeypatch.setattr(replies.os, "statvfs", statvfs)
    monkeypatch.setattr(replies, "LOW_SPACE_BYTES", 1 << 62)  # a small disk: every call checks
    store = open_store(tmp_path / "s")
    spec = RoundSpec(load_dilemmas()[0], "s", "s", "s")
    with pytest.raises(StoreWriteError) as info:
        asyncio.run(play_round(spec, {"s": Counted("s")}, store))
    assert len(calls) <= 3, calls
    assert str(info.value).startswith(f"cannot write to {store.rounds_dir}: no space left on the device — round ")
    assert info.value.errno == errno.ENOSPC and store.write_failure is not None
    played = info.value.round
    assert played is not None and played.phase("presentation").status.value == "complete"
    assert played.judgment is None


def test_a_disk_with_room_for_the_round_is_not_called_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same check on a small disk with room left: every call is made, the round completes."""
    import asyncio

    from ebtui.core import replies
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.round import RoundSpec, play_round
    from ebtui.providers.scripted import ScriptedClient

    monkeypatch.setattr(replies, "LOW_SPACE_BYTES", 1 << 62)
    store = open_store(tmp_path / "s")
    client = ScriptedClient("s")
    result = asyncio.run(play_round(RoundSpec(load_dilemmas()[0], "s", "s", "s"), {"s": client}, store))
    assert result.status == RoundStatus.COMPLETE and client.calls == 5 and store.write_failure is None
