"""`ebtui run` as a user runs it: a real subprocess, the scripted model, a real store on disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ebtui.core.records import PHASE_ORDER, PhaseStatus, Round, RoundStatus
from ebtui.core.round import RoundSpec, play_round
from ebtui.core.store import ResultsStore
from ebtui.providers.scripted import ScriptedClient
from tests.support.processes import wait_for

DILEMMA = "fidelity_slider"
REBUTTAL_MARK = "# Your task: Team A's rebuttal"


def ebtui(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ebtui", *args], capture_output=True, text=True, timeout=timeout)


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "ebtui", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def write_models(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def saved_path(stdout: str) -> Path:
    line = next(x for x in stdout.splitlines() if "Saved: " in x)
    return Path(line.split("Saved: ", 1)[1].strip())


def read_round(path: Path) -> Round:
    return Round.model_validate_json(path.read_text(encoding="utf-8"))


def round_files(store: Path) -> list[Path]:
    return sorted((store / "rounds").glob("*.json")) if (store / "rounds").is_dir() else []


def running_phase(store: Path, phase: str) -> Round | None:
    for f in round_files(store):
        r = read_round(f)
        ph = r.phase(phase)
        if ph is not None and ph.status == PhaseStatus.RUNNING:
            return r
    return None


def test_run_completes_and_saves_five_phases_and_a_parsed_judgment(tmp_path: Path) -> None:
    store = tmp_path / "st"
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "scripted", "--team-b", "scripted",
                 "--judge", "scripted", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for title in ("Presentation", "Response", "Rebuttal", "Consistency test", "Judgment"):
        assert f"── {title} · " in out
    assert "Principle articulation" in out and "Total" in out
    path = saved_path(out)
    assert path.parent == (store / "rounds").resolve()
    r = read_round(path)
    assert r.status == RoundStatus.COMPLETE and r.dilemma_id == DILEMMA
    assert [p.phase_type for p in r.phases] == list(PHASE_ORDER)
    for ph in r.phases:
        assert ph.status == PhaseStatus.COMPLETE
        assert ph.prompt and ph.system_prompt and ph.response
        assert ph.finished_at is not None and ph.finished_at >= ph.timestamp
        assert ph.usage.output_tokens > 0
        assert ph.response.splitlines()[0] in out  # it was shown live
    assert r.judgment is not None and r.judgment.judge_model == "scripted"
    for team in ("a", "b"):
        assert r.judgment.parsed_scores(team).missing() == []
    # the index knows it too
    assert [e["id"] for e in ResultsStore(store).query(dilemma=DILEMMA)] == [r.id]


def test_json_output_and_options_before_the_subcommand(tmp_path: Path) -> None:
    store = tmp_path / "elsewhere"
    models = write_models(tmp_path / "m.toml", '[models.quick]\nprovider = "scripted"\nseed = "q"\n')
    proc = ebtui("--store", str(store), "--models", str(models), "run", "--dilemma", DILEMMA,
                 "--team-a", "quick", "--team-b", "scripted", "--judge", "quick", "--blind-judge", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)  # stdout holds the Round and nothing else
    r = Round.model_validate(data)
    assert r.team_a_model == "quick" and r.blind_judge and r.status == RoundStatus.COMPLETE
    assert "── Presentation" in proc.stderr  # live text went to stderr
    assert read_round(store / "rounds" / f"{r.id}.json").id == r.id
    assert "quick" not in r.phase("judgment").prompt


def test_live_output_does_not_interleave_concurrent_phases(tmp_path: Path) -> None:
    # team A (presentation, rebuttal, consistency test) and team B stream at the same time
    models = write_models(tmp_path / "m.toml", """
