"""A key the server echoes back (a 401 whose body repeats it, as real providers do with part of it) is in no
file ebtui writes — round files, the index, reports, exports — and in nothing it prints."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from click.testing import CliRunner

from ebtui import redact
from ebtui.cli import cli
from tests.support.fault_server import FaultServer

KEY = "sk-live-" + uuid.uuid4().hex + uuid.uuid4().hex[:12]


def pieces(text: str) -> list[str]:
    """Every piece of the key of 8 characters found in `text`."""
    return sorted({KEY[i:i + 8] for i in range(len(KEY) - 7) if KEY[i:i + 8] in text})


def test_a_401_echoing_the_key_leaves_it_in_no_file_and_no_output(tmp_path: Path) -> None:
    env = {**os.environ, "EBTUI_FAKE_KEY": KEY, "EBTUI_STORE_FSYNC": "0", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    store = tmp_path / "store"
    outputs: list[str] = []

    def ebtui(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "ebtui", *args], capture_output=True, text=True, timeout=90,
                              env=env, cwd=tmp_path)
        outputs.extend((proc.stdout, proc.stderr))
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    with FaultServer(mode="echo_401") as srv:
        models = tmp_path / "models.toml"
        models.write_text(srv.models_toml())
        proc = ebtui("run", "--dilemma", "fidelity_slider", "--team-a", "fake", "--team-b", "scripted",
                     "--judge", "scripted", "--models", str(models), "--store", str(store))
        assert srv.keys_seen and srv.keys_seen[0] == KEY  # the server did get the key, and echoed it
    assert proc.returncode == 1
    assert "Incorrect API key provided: [REDACTED]" in proc.stdout  # the error is shown, the key is not
    rid = next((store / "rounds").glob("*.json")).stem
    for args in (["rounds", "show", rid], ["rounds", "show", rid, "--json"], ["rounds", "list"]):
        result = CliRunner().invoke(cli, [*args, "--store", str(store)])  # in this process: faster
        assert result.exit_code == 0, result.output
        outputs.extend((result.stdout, result.stderr))
    ebtui("report", "--store", str(store), "--out", str(tmp_path / "report"), "--models", str(models))
    for text in outputs:
        assert not pieces(text), text
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != models]
    assert any(p.parent.name == "rounds" for p in files)
    for path in files:
        data = path.read_bytes().decode("utf-8", "replace")
        assert not pieces(data), f"{path} holds part of the key"


def test_every_piece_of_eight_or_more_characters_is_redacted_and_nothing_else() -> None:
    secret = "gsk_" + uuid.uuid4().hex
    redact.register(secret)
    try:
        text = f"key={secret}; head {secret[:8]}... tail ...{secret[-9:]}; mid {secret[10:17]} (7 chars stays)"
        out = redact.redact(text)
        assert out == (f"key=[REDACTED]; head [REDACTED]... tail ...[REDACTED]; mid {secret[10:17]} "
                       "(7 chars stays)")
        assert redact.redact_bytes(text.encode()) == out.encode()
        assert redact.redact("nothing secret here") == "nothing secret here"
    finally:
        redact.forget_all()
    assert redact.redact(text) == text
