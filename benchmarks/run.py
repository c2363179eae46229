"""The benchmark harness: `python -m benchmarks.run [--quick] [--only NAME ...] [--out PATH]`.

Each benchmark runs in its own fresh interpreter (so its peak memory, `ru_maxrss`, is its own and no
benchmark warms another's caches); the parent collects the figures and writes benchmarks/RESULTS.md with
the machine, the date, each figure with its target and PASS/MISS, and how it was measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import BenchResult

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
NAMES = ("orchestration", "overhead", "storage", "streaming", "startup", "cost")
#: benchmarks whose peak memory the issue asks for
MEMORY = ("orchestration", "storage")


def _bench(name: str) -> Callable[[bool], BenchResult]:
    if name == "orchestration":
        from benchmarks.bench_core import bench_orchestration as f
    elif name == "overhead":
        from benchmarks.bench_core import bench_overhead as f
    elif name == "storage":
        from benchmarks.bench_core import bench_storage as f
    elif name == "streaming":
        from benchmarks.bench_tui import bench_streaming as f
    elif name == "startup":
        from benchmarks.bench_tui import bench_startup as f
    elif name == "cost":
        from benchmarks.bench_cost import bench_cost as f
    else:
        raise SystemExit(f"benchmarks: unknown benchmark {name!r} (one of: {', '.join(NAMES)})")
    return f


def run_child(name: str, quick: bool, out: Path) -> None:
    """Run one benchmark in this process and write its result as JSON."""
    t0 = time.perf_counter()
    try:
        res = _bench(name)(quick)
    except Exception as exc:  # a broken benchmark is reported, the others still run
        res = BenchResult(name, name, error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    res.seconds = time.perf_counter() - t0
    res.max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    out.write_text(json.dumps(res.to_json()), encoding="utf-8")


def run_in_subprocess(name: str, quick: bool, timeout: float) -> BenchResult:
    with tempfile.TemporaryDirectory(prefix="ebtui-bench-") as tmp:
        out = Path(tmp) / f"{name}.json"
        env = {**os.environ, "EBTUI_STORE": str(Path(tmp) / "store"), "XDG_CONFIG_HOME": str(Path(tmp) / "cfg"),
               "XDG_DATA_HOME": str(Path(tmp) / "data")}
        cmd = [sys.executable, "-m", "benchmarks.run", "--child", name, "--json", str(out)]
        if quick:
            cmd.append("--quick")
        try:
            proc = subprocess.run(cmd, cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return BenchResult(name, name, error=f"timed out after {timeout:.0f} s")
        if not out.exists():
            return BenchResult(name, name, error=f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return BenchResult.from_json(json.loads(out.read_text(encoding="utf-8")))


def idle_rss_mb() -> float:
    """Peak memory of an interpreter that only imported ebtui's core and Textual (the baseline)."""
    code = ("import resource, ebtui.core.tournament, ebtui.core.store, textual.app; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE.parent)
    try:
        return float(out.stdout.strip())
    except ValueError:
        return float("nan")


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return {
        "CPU": cpu,
        "Cores": str(os.cpu_count()),
        "RAM": ram,
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "OS": platform.platform(),
    }


def _load() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def render(results: list[BenchResult], *, quick: bool, started: dt.datetime, total_s: float, load_before: str,
           load_after: str, idle_mb: float) -> str:
    m = machine()
    out = [
        "# ebtui benchmarks — results",
        "",
        "Written by `python -m benchmarks.run`" + (" --quick (a shortened smoke run: figures not representative)"
                                                   if quick else "") + ". Do not edit by hand; re-run instead.",
        "",
        f"- Date: {started.strftime('%Y-%m-%d %H:%M UTC')}; the whole run took {total_s:.0f} s",
        *(f"- {k}: {v}" for k, v in m.items()),
        f"- Load average (1/5/15 min) before: {load_before}; after: {load_after}. The machine is shared (other "
        "engineers' test suites run on it), so timings carry that noise.",
        "",
        "## Summary",
        "",
        "| # | Figure | Value | Target | Result |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        num = r.title.split(".", 1)[0] if r.title[:1].isdigit() else "?"
        if r.error:
            out.append(f"| {num} | {r.name}: benchmark failed | — | — | ERROR |")
            continue
        for f in r.figures:
            note = f" ({f.note})" if f.note else ""
            out.append(f"| {num} | {f.name} | {f.value_text()}{note} | {f.target or '—'} | {f.verdict() or '—'} |")
    mem = [r for r in results if r.name in MEMORY and r.max_rss_mb]
    if mem:
        out += ["", "## Peak memory", "",
                f"Peak resident set (`ru_maxrss`) of the benchmark's own interpreter; an interpreter that only "
                f"imports ebtui's core and Textual peaks at {idle_mb:.0f} MB.", ""]
        for r in mem:
            out.append(f"- {r.title}: {r.max_rss_mb:.0f} MB")
    for r in results:
        out += ["", f"## {r.title}", ""]
        if r.error:
            out += ["The benchmark failed:", "", "```", r.error.strip(), "```"]
            continue
        out += ["| Figure | Value | Target | Result |", "|---|---|---|---|"]
        for f in r.figures:
            note = f" ({f.note})" if f.note else ""
            out.append(f"| {f.name} | {f.value_text()}{note} | {f.target or '—'} | {f.verdict() or '—'} |")
        out += ["", f"**How.** {r.method}", ""]
        out += r.details
        rss = f", peak memory {r.max_rss_mb:.0f} MB" if r.max_rss_mb else ""
        out.append(f"- benchmark run time {r.seconds:.1f} s{rss}")
    notes = HERE / "NOTES.md"
    if notes.exists():
        out += ["", notes.read_text(encoding="utf-8").strip()]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes and short durations (a smoke run)")
    ap.add_argument("--only", action="append", choices=NAMES, metavar="NAME",
                    help=f"run only this benchmark (repeatable): {', '.join(NAMES)}")
    ap.add_argument("--out", type=Path, default=None, help="where to write the results (default "
                    "benchmarks/RESULTS.md; a --quick run writes nothing unless --out is given)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds allowed per benchmark")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        run_child(args.child, args.quick, args.json)
        return 0
    names = args.only or list(NAMES)
    started = dt.datetime.now(dt.UTC)
    load_before = _load()
    t0 = time.perf_counter()
    results: list[BenchResult] = []
    for name in names:
        print(f"benchmarks: {name} …", file=sys.stderr, flush=True)
        r = run_in_subprocess(name, args.quick, args.timeout)
        results.append(r)
        if r.error:
            print(f"benchmarks: {name} FAILED: {r.error.splitlines()[0]}", file=sys.stderr)
        for f in r.figures:
            print(f"  {f.name}: {f.value_text()} {('[' + f.verdict() + ']') if f.verdict() else ''}",
                  file=sys.stderr)
    text = render(results, quick=args.quick, started=started, total_s=time.perf_counter() - t0,
                  load_before=load_before, load_after=_load(), idle_mb=idle_rss_mb())
    out = args.out if args.out is not None else (None if args.quick else RESULTS)
    if out is not None:
        out.write_text(text, encoding="utf-8")
        print(f"benchmarks: wrote {out}", file=sys.stderr)
    else:
        print(text)
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
