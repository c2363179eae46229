"""`ebtui tournament` and `ebtui tournaments list`: dry run, real runs, kill -9 and resume, llmock."""

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
from click.testing import CliRunner

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PHASE_ORDER, PhaseStatus, Round, RoundStatus
from ebtui.core.store import ResultsStore
from tests.support.factories import calls_by_role
from tests.support.processes import kill_9_when, started


@pytest.fixture(autouse=True)
def _fast_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_STORE_FSYNC", "0")


def two_dilemmas() -> list[str]:
    return [d.id for d in load_dilemmas()[:2]]


def write_models(path: Path, names: list[str], latency: float = 0.0, **extra: Any) -> Path:
    lines = []
    for n in names:
        lines += [f"[models.{n}]", 'provider = "scripted"', f"latency_s = {latency}",
                  "price_in = 1.0", "price_out = 4.0"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_tournament(path: Path, **fields: Any) -> Path:
    lines = []
    for k, v in fields.items():
        if isinstance(v, dict):
            continue
        lines.append(f"{k} = {json.dumps(v)}")
    for k, v in fields.items():
        if isinstance(v, dict):
            for sub, table in v.items():
                lines.append(f"[{k}.{sub}]")
                lines += [f"{kk} = {json.dumps(vv)}" for kk, vv in table.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def rounds_of(store: Path) -> list[Round]:
    rs = ResultsStore(store)
    return [rs.load_round(p.stem) for p in sorted((store / "rounds").glob("*.json"))]


def calls_in(rounds: list[Round]) -> dict[str, dict[str, int]]:
    return {m: dict(c) for m, c in calls_by_role(rounds).items()}


def test_dry_run_calls_nothing_and_its_counts_equal_the_real_run(tmp_path: Path) -> None:
    models = write_models(tmp_path / "models.toml", ["alpha", "beta", "gamma"])
    cfg = write_tournament(tmp_path / "t.toml", models=["alpha", "beta", "gamma"], dilemmas=two_dilemmas(),
                           judges="panel", self_debates=True)
    store = tmp_path / "store"
    res = invoke("tournament", str(cfg), "--models", str(models), "--store", str(store), "--dry-run")
    assert res.exit_code == 0, res.output
    assert "nothing is called" in res.output and "presenting" in res.output
    assert not store.exists()  # nothing called, nothing written
    res = invoke("tournament", str(cfg), "--models", str(models), "--store", str(store), "--dry-run", "--json")
    est = json.loads(res.output)
    # 2 dilemmas x (6 pairings with 1 judge + 3 self-debates with 2 judges)
    assert est["rounds"] == 2 * (6 * 1 + 3 * 2)
    assert not store.exists()

    res = invoke("tournament", str(cfg), "--models", str(models), "--store", str(store))
    assert res.exit_code == 0, res.output
    assert "Cross-model matrix" in res.output
    rounds = rounds_of(store)
    assert len(rounds) == est["rounds"]
    assert all(r.status == RoundStatus.COMPLETE for r in rounds)
    assert calls_in(rounds) == est["calls"]
    assert sum(sum(c.values()) for c in calls_in(rounds).values()) == est["total_calls"]

    res = invoke("tournaments", "list", "--store", str(store))
    assert res.exit_code == 0
    assert est["tournament_id"] in res.output and "complete" in res.output
    listed = json.loads(invoke("tournaments", "list", "--store", str(store), "--json").output)
    assert listed[0]["rounds_complete"] == est["rounds"] == listed[0]["total_rounds"]

    # resuming it with a config whose schedule differs is refused, naming the field
    changed = write_tournament(tmp_path / "t2.toml", models=["alpha", "beta", "gamma"], dilemmas=two_dilemmas(),
                               judges="panel", self_debates=True, rounds_per_pairing=2)
    res = CliRunner().invoke(cli, ["tournament", str(changed), "--models", str(models), "--store", str(store),
                                   "--resume", est["tournament_id"]])
    assert res.exit_code == 2 and "field rounds_per_pairing" in res.output


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"models": ["alpha", "nope", "beta"]}, "field models: no model named 'nope'"),
        ({"models": ["alpha", "beta"]}, "only two models"),
        ({"models": ["alpha", "beta"], "judges": ["ghost"]}, "field judges: no model named 'ghost'"),
        ({"models": ["alpha", "beta", "gamma"], "dilemmas": ["no_such"]}, "unknown dilemma id(s) no_such"),
        ({"models": ["alpha", "beta", "gamma"], "rounds_per_pairing": 0}, "field rounds_per_pairing"),
        ({"models": ["alpha", "beta", "gamma"], "judges": "everyone"}, 'field judges: must be "rotate"'),
    ],
)
def test_bad_config_is_one_line_exit_2(tmp_path: Path, fields: dict[str, Any], expected: str) -> None:
    models = write_models(tmp_path / "models.toml", ["alpha", "beta", "gamma"])
    cfg = write_tournament(tmp_path / "bad.toml", **fields)
    res = CliRunner().invoke(cli, ["tournament", str(cfg), "--models", str(models), "--dry-run"])
    assert res.exit_code == 2
    assert expected in res.output, res.output
    assert "Traceback" not in res.output
    assert res.output.count("\n") == 1