[models.a]
provider = "scripted"
tokens_per_second = 1500
[models.b]
provider = "scripted"
tokens_per_second = 1000
""")
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "a", "--team-b", "b", "--judge", "scripted",
                 "--models", str(models))
    assert proc.returncode == 0, proc.stderr
    r = read_round(saved_path(proc.stdout))
    resp, cons = r.phase("response"), r.phase("consistency_test")
    assert cons.timestamp < resp.finished_at  # they did overlap
    for ph in r.phases:
        assert ph.response in proc.stdout  # each phase printed whole, never interleaved
    headers = [line for line in proc.stdout.splitlines() if line.startswith("── ")]
    assert len(headers) == 5


def test_model_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    models = write_models(tmp_path / "m.toml", r"""
[models.evil]
provider = "scripted"
rules = [{ match = "", reply = "Hi \u001b]52;c;ZXZpbA==\u0007 there \u001b[31mred\u001b[0m\n\nPrinciple: p\nConclusion: c" }]
""")
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "evil", "--team-b", "evil", "--judge", "scripted",
                 "--models", str(models))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "there red" in proc.stdout


def test_retries_and_failures_show_in_place_and_exit_1(tmp_path: Path) -> None:
    models = write_models(tmp_path / "m.toml", f"""
[models.flaky]
provider = "scripted"
faults = [{{ kind = "auth", match = "{REBUTTAL_MARK}", times = 5, message = "key revoked" }}]
[models.hiccup]
provider = "scripted"
backoff_s = 0
faults = [{{ kind = "server", times = 1, message = "srv-busy-77" }}]
""")
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "flaky", "--team-b", "hiccup", "--judge", "scripted",
                 "--models", str(models))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    # the response failed once and was retried: said in place, under its header
    resp_at = out.index("── Response · Team B: hiccup")
    assert out.index("[retrying: attempt 2 in 0.0s after server: hiccup: srv-busy-77;", resp_at) < out.index("── ", resp_at + 3)
    assert "[FAILED (auth): auth: flaky: key revoked]" in out
    assert "[skipped: needs rebuttal, which failed]" in out
    r = read_round(saved_path(out))
    assert r.status == RoundStatus.INCOMPLETE
    assert r.phase("response").status == PhaseStatus.COMPLETE and r.phase("response").attempts == 2
    assert r.phase("rebuttal").status == PhaseStatus.FAILED
    assert r.phase("consistency_test").status == PhaseStatus.COMPLETE
    assert r.phase("judgment").status == PhaseStatus.SKIPPED
    assert all("key revoked" not in p.prompt + p.response and "srv-busy-77" not in p.prompt + p.response
               for p in r.phases)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dilemma", "no_such"], "unknown dilemma 'no_such'"),
        (["--team-a", "nobody"], "no model named 'nobody'"),
        (["--document", "missing.docx"], "missing.docx"),
        (["--document", "fake.docx"], "fake.docx"),
        (["--models", "bad.toml"], "bad.toml"),
    ],
)
def test_usage_and_config_errors_exit_2_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "fake.docx").write_text("not a word document")
    (tmp_path / "bad.toml").write_text("[models.x]\nprovider = 'nonsense'\n")
    base = {"--dilemma": DILEMMA, "--team-a": "scripted", "--team-b": "scripted", "--judge": "scripted"}
    opts = dict(base)
    opts.update(dict(zip(args[::2], args[1::2], strict=True)))
    proc = ebtui("run", *[x for kv in opts.items() for x in kv])
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ebtui: error: ") and message in lines[0]
    assert not round_files(Path(os.environ["EBTUI_STORE"]))


def test_missing_required_option_is_a_usage_error() -> None:
    proc = ebtui("run", "--dilemma", DILEMMA, "--team-a", "scripted")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--team-b" in proc.stderr


SLOW_A = """
[models.slow]
provider = "scripted"
tokens_per_second = {tps}
"""


def slow_round(tmp_path: Path, *, slow: str, tps: int) -> tuple[subprocess.Popen[str], Path]:
    """`ebtui run` started with the slow scripted model (`tps` tokens a second) as Team A (slow="a") or Team B
    against scripted, into tmp_path/st: (process, store)."""
    store = tmp_path / "st"
    models = write_models(tmp_path / "m.toml", SLOW_A.format(tps=tps))
    team_a, team_b = ("slow", "scripted") if slow == "a" else ("scripted", "slow")
    proc = spawn("run", "--dilemma", DILEMMA, "--team-a", team_a, "--team-b", team_b, "--judge", "scripted",
                 "--models", str(models), "--store", str(store))
    return proc, store


def killed_in_the_rebuttal(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Round]:
    """A round whose process was killed -9 once its rebuttal started: (process, store, the round as it was
    seen running)."""
    proc, store = slow_round(tmp_path, slow="a", tps=200)
    try:
        crashed = wait_for(lambda: running_phase(store, "rebuttal"), what="the rebuttal to start")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=10)
    return proc, store, crashed


def test_kill_9_during_the_rebuttal_leaves_a_readable_store(tmp_path: Path) -> None:
    proc, store, _ = killed_in_the_rebuttal(tmp_path)
    assert proc.returncode == -signal.SIGKILL
    [path] = round_files(store)
    r = read_round(path)
    # the process died: the round stays "running" on disk, the phase in flight too (readers show it as
    # interrupted); everything finished before the kill is there
    assert r.status == RoundStatus.RUNNING
    assert r.phase("presentation").status == PhaseStatus.COMPLETE and r.phase("presentation").response
    assert r.phase("response").status == PhaseStatus.COMPLETE and r.phase("response").response
    assert r.phase("rebuttal").status == PhaseStatus.RUNNING
    assert r.judgment is None
    # a fresh store reads it back and shows it as it is: incomplete, interrupted, the phase in flight failed
    fresh = ResultsStore(store)
    shown = fresh.load_round(r.id)
    assert shown.status == RoundStatus.INCOMPLETE
    assert shown.error and "interrupted" in shown.error
    assert shown.phase("rebuttal").status == PhaseStatus.FAILED
    assert shown.phase("rebuttal").error_kind == "interrupted"
    assert shown.phase("rebuttal").response == ""  # partial text never becomes a response
    assert shown.phase("presentation") == r.phase("presentation")
    assert shown.phase("response") == r.phase("response")
    [entry] = fresh.query(status="incomplete")
    assert entry["id"] == r.id and entry["interrupted"] is True
    assert fresh.query(status="running") == []
    # the CLI lists it under incomplete, marked as interrupted
    out = ebtui("rounds", "list", "--status", "incomplete", "--store", str(store))
    assert out.returncode == 0 and r.id in out.stdout and "interrupted" in out.stdout


async def test_a_killed_round_resumes_to_completion(tmp_path: Path) -> None:
    from ebtui.core.dilemmas import load_dilemmas

    _, store, crashed = killed_in_the_rebuttal(tmp_path)
    results = ResultsStore(store)
    crashed = results.load_round(crashed.id)
    dilemma = next(d for d in load_dilemmas() if d.id == DILEMMA)
    spec = RoundSpec(dilemma=dilemma, team_a="slow", team_b="scripted", judge="scripted")
    clients = {"slow": ScriptedClient("slow"), "scripted": ScriptedClient("scripted")}
    r = await play_round(spec, clients, results, resume=crashed)
    assert r.id == crashed.id and r.status == RoundStatus.COMPLETE
    assert r.phase("presentation") == crashed.phase("presentation")
    assert r.phase("response") == crashed.phase("response")
    assert results.load_round(r.id).status == RoundStatus.COMPLETE


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_saves_the_round_incomplete(tmp_path: Path, sig: signal.Signals) -> None:
    proc, store = slow_round(tmp_path, slow="b", tps=100)
    try:
        wait_for(lambda: running_phase(store, "response"), what="the response to start")
        time.sleep(0.2)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == (130 if sig == signal.SIGINT else 1), err
    assert "interrupted" in err and "Traceback" not in err and "Event loop is closed" not in err
    r = read_round(saved_path(out))
    assert r.status == RoundStatus.INCOMPLETE and r.error == "cancelled"
    assert r.phase("presentation").status == PhaseStatus.COMPLETE
    assert r.phase("response").status == PhaseStatus.CANCELLED
    assert "[cancelled]" in out
