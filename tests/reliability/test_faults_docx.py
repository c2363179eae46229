"""A hostile .docx is refused before it is unpacked: a zip bomb (1 GB inside 1 MB) in well under 2 s and
200 MB, by its headers; one whose headers lie (a small declared size) by the bounded streaming unpack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ebtui.core.dilemmas import DocumentError, load_document
from tests.support.zipbomb import make_bomb

_MEASURE = """
import json, resource, subprocess, sys, time
t0 = time.monotonic()
p = subprocess.run([sys.executable, "-m", "ebtui", *sys.argv[1:]], capture_output=True, text=True)
secs = time.monotonic() - t0
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps([p.returncode, p.stdout, p.stderr, secs, peak]))
"""


def run_measured(*args: str) -> tuple[int, str, str, float, float]:
    """Exit code, stdout, stderr, seconds and the command's own peak memory in MB — measured by a small
    Python in between (a child forked from this big test process would count its pages as its own)."""
    out = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True, text=True, check=True,
                         env=os.environ.copy())
    code, stdout, stderr, secs, peak = json.loads(out.stdout)
    return code, stdout, stderr, secs, peak


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