def test_missing_config_and_unknown_resume_id(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["tournament", str(tmp_path / "missing.toml")])
    assert res.exit_code == 2 and "no such file" in res.output
    res = CliRunner().invoke(cli, ["tournament", "--resume", "t-nothere", "--store", str(tmp_path)])
    assert res.exit_code == 2 and "t-nothere" in res.output


def test_budget_stop_then_resume_with_budget_flag(tmp_path: Path) -> None:
    models = write_models(tmp_path / "models.toml", ["alpha", "beta", "gamma"], latency=0.002)
    cfg = write_tournament(tmp_path / "t.toml", models=["alpha", "beta", "gamma"], dilemmas=two_dilemmas(),
                           budget_usd=0.01, expected_output_tokens=300, concurrency=2)
    store = tmp_path / "store"
    res = invoke("tournament", str(cfg), "--models", str(models), "--store", str(store))
    assert res.exit_code == 1
    assert "Budget of $0.01 reached" in res.output
    tid = json.loads(invoke("tournaments", "list", "--store", str(store), "--json").output)[0]["id"]
    assert f"--resume {tid} --budget" in res.output
    assert any(r.status != RoundStatus.COMPLETE for r in rounds_of(store)) or len(rounds_of(store)) < 12
    # the stored tournament carries its config: --resume ID alone is enough
    res = invoke("tournament", "--models", str(models), "--store", str(store), "--resume", tid, "--budget", "10")
    assert res.exit_code == 0, res.output
    rounds = rounds_of(store)
    assert len(rounds) == 12 and all(r.status == RoundStatus.COMPLETE for r in rounds)


def trio_tournament_cmd(tmp_path: Path, latency: float) -> tuple[list[str], dict[str, str], Path]:
    """`ebtui tournament` of alpha, beta and gamma (scripted, `latency` s a call) on two dilemmas, concurrency 3,
    into tmp_path/store: (command, environment, store)."""
    models = write_models(tmp_path / "models.toml", ["alpha", "beta", "gamma"], latency=latency)
    cfg = write_tournament(tmp_path / "t.toml", models=["alpha", "beta", "gamma"], dilemmas=two_dilemmas(),
                           concurrency=3)
    store = tmp_path / "store"
    env = {**os.environ, "EBTUI_STORE_FSYNC": "0"}
    return [sys.executable, "-m", "ebtui", "tournament", str(cfg), "--models", str(models), "--store", str(store)], env, store


