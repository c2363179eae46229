"""The benchmark harness runs end to end in its tiny --quick mode and writes a results file.

Targets are reported by the harness, never asserted here: timings on a shared machine are not a test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_harness_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--only", "overhead", "--only", "cost",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    # the machine is described, and every figure row carries its value and, where there is one, a verdict
    for field in ("- CPU:", "- Cores:", "- RAM:", "- Python:", "- OS:", "Load average"):
        assert field in text
    assert "## 2. Overhead" in text and "## 6. Cost" in text
    assert "benchmark failed" not in text
    rows = [line for line in text.splitlines() if line.startswith("| 2 |")]
    assert len(rows) == 4 and all(("PASS" in r) != ("MISS" in r) for r in rows)
    cost_rows = [line for line in text.splitlines() if line.startswith("| 6 |")]
    assert {"openai", "anthropic", "google"} <= {r.split("|")[2].split()[0] for r in cost_rows}


def test_unknown_benchmark_is_a_clear_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "nope"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "invalid choice: 'nope'" in proc.stderr
