"""A hostile .docx is refused before it is unpacked: a zip bomb (1 GB inside 1 MB) in well under 2 s and
200 MB, by its headers; one whose headers lie (a small declared size) by the bounded streaming unpack."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ebtui.core.dilemmas import DocumentError, load_document
from tests.zipbomb import make_bomb


def run_measured(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str, float, float]:
    """Exit code, stdout, stderr, seconds and the child's own peak memory in MB (os.wait4's rusage)."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "ebtui", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})})
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out, err, time.monotonic() - t0, usage.ru_maxrss / 1024


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bomb(tmp_path_factory.mktemp("bomb") / "bomb.docx")


def test_a_zip_bomb_is_refused_at_once_in_one_line(bomb: Path) -> None:
    assert bomb.stat().st_size < 1_100_000
    code, out, err, secs, peak_mb = run_measured("run", "--document", str(bomb), "--dilemma", "x",
                                                 "--team-a", "scripted", "--team-b", "scripted", "--judge", "scripted")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(bomb) in lines[0] and "refused: part word/document.xml unpacks to 1.1 GB" in lines[0]
    assert "EBTUI_DOCX_MAX_PART_MB" in lines[0]
    # the whole process (interpreter start-up included) — the contract is 2 s and 200 MB; the check itself
    # takes milliseconds (below)
    assert secs < 10 and peak_mb < 200, (secs, peak_mb)


def test_the_refusal_itself_takes_milliseconds(bomb: Path) -> None:
    t0 = time.perf_counter()
    with pytest.raises(DocumentError, match="refused"):
        load_document(bomb)
    assert time.perf_counter() - t0 < 2.0


def test_headers_that_lie_do_not_let_it_unpack(tmp_path: Path) -> None:
    liar = make_bomb(tmp_path / "liar.docx", size=1 << 28, declared=1000)  # 256 MiB that says 1 kB
    t0 = time.perf_counter()
    with pytest.raises(DocumentError) as info:
        load_document(liar)
    assert time.perf_counter() - t0 < 2.0
    assert "corrupt .docx" in str(info.value) or "refused" in str(info.value)


def test_the_caps_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = make_bomb(tmp_path / "mid.docx", size=1 << 24)  # 16.8 MB of zeros: within the defaults
    with pytest.raises(DocumentError) as info:
        load_document(doc)
    assert "refused" not in str(info.value)  # unpacked (and then found not to be a Word document)
    monkeypatch.setenv("EBTUI_DOCX_MAX_PART_MB", "8")
    with pytest.raises(DocumentError, match="more than the 8.0 MB a part may"):
        load_document(doc)
    monkeypatch.setenv("EBTUI_DOCX_MAX_PART_MB", "100")
    monkeypatch.setenv("EBTUI_DOCX_MAX_TOTAL_MB", "10")
    with pytest.raises(DocumentError, match="more than the 10.0 MB a document may"):
        load_document(doc)
