"""`ebtui tournament CONFIG --batch` end to end: models on the openai and anthropic providers pointed at
llmock (real SDKs over HTTP), the CLI in a subprocess; kill -9 after the first batch, resume with
`--resume ID --batch`; batch rounds against streamed ones; the dry run's prices."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PhaseStatus, PhaseType, RoundStatus
from ebtui.core.store import ResultsStore
from tests.support.paths import subprocess_env
from tests.support.reliability_helpers import toml_table

EXCHANGE = [PhaseType.PRESENTATION, PhaseType.RESPONSE, PhaseType.REBUTTAL, PhaseType.CONSISTENCY_TEST]


@pytest.fixture
def fast_batches(llmock: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """llmock's batches are ready 3 s after creation; 0.3 s here keeps the suite fast (the server runs in
    this process, in a thread)."""
    from llmock.routers import batch as llmock_batch

    monkeypatch.setattr(llmock_batch, "_BATCH_DELAY", 0.3)
    return llmock


def write_configs(tmp: Path, llmock: Any, *, dilemmas: int = 1) -> tuple[Path, Path, Path]:
    models = tmp / "models.toml"
    key = {"api_key_env": "EBTUI_TEST_KEY"}
    models.write_text(toml_table({"models": {
        "gpt": {"provider": "openai", "model": "gpt-4o-mini", "base_url": llmock.base_url("openai"), **key,
                "price_in": 2.0, "price_out": 8.0, "json_schema": False},
        "claude": {"provider": "anthropic", "model": "claude-sonnet-4-6", "base_url": llmock.base_url("anthropic"),
                   **key, "price_in": 3.0, "price_out": 15.0},
        "judge": {"provider": "openai", "model": "gpt-4.1-mini", "base_url": llmock.base_url("openai"), **key,
                  "price_in": 0.4, "price_out": 1.6, "json_schema": False},
    }}))
    ids = [d.id for d in load_dilemmas()[:dilemmas]]
    tour = tmp / "tournament.toml"
    tour.write_text(f'name = "batch-test"\nmodels = ["gpt", "claude"]\ndilemmas = {json.dumps(ids)}\n'
                    f'judges = ["judge"]\nself_debates = false\n')
    return models, tour, tmp / "store"


def cli(models: Path, store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "ebtui", "--models", str(models), "--store", str(store), "tournament", *args]


def env() -> dict[str, str]:
    return subprocess_env(EBTUI_TEST_KEY="sk-test-batch", EBTUI_STORE_FSYNC="0")


def creations(llmock: Any) -> int:
    return sum(1 for r in llmock.requests if r.method == "POST" and
               (r.path.endswith("/v1/batches") or r.path.endswith("/v1/messages/batches")))


def chat_calls(llmock: Any) -> int:
    return sum(1 for r in llmock.requests if r.method == "POST" and
               (r.path.endswith("/chat/completions") or r.path.endswith("/v1/messages")))


def check_complete(store: Path) -> list[Any]:
    rs = ResultsStore(store)
    rounds = [rs.load_round(p.stem) for p in sorted((store / "rounds").glob("*.json"))]
    assert rounds
    for r in rounds:
        assert r.status == RoundStatus.COMPLETE, (r.id, r.status, r.error)
        j = r.phase(PhaseType.JUDGMENT)
        assert j is not None and j.status == PhaseStatus.COMPLETE and r.judgment is not None
        for p in r.phases:
            assert p.status == PhaseStatus.COMPLETE and p.response.strip()
            assert p.usage.batch and p.usage.cost_usd and p.usage.cost_usd > 0
            assert p.latency is not None and p.latency >= 0.25  # the batch's time, not a stream's
    return rounds


def check_ledger(store: Path, tid: str, llmock: Any) -> dict[str, Any]:
    """Every call of the rounds is one item of one batch: nothing asked twice, nothing submitted twice."""
    ledger = json.loads((store / "batches" / f"{tid}.json").read_text())
    rs = ResultsStore(store)
    calls = sum(1 for p in (store / "rounds").glob("*.json") for ph in rs.load_round(p.stem).phases
                if ph.reused_from is None)
    seen: dict[str, str] = {}
    for b in ledger["batches"]:
        for cid in b["items"]:
            assert cid not in seen, f"item {cid} in batches {seen[cid]} and {b['id']}"
            seen[cid] = b["id"]
    assert len(seen) == calls
    assert all(it["state"] == "consumed" for it in ledger["items"].values())
    assert creations(llmock) == len(ledger["batches"])  # every batch created is in the ledger, once
    return ledger


def tournament_id(store: Path) -> str:
    (t,) = ResultsStore(store).list_tournaments()
    return t.id


def test_batch_tournament_completes_with_judgments(fast_batches: Any, tmp_path: Path) -> None:
    llmock = fast_batches
    models, tour, store = write_configs(tmp_path, llmock)
    t0 = time.monotonic()
    proc = subprocess.run(cli(models, store, str(tour), "--batch", "--batch-poll-max", "0.5"), env=env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rounds = check_complete(store)
    assert len(rounds) == 2
    assert chat_calls(llmock) == 0  # no streamed chat call for batch models
    ledger = check_ledger(store, tournament_id(store), llmock)
    phases = {p for b in ledger["batches"] for p in b["phases"]}
    assert phases == {"presentation", "response", "consistency", "rebuttal", "judgment"}
    # waves: far fewer batches than calls (10 calls here)
    assert len(ledger["batches"]) <= 8
    assert "batch " in proc.stderr and "submitted" in proc.stderr
    print(proc.stderr)
    assert time.monotonic() - t0 < 90


@pytest.mark.slow
def test_kill_after_first_batch_then_resume_submits_nothing_twice(fast_batches: Any, tmp_path: Path) -> None:
    llmock = fast_batches
    models, tour, store = write_configs(tmp_path, llmock)
    proc = subprocess.Popen(cli(models, store, str(tour), "--batch", "--batch-poll-max", "0.5"), env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    ledger_dir = store / "batches"
    while time.monotonic() < deadline:
        files = list(ledger_dir.glob("*.json")) if ledger_dir.exists() else []
        if files and json.loads(files[0].read_text() or "{}").get("batches"):
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    first = creations(llmock)
    assert first >= 1
    tid = tournament_id(store)
    resumed = subprocess.run(cli(models, store, "--resume", tid, "--batch", "--batch-poll-max", "0.5"), env=env(),
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    check_complete(store)
    check_ledger(store, tid, llmock)
    assert chat_calls(llmock) == 0


@pytest.mark.slow
def test_batch_rounds_equal_streamed_rounds_at_half_the_cost(fast_batches: Any, tmp_path: Path) -> None:
    llmock = fast_batches
    models, tour, store = write_configs(tmp_path, llmock)
    streamed_store = tmp_path / "streamed"
    batch = subprocess.run(cli(models, store, str(tour), "--batch", "--batch-poll-max", "0.5"), env=env(),
                           capture_output=True, text=True, timeout=120)
    assert batch.returncode == 0, batch.stderr[-3000:]
    streamed = subprocess.run(cli(models, streamed_store, str(tour)), env=env(), capture_output=True, text=True,
                              timeout=120)
    assert streamed.returncode == 0, streamed.stderr[-3000:]
    b_rounds = {r.schedule_key: r for r in check_complete(store)}
    rs = ResultsStore(streamed_store)
    s_rounds = {r.schedule_key: r for r in (rs.load_round(p.stem) for p in (streamed_store / "rounds").glob("*.json"))}
    assert set(b_rounds) == set(s_rounds)
    for key, b in b_rounds.items():
        s = s_rounds[key]
        assert b.id == s.id
        for pt in EXCHANGE:
            bp, sp = b.phase(pt), s.phase(pt)
            assert (bp.prompt, bp.response) == (sp.prompt, sp.response)
            assert (bp.usage.input_tokens, bp.usage.output_tokens) == (sp.usage.input_tokens, sp.usage.output_tokens)
            assert not sp.usage.batch and bp.usage.batch
            assert bp.usage.cost_usd == pytest.approx(sp.usage.cost_usd / 2)
            assert bp.model_id == sp.model_id


def test_dry_run_json_shows_the_batch_price_at_about_half(tmp_path: Path, llmock: Any) -> None:
    models, tour, store = write_configs(tmp_path, llmock, dilemmas=2)
    proc = subprocess.run(cli(models, store, str(tour), "--batch", "--dry-run", "--json"), env=env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["total_cost_usd"] > 0
    assert data["list_price_usd"] == pytest.approx(data["total_cost_usd"], rel=1e-6)
    assert data["batch_price_usd"] == pytest.approx(data["list_price_usd"] / 2, rel=1e-6)
    assert data["batch"]["batch_models"] == ["claude", "gpt", "judge"]
    assert data["batch"]["expected_cache_savings_usd"] >= 0
    assert not list(llmock.requests)  # a dry run calls nothing
    plain = subprocess.run(cli(models, store, str(tour), "--batch", "--dry-run"), env=env(),
                           capture_output=True, text=True, timeout=60)
    assert "batch price" in plain.stdout and "List price" in plain.stdout


@pytest.mark.slow
def test_a_judge_panel_in_batch_mode(fast_batches: Any, tmp_path: Path) -> None:
    """Four models, every exchange judged by the two models not playing: the panel's judgments join the
    judgment wave; every round completes, nothing is streamed, nothing is asked twice."""
    llmock = fast_batches
    models, tour, store = write_configs(tmp_path, llmock)
    models.write_text(models.read_text() + f"""
[models.judge2]
provider = "anthropic"
model = "claude-haiku-4-5"
base_url = "{llmock.base_url('anthropic')}"
api_key_env = "EBTUI_TEST_KEY"
price_in = 1.0
price_out = 5.0
""")
    ids = [d.id for d in load_dilemmas()[:1]]
    tour.write_text(f'name = "panel"\nmodels = ["gpt", "claude", "judge", "judge2"]\ndilemmas = {json.dumps(ids)}\n'
                    'judges = "panel"\nself_debates = false\n')
    proc = subprocess.run(cli(models, store, str(tour), "--batch", "--batch-poll-max", "0.5"), env=env(),
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rounds = check_complete(store)
    assert len(rounds) == 24  # 12 ordered pairings x 2 judges
    assert sum(1 for r in rounds if any(p.reused_from for p in r.phases)) == 12  # the panel's second judgments
    assert chat_calls(llmock) == 0
    ledger = check_ledger(store, tournament_id(store), llmock)
    judged = sum(b["phases"].get("judgment", 0) for b in ledger["batches"])
    assert judged == 24
