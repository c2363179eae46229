"""A reply past the size cap (a 5 MB judge reply): cut at the cap, the phase failed as "truncated" (as a
max-tokens cut-off is: errors are never content, so no judgment is read from it), the text kept once in the
round file, and the terminal shows a bounded part of it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ebtui.core.records import PhaseStatus, Round, RoundStatus
from tests.support.fault_server import FaultServer

FIVE_MB = 5_000_000


def test_a_5_mb_judge_reply_is_cut_flagged_stored_once_and_not_echoed_whole(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with FaultServer(judge_chars=FIVE_MB) as srv:  # streamed in 64 kB pieces
        models = tmp_path / "models.toml"
        models.write_text(srv.models_toml())
        proc = subprocess.run(
            [sys.executable, "-m", "ebtui", "run", "--dilemma", "fidelity_slider", "--team-a", "scripted",
             "--team-b", "scripted", "--judge", "fake", "--models", str(models), "--store", str(store)],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "EBTUI_FAKE_KEY": "k" * 20, "EBTUI_STORE_FSYNC": "0"})
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1  # the round is incomplete: its judgment failed
    path = next((store / "rounds").glob("*.json"))
    r = Round.model_validate_json(path.read_bytes())
    assert r.status == RoundStatus.INCOMPLETE and r.judgment is None
    judgment = r.phase("judgment")
    assert judgment is not None and judgment.status == PhaseStatus.FAILED and judgment.error_kind == "truncated"
    assert "size cap of 400,000 characters" in (judgment.error or "")
    assert judgment.response == "" and len(judgment.partial_response) == 400_000
    # stored once: the reply's text appears in the file once, and the file is the cap plus the round
    text = path.read_text(encoding="utf-8")
    unit = "Call 1: the case turns on"  # the judge's was the server's only call (the teams are scripted)
    assert text.count(unit) == judgment.partial_response.count(unit) > 5000
    assert path.stat().st_size < 600_000
    # the terminal shows a bounded part and says so
    assert len(proc.stdout) < 100_000
    assert "characters not shown here" in proc.stdout
    assert "[FAILED (truncated):" in proc.stdout


def test_the_cap_is_configurable_and_a_reply_within_it_is_whole(tmp_path: Path) -> None:
    from ebtui.core.replies import ENV_MAX_REPLY, ReplyCap, max_reply_chars
    from ebtui.providers.base import ProviderError

    assert max_reply_chars(None) == 400_000
    assert max_reply_chars(5) == 5
    os.environ[ENV_MAX_REPLY] = "1_000"
    try:
        assert max_reply_chars(None) == 1000
    finally:
        del os.environ[ENV_MAX_REPLY]
    cap = ReplyCap(10, "m")
    kept: list[str] = []
    for piece in ("abcd", "efgh"):
        kept.append(cap.take(piece, kept))
    try:
        cap.take("ijklmn", kept)
    except ProviderError as exc:
        assert exc.kind == "truncated" and exc.partial_text == "abcdefghij"
    else:
        raise AssertionError("the cap was not enforced")


def test_an_error_message_is_cut_too() -> None:
    from ebtui.core.replies import MAX_ERROR_CHARS, clip_error

    assert clip_error("short") == "short"
    long = "x" * (MAX_ERROR_CHARS + 123)
    cut = clip_error(long)
    assert cut.startswith("x" * MAX_ERROR_CHARS) and cut.endswith("[123 more characters not kept]")
