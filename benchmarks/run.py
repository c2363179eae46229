"""The benchmark harness: `python -m benchmarks.run [--quick] [--only NAME ...] [--out PATH]`.

Each benchmark runs in its own fresh interpreter (so its peak memory, `ru_maxrss`, is its own and no
benchmark warms another's caches); the parent collects the figures and writes benchmarks/RESULTS.md with
the machine, the date, each figure with its target and PASS/MISS, and how it was measured. The figures are
kept in RESULTS.json too, so `--only NAME` re-runs one benchmark and replaces only its sections.
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
NAMES = ("orchestration", "overhead", "storage", "streaming", "startup", "cost", "terminal", "cpu")
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
    elif name == "cpu":
        from benchmarks.bench_cpu import bench_cpu as f
    elif name == "terminal":
        from benchmarks.bench_terminal import bench_terminal as f
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


def data_path(out: Path) -> Path:
    """The figures behind a results file, as JSON (RESULTS.md -> RESULTS.json): what `--only` merges into."""
    return out.with_suffix(".json")


def load_previous(out: Path) -> list[BenchResult]:
    """The results a previous run wrote next to `out` (none if there is no readable data file)."""
    try:
        data = json.loads(data_path(out).read_text(encoding="utf-8"))
        return [BenchResult.from_json(d) for d in data["results"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def merge(previous: list[BenchResult], new: list[BenchResult]) -> list[BenchResult]:
    """`previous` with the benchmarks in `new` replaced (or added), in the harness's order."""
    by_name = {r.name: r for r in previous}
    by_name.update({r.name: r for r in new})
    order = {n: i for i, n in enumerate(NAMES)}
    return sorted(by_name.values(), key=lambda r: order.get(r.name, len(order)))


def render(results: list[BenchResult], *, quick: bool, started: dt.datetime, total_s: float, load_before: str,
           load_after: str, idle_mb: float, ran: list[str] | None = None) -> str:
    m = machine()
    ran = [r.name for r in results] if ran is None else ran
    kept = [r for r in results if r.name not in ran]
    out = [
        "# ebtui benchmarks — results",
        "",
        "Written by `python -m benchmarks.run`" + (" --quick (a shortened smoke run: figures not representative)"
                                                   if quick else "") + ". Do not edit by hand; re-run instead.",
        "",
        f"- Date: {started.strftime('%Y-%m-%d %H:%M UTC')} ({', '.join(ran)}; {total_s:.0f} s)"
        + (f"; kept from earlier runs, each with its own date below: {', '.join(r.name for r in kept)}"
           if kept else ""),
        *(f"- {k}: {v}" for k, v in m.items()),
        f"- Load average (1/5/15 min) before: {load_before}; after: {load_after}. The machine is shared (other "
        "engineers' test suites run on it), so timings carry that noise; each benchmark's own load is in the "
        "table below.",
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
    out += ["", "## Runs", "",
            "| Benchmark | Started | Load average (1/5/15 min) at start → end | Run time | Peak memory |",
            "|---|---|---|---|---|"]
    for r in results:
        rss = f"{r.max_rss_mb:.0f} MB" if r.max_rss_mb else "—"
        out.append(f"| {r.name} | {r.started or '—'} | {r.load or '—'} | {r.seconds:.0f} s | {rss} |")
    mem = [r for r in results if r.name in MEMORY and r.max_rss_mb]
    if mem:
        out += ["", "## Peak memory", "",
                f"Peak resident set (`ru_maxrss`) of the benchmark's own interpreter; an interpreter that only "
                f"imports ebtui's core and Textual peaks at {idle_mb:.0f} MB.", ""]
        for r in mem:
            out.append(f"- {r.title}: {r.max_rss_mb:.0f} MB")
    for r in results:
        out += ["", f"## {r.title}", ""]
        if r.started or r.load:
            out += [f"Run {r.started or '—'}; load average {r.load or '—'}.", ""]
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
                    help=f"run only this benchmark (repeatable): {', '.join(NAMES)}; the others' sections are "
                    "kept from the previous run's data file (RESULTS.json)")
    ap.add_argument("--out", type=Path, default=None, help="where to write the results (default "
                    "benchmarks/RESULTS.md, with its data in RESULTS.json; a --quick run writes nothing unless "
                    "--out is given)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds allowed per benchmark")
    ap.add_argument("--render", action="store_true", help="run nothing: rewrite the results file from its data "
                    "file (RESULTS.json) and NOTES.md")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        run_child(args.child, args.quick, args.json)
        return 0
    if args.render:
        out = args.out or RESULTS
        data = json.loads(data_path(out).read_text(encoding="utf-8"))
        run = data["run"]
        out.write_text(render([BenchResult.from_json(d) for d in data["results"]], quick=data["quick"],
                              started=dt.datetime.fromisoformat(run["started"]), total_s=run["total_s"],
                              load_before=run["load_before"], load_after=run["load_after"],
                              idle_mb=run["idle_mb"], ran=run["ran"]), encoding="utf-8")
        print(f"benchmarks: wrote {out}", file=sys.stderr)
        return 0
    names = list(dict.fromkeys(args.only or NAMES))
    started = dt.datetime.now(dt.UTC)
    load_before = _load()
    t0 = time.perf_counter()
    results: list[BenchResult] = []
    for name in names:
        print(f"benchmarks: {name} … (load {_load()})", file=sys.stderr, flush=True)
        when, load0 = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), _load()
        r = run_in_subprocess(name, args.quick, args.timeout)
        r.started, r.load = when, f"{load0} → {_load()}"
        results.append(r)
        if r.error:
            print(f"benchmarks: {name} FAILED: {r.error.splitlines()[0]}", file=sys.stderr)
        for f in r.figures:
            print(f"  {f.name}: {f.value_text()} {('[' + f.verdict() + ']') if f.verdict() else ''}",
                  file=sys.stderr)
    out = args.out if args.out is not None else (None if args.quick else RESULTS)
    every = results
    if out is not None and args.only:
        every = merge(load_previous(out), results)
    run = {"started": started.isoformat(), "total_s": time.perf_counter() - t0, "load_before": load_before,
           "load_after": _load(), "idle_mb": idle_rss_mb(), "ran": names}
    text = render(every, quick=args.quick, started=started, total_s=run["total_s"], load_before=load_before,
                  load_after=run["load_after"], idle_mb=run["idle_mb"], ran=names)
    if out is not None:
        out.write_text(text, encoding="utf-8")
        data = {"quick": args.quick, "run": run, "results": [r.to_json() for r in every]}
        data_path(out).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"benchmarks: wrote {out}", file=sys.stderr)
    else:
        print(text)
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
