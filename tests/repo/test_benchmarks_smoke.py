"""The benchmark harness runs end to end in its tiny --quick mode and writes a results file.

Targets are reported by the harness, never asserted here: timings on a shared machine are not a test.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT


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
    assert len(rows) == 5 and all(("PASS" in r) != ("MISS" in r) for r in rows)
    cost_rows = [line for line in text.splitlines() if line.startswith("| 6 |")]
    assert {"openai", "anthropic", "google"} <= {r.split("|")[2].split()[0] for r in cost_rows}
    # the figures are kept beside the Markdown, for a later --only run to merge into
    assert (tmp_path / "RESULTS.json").exists()


def test_only_merges_into_the_previous_results(tmp_path: Path) -> None:
    from benchmarks.common import BenchResult, Figure
    from benchmarks.run import load_previous, merge, render

    def result(name: str, title: str, value: float, started: str) -> BenchResult:
        r = BenchResult(name, title, [Figure(f"{name} figure", value, "ms", "< 1 ms", value < 1)], method="m",
                        started=started, load="0.50 / 0.40 / 0.30 → 0.60 / 0.40 / 0.30")
        return r

    out = tmp_path / "RESULTS.md"
    old = [result("orchestration", "1. Orchestration", 0.5, "2026-01-01 10:00 UTC"),
           result("overhead", "2. Overhead", 3.0, "2026-01-01 10:05 UTC")]
    (tmp_path / "RESULTS.json").write_text(
        json.dumps({"quick": False, "results": [r.to_json() for r in old]}), encoding="utf-8")
    new = [result("overhead", "2. Overhead", 0.7, "2026-02-02 12:00 UTC")]
    merged = merge(load_previous(out), new)
    assert [r.name for r in merged] == ["orchestration", "overhead"]
    assert merged[1].figures[0].value == 0.7 and merged[0].started == "2026-01-01 10:00 UTC"
    text = render(merged, quick=False, started=dt.datetime(2026, 2, 2, 12, tzinfo=dt.UTC), total_s=5,
                  load_before="x", load_after="y", idle_mb=50.0, ran=["overhead"])
    assert "kept from earlier runs, each with its own date below: orchestration" in text
    assert "Run 2026-01-01 10:00 UTC; load average 0.50 / 0.40 / 0.30" in text  # the kept section's own date
    assert "| 2 | overhead figure | 0.7 ms | < 1 ms | PASS |" in text
    assert "| overhead figure | 3 ms" not in text  # the replaced figure is gone


def test_unknown_benchmark_is_a_clear_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "nope"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "invalid choice: 'nope'" in proc.stderr


def test_the_terminal_benchmarks_models_file_streams_long_team_replies(tmp_path: Path) -> None:
    from benchmarks.bench_terminal import LONG_PARAGRAPH, SHORT_REPLY, TOKENS_PER_S, models_toml
    from ebtui.config import load_models_config
    from ebtui.providers.registry import build_clients

    path = tmp_path / "models.toml"
    path.write_text(models_toml(repeat=3), encoding="utf-8")
    client = build_clients(load_models_config(path), ["bench"])["bench"]
    client = getattr(client, "inner", client)  # the scripted model inside the retry wrapper
    assert client.tokens_per_second == TOKENS_PER_S  # type: ignore[attr-defined]
    # a short presentation, then long replies, so Team B's response and Team A's consistency test overlap
    assert client.reply_for("x\n# Your task: Team A's presentation\n", "", None) == SHORT_REPLY  # type: ignore[attr-defined]
    assert client.reply_for("x\n# Your task: Team B's response\n", "", None) == LONG_PARAGRAPH * 3  # type: ignore[attr-defined]


def test_the_terminal_benchmark_reads_reverse_video_from_tmux_attribute_runs() -> None:
    """Benchmark 7 times tab to the frame drawing the next pane's title reversed, read from `capture-pane -e`:
    tmux writes attributes and colours as separate sequences, and a colour number 7 is not reverse video."""
    from benchmarks.bench_terminal import reversed_titles

    row = ("\x1b[38;5;179m╭─ Team A · a ─╮\x1b[38;5;238m╭─\x1b[1;7m\x1b[38;5;247m Team B · b \x1b[0m"
           "\x1b[38;5;238m──╮╭─\x1b[38;5;7m Judge · j ─╮")
    assert reversed_titles(row) == {"Team A": False, "Team B": True, "Judge": False}
    row = "\x1b[1;7;38;5;247;48;5;16m Team A · a \x1b[27m─\x1b[38;2;7;7;7m Team B · b \x1b[7m Judge · j"
    assert reversed_titles(row) == {"Team A": True, "Team B": False, "Judge": True}