def test_kill_9_mid_run_then_resume_finishes_without_duplicates_or_lost_phases(tmp_path: Path) -> None:
    cmd, env, store = trio_tournament_cmd(tmp_path, latency=0.15)

    def under_way() -> bool:
        try:
            rounds = rounds_of(store)
        except Exception:  # noqa: BLE001 - a file mid-rename; look again
            return False
        done = sum(r.status == RoundStatus.COMPLETE for r in rounds)
        return done >= 3 and any(r.status == RoundStatus.RUNNING for r in rounds)

    with started(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        kill_9_when(proc, under_way, 60, "the tournament never got under way")
    assert proc.returncode == -signal.SIGKILL
    before = rounds_of(store)  # what the killed process left on disk
    # rounds it was playing read back as interrupted: incomplete, with the phase in flight failed
    assert any(r.status == RoundStatus.INCOMPLETE and "interrupted" in (r.error or "") for r in before)
    assert not any(r.status == RoundStatus.RUNNING for r in before)
    kept = {(r.id, p.phase_type): (p.timestamp, p.response) for r in before for p in r.phases
            if p.status == PhaseStatus.COMPLETE}
    tid = before[0].tournament_id
    assert tid
    listed = json.loads(invoke("tournaments", "list", "--store", str(store), "--json").output)
    assert [(t["id"], t["status"]) for t in listed] == [(tid, "interrupted")]  # saved running, nobody runs it

    res = subprocess.run([*cmd, "--resume", tid], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "Resuming tournament" in res.stderr
    after = rounds_of(store)
    assert len(after) == 12
    assert len({r.schedule_key for r in after}) == 12  # no duplicates
    assert {r.id for r in before} <= {r.id for r in after}
    for r in after:
        assert r.status == RoundStatus.COMPLETE
        assert [p.phase_type for p in r.phases] == list(PHASE_ORDER)
        assert all(p.status == PhaseStatus.COMPLETE and p.prompt and p.response for p in r.phases)
        assert r.judge_model not in (r.team_a_model, r.team_b_model)
    # phases completed before the kill were kept, not played again
    for r in after:
        for p in r.phases:
            if (r.id, p.phase_type) in kept:
                assert (p.timestamp, p.response) == kept[(r.id, p.phase_type)]


# -- real SDKs over HTTP: one model per SDK family against the llmock server ---------------------------
LLMOCK_FAMILIES = {
    "gpt": ("openai", "openai", "gpt-4o-mini"),
    "claude": ("anthropic", "anthropic", "claude-sonnet-4-6"),
    "gemini": ("google", "gemini", "gemini-2.5-flash"),
}


def test_three_sdk_families_against_llmock(tmp_path: Path, llmock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    lines = []
    for name, (provider, route, model) in LLMOCK_FAMILIES.items():
        lines += [f"[models.{name}]", f'provider = "{provider}"', f'model = "{model}"',
                  f'base_url = "{llmock.base_url(route)}"', 'api_key_env = "EBTUI_TEST_KEY"',
                  "max_tokens = 400", "backoff_s = 0.05", "timeout_s = 10.0", "stall_timeout_s = 5.0"]
    models = tmp_path / "models.toml"
    models.write_text("\n".join(lines) + "\n")
    cfg = write_tournament(tmp_path / "t.toml", models=list(LLMOCK_FAMILIES), dilemmas=two_dilemmas(),
                           concurrency=6, limits={"providers": {"openai": 2}})
    store = tmp_path / "store"
    est = json.loads(invoke("tournament", str(cfg), "--models", str(models), "--store", str(store),
                            "--dry-run", "--json").output)
    res = invoke("tournament", str(cfg), "--models", str(models), "--store", str(store))
    assert res.exit_code == 0, res.output
    rounds = rounds_of(store)
    assert len(rounds) == 2 * 3 * 2 == est["rounds"]
    assert all(r.status == RoundStatus.COMPLETE for r in rounds)
    for r in rounds:
        assert r.judge_model not in (r.team_a_model, r.team_b_model)
        assert all(p.usage.input_tokens > 0 for p in r.phases)
    assert calls_in(rounds) == est["calls"]
    # every model played every role
    for name in LLMOCK_FAMILIES:
        assert set(calls_in(rounds)[name]) == {"presenting", "responding", "judging"}


def test_ctrl_c_saves_what_is_done_and_says_how_to_resume(tmp_path: Path) -> None:
    cmd, env, store = trio_tournament_cmd(tmp_path, latency=0.1)
    with started(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
            try:
                if sum(r.status == RoundStatus.COMPLETE for r in rounds_of(store)) >= 2:
                    break
            except Exception:  # noqa: BLE001 - store not there yet, or a file mid-rename
                continue
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err  # Ctrl-C: 128 + SIGINT
    assert "stopping" in err and "--resume t-" in err
    assert "Traceback" not in err
    rounds = rounds_of(store)
    assert not any(r.status == RoundStatus.RUNNING for r in rounds)  # in-flight rounds saved as they stood
    assert any(r.status == RoundStatus.INCOMPLETE for r in rounds)
    saved = ResultsStore(store).list_tournaments()
    assert [t.status.value for t in saved] == ["incomplete"]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    after = rounds_of(store)
    assert len(after) == 12 and all(r.status == RoundStatus.COMPLETE for r in after)
