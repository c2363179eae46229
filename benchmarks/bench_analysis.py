"""Analysis at scale (issue 29): `ebtui report --json` time and peak memory over generated stores of 200,
1,000, 10,000 and 100,000 rounds, the cost of the one-time build of the analysis columns, the cost of the
first report after an override made by another process, and the growth exponent between sizes.

    python -m benchmarks.bench_analysis [--quick] [--sizes 200,1000,10000,100000] [--runs 5] [--keep DIR]
                                        [--rejudged 0.3] [--cold-runs 3] [--reference OLD_TREE]
    python -m benchmarks.bench_analysis --columns STORE [--runs 5] [--reference OLD_TREE]

(`--reference OLD_TREE`: a checkout of the code before a change, e.g. `git archive HEAD~1 | tar -x -C DIR`;
the first cold report at each size is repeated with that code and its `--json` bytes compared.)

Stores come from benchmarks.gen_store (realistic rounds written in the store's own format, planted truth;
6 models and 8 dilemmas at 200 rounds, 8 models and 20 dilemmas at 1,000, 10 and 50 at 10,000, 12 and 50 at
100,000; `--rejudged F`: a share F of the rounds re-judged by another judge, so each report counts several
judgments per round — the analysis columns hold one row per judgment). Every report is its own `python -m ebtui report --json` process, timed from spawn to exit
(interpreter start and imports included); its peak memory is that child's `ru_maxrss` (os.wait4).

Per size:
* cold — the first report on the store: the store's first open (a stat of every round file against the
  index), the build of `<store>/columns/facts.parquet` from every round file, then the report;
* warm — `--runs` more reports (the columns up to date): median, p95, peak memory;
* after override — `ebtui rounds override` in its own process, then one report (it re-reads that round file
  only); "extra" is that report's time minus the warm median.
The growth exponent is log(t_large / t_small) / log(n_large / n_small) of the warm medians (1 = linear).

(To include it in `benchmarks/run.py`, add `elif name == "analysis": from benchmarks.bench_analysis import
bench_analysis as f` to `_bench` and "analysis" to NAMES; at 100,000 rounds it takes a quarter of an hour.)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import BenchResult, Figure, median, percentile

ROOT = Path(__file__).resolve().parent.parent
SHAPES = {200: (6, 8), 1000: (8, 20), 10000: (10, 50), 100000: (12, 50)}
TARGETS = {200: (1.5, None), 10000: (5.0, 500.0), 100000: (60.0, 1024.0)}
#: issue 38's contract for the first report on a store without its analysis columns: seconds, peak MB
COLD_TARGETS = {10000: (2.0, None), 100000: (20.0, 1024.0)}


CPU: list[float] = []  # CPU seconds (user + system) of every report child, in order
TREE: list[tuple[float, float]] = []  # peak MB of every child's process tree: resident sizes added, PSS added
RAW: list[bytes] = []  # the stdout of the last report child
LOADS: list[float] = []  # the 1-minute load average before each cold run
REFERENCE: list[Path] = []  # --reference: a source tree whose cold report must give the same bytes


def _run(args: list[str], root: Path = ROOT) -> tuple[float, float, int, bytes]:
    """(seconds, peak MB, exit code, stdout) of one child process (its CPU seconds go to CPU), running the
    code of the source tree `root`."""
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=ROOT)
    tree = TreeMemory(proc.pid)
    out = proc.stdout.read() if proc.stdout else b""
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    TREE.append(tree.stop())
    CPU.append(usage.ru_utime + usage.ru_stime)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr:
        proc.stderr.close()
    if proc.stdout:
        proc.stdout.close()
    return seconds, usage.ru_maxrss / 1024, proc.returncode, out


class TreeMemory:
    """The peak memory of a process and its descendants (the report's workers and forks), sampled every
    `every` seconds from /proc (Linux; elsewhere nothing): the resident sizes added up (pages a fork shares
    with its parent counted in both: what `ps` or psutil's rss added up show) and the proportional set sizes
    added up (a shared page split between the processes sharing it: the memory the tree really holds)."""

    def __init__(self, pid: int, every: float = 0.01) -> None:
        import threading

        self.pid, self.every = pid, every
        self.rss = self.pss = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        if sys.platform.startswith("linux"):
            self._thread.start()

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as fh:
                    todo += [int(x) for x in fh.read().split()]
            except OSError:
                pass
        return pids

    @staticmethod
    def _field(path: str, name: str) -> int:
        try:
            with open(path) as fh:
                return next((int(line.split()[1]) for line in fh if line.startswith(name)), 0) * 1024
        except (OSError, ValueError):
            return 0

    def _sample(self) -> None:
        while not self._done.wait(self.every):
            pids = self._tree()
            self.rss = max(self.rss, sum(self._field(f"/proc/{p}/status", "VmRSS:") for p in pids))
            self.pss = max(self.pss, sum(self._field(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids))

    def stop(self) -> tuple[float, float]:
        """(peak of the resident sizes added, peak of the PSS added) in MB."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.rss / 2**20, self.pss / 2**20


def report(store: Path, root: Path = ROOT) -> tuple[float, float, dict[str, Any]]:
    seconds, mb, code, out = _run(["-m", "ebtui", "report", "--store", str(store), "--json"], root)
    if code != 0:
        raise RuntimeError(f"ebtui report failed on {store} (exit {code})")
    RAW[:] = [out]
    return seconds, mb, json.loads(out)


REJUDGED = [0.0]  # --rejudged


def make_store(base: Path, n: int) -> tuple[Path, float]:
    """The store for n rounds under base (made once and kept), and how long generating it took."""
    store = base / (f"s{n}" + (f"-rejudged{REJUDGED[0]:g}" if REJUDGED[0] else ""))
    if (store / "index.json").exists():
        return store, float("nan")
    models, dilemmas = SHAPES.get(n, (8, 20))
    t0 = time.perf_counter()
    _s, _mb, code, _out = _run(["-m", "benchmarks.gen_store", str(store), "--rounds", str(n), "--models",
                                str(models), "--dilemmas", str(dilemmas), "--rejudged", str(REJUDGED[0])])
    if code != 0:
        raise RuntimeError(f"generating {n} rounds failed")
    return store, time.perf_counter() - t0


def cold_report(store: Path, root: Path = ROOT) -> tuple[float, float, dict[str, Any]]:
    """The first report on a store as another process wrote it (no columns, no check note)."""
    shutil.rmtree(store / "columns", ignore_errors=True)
    (store / "index.check.json").unlink(missing_ok=True)  # the first open checks every file, as after a copy
    return report(store, root)


def measure(base: Path, n: int, runs: int, cold_run: bool = True, cold_runs: int = 1) -> dict[str, Any]:
    store, gen_s = make_store(base, n)
    colds: list[tuple[float, float, float]] = []  # (seconds, MB, CPU seconds) of each cold run
    same: bool | None = None  # the cold report's bytes equal the --reference tree's
    trees: list[tuple[float, float]] = []  # each cold run's process tree peak (RSS added, PSS added), MB
    for _ in range(cold_runs if cold_run else 0):
        load = os.getloadavg()[0]
        cold_s, cold_mb, cold = cold_report(store)
        colds.append((cold_s, cold_mb, CPU[-1]))
        trees.append(TREE[-1])
        LOADS.append(load)
        if REFERENCE and same is None:
            mine = RAW[0]
            cold_report(store, REFERENCE[0])
            same = RAW[0] == mine
            CPU.pop()
    if not cold_run:
        cold_s, cold_mb, cold = report(store)  # one more warm run
    cold_cpu = CPU[-1]
    warm = [report(store)[:2] for _ in range(runs)]
    cpu = CPU[-runs:]
    times = [t for t, _ in warm]
    first = next(m["model"] for m in cold["models"] if m["mean"] is not None)
    rid = json.loads((store / "index.check.json").read_text())["columns"]["id"][n // 2]
    _run(["-m", "ebtui", "rounds", "override", rid, "--team", "a", "--criterion", "consistency", "--value", "1",
          "--note", "benchmark", "--store", str(store)])
    after_s, after_mb, after = report(store)
    after_cpu = CPU[-1]
    _run(["-m", "ebtui", "rounds", "override", rid, "--team", "a", "--criterion", "consistency", "--clear",
          "--store", str(store)])
    return {"n": n, "generate_s": gen_s, "colds": colds, "trees": trees, "loads": LOADS[-len(colds):] if colds else [], "cold_s": cold_s, "cold_mb": cold_mb, "warm_s": times, "warm_cpu": cpu, "cold_cpu": cold_cpu,
            "warm_mb": max(m for _, m in warm), "after_override_s": after_s, "after_override_cpu": after_cpu, "after_override_mb": after_mb,
            "override_seen": "with_overrides" in after, "same_as_reference": same, "models": len(cold["models"]), "first_model": first,
            "dilemmas": cold["n_dilemmas"]}


def bench_analysis(quick: bool, sizes: list[int] | None = None, runs: int | None = None,
                   keep: Path | None = None, cold: bool = True, cold_runs: int = 1) -> BenchResult:
    sizes = sizes or ([200, 1000] if quick else [200, 1000, 10000, 100000])
    runs = runs or (2 if quick else 5)
    base = keep or Path(tempfile.mkdtemp(prefix="ebtui-bench-analysis-"))
    res = BenchResult("analysis", "Analysis at scale: `ebtui report --json`")
    got = []
    for n in sizes:
        m = measure(base, n, runs if n < 100000 else max(3, runs - 2), cold, cold_runs if n < 100000 else 1)
        got.append(m)
        med, p95 = median(m["warm_s"]), percentile(m["warm_s"], 0.95)
        t_target, mb_target = TARGETS.get(n, (None, None))
        res.figures.append(Figure(f"{n:,} rounds: report, median (p95)", med, "s",
                                  f"< {t_target} s" if t_target else "",
                                  (p95 < t_target) if t_target else None,
                                  note=f"p95 {p95:.2f} s; CPU median {median(m['warm_cpu']):.2f} s"))
        res.figures.append(Figure(f"{n:,} rounds: peak memory", m["warm_mb"], "MB",
                                  f"< {mb_target:.0f} MB" if mb_target else "",
                                  (m["warm_mb"] < mb_target) if mb_target else None))
        if cold:
            walls, mbs, cpus = (sorted(x[k] for x in m["colds"]) for k in range(3))
            c_target, c_mb = COLD_TARGETS.get(n, (None, None))
            if m["same_as_reference"] is not None:
                res.details.append(f"- {n:,} rounds: the cold `report --json` is byte-identical to the reference "
                                   f"tree's: {m['same_as_reference']}")
            res.figures.append(Figure(f"{n:,} rounds: first report (builds the columns), median (p95)",
                                      median(walls), "s", f"< {c_target} s" if c_target else "",
                                      (median(walls) < c_target) if c_target else None,
                                      note=f"p95 {percentile(walls, 0.95):.2f} s, spread {walls[0]:.2f}-"
                                           f"{walls[-1]:.2f} s over {len(walls)} run(s); CPU median "
                                           f"{median(cpus):.1f} s ({cpus[0]:.1f}-{cpus[-1]:.1f}); peak "
                                           f"{max(mbs):.0f} MB; generating the store: {m['generate_s']:.0f} s"))
            if c_mb:
                res.figures.append(Figure(f"{n:,} rounds: first report, peak memory", max(mbs), "MB",
                                          f"< {c_mb:.0f} MB", max(mbs) < c_mb))
            if m["trees"] and max(t[0] for t in m["trees"]):
                rss, pss = max(t[0] for t in m["trees"]), max(t[1] for t in m["trees"])
                res.figures.append(Figure(f"{n:,} rounds: first report, peak memory of the process tree (PSS added)",
                                          pss, "MB", f"< {c_mb:.0f} MB" if c_mb else "",
                                          (pss < c_mb) if c_mb else None,
                                          note=f"resident sizes added (a fork's shared pages twice): {rss:.0f} MB"))
            if m["loads"]:
                res.details.append(f"- {n:,} rounds: load average before each cold run: "
                                   + ", ".join(f"{x:.1f}" for x in m["loads"]))
            res.details.append(f"- {n:,} rounds: cold runs " + ", ".join(f"{t:.2f} s / {c:.1f} s CPU"
                                                                       for t, _, c in m["colds"]))
        extra = m["after_override_s"] - med
        extra_cpu = m["after_override_cpu"] - median(m["warm_cpu"])
        res.figures.append(Figure(f"{n:,} rounds: extra time of the first report after an override", extra, "s",
                                  "< 1 s" if n == 10000 else "", (extra < 1.0) if n == 10000 else None,
                                  note=("override seen" if m["override_seen"] else "OVERRIDE NOT SEEN")
                                  + f"; extra CPU {extra_cpu:.2f} s"))
        res.details.append(f"- {n:,} rounds ({m['models']} models, {m['dilemmas']} dilemmas): warm runs "
                           + ", ".join(f"{t:.2f}" for t in m["warm_s"]) + " s")
    by_n = {m["n"]: median(m["warm_s"]) for m in got}
    for a, b in ((1000, 10000), (10000, 100000)):
        if a in by_n and b in by_n:
            k = math.log(by_n[b] / by_n[a]) / math.log(b / a)
            res.figures.append(Figure(f"growth exponent {a:,} → {b:,}", k, "", "≤ 1" if b == 100000 else "",
                                      (k <= 1.0) if b == 100000 else None))
    res.method = ("Each report is a fresh `python -m ebtui report --store S --json` process timed from spawn to "
                  "exit; peak memory is the child's ru_maxrss (os.wait4). Stores from benchmarks.gen_store. "
                  "Cold: first report (store check + building the analysis columns); warm: the columns are up "
                  "to date; after override: `ebtui rounds override` in another process first.")
    return res


#: the column build alone, in a fresh process: its wall and CPU seconds (this process and its workers) and
#: peak memory, printed as one line (run by `columns_only` with each tree's code)
_BUILD = """
import os, resource, sys, time
t0 = time.perf_counter()
from ebtui.core.analysis.source import facts_source
from ebtui.core.store import ResultsStore
store = ResultsStore(sys.argv[1])
t1 = time.perf_counter()
facts = facts_source(store).facts()
t2 = time.perf_counter()
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
# (ru_maxrss survives exec: the spawning benchmark's own size; the kernel's high-water mark of this process)
hwm = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM:")) / 1024
print(t1 - t0, t2 - t1, me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, hwm,
      kids.ru_maxrss / 1024, len(facts), os.getloadavg()[0])
"""


def columns_only(store: Path, runs: int) -> None:
    """Issue 38's column build alone (`--columns STORE`): `runs` cold builds of `<store>/columns/facts.parquet`
    with this tree's code, interleaved with the --reference tree's, each in a fresh process (imports and the
    store's open included in CPU, not in the build's wall); the reference's file and this tree's are compared
    with pyarrow's Table.equals (metadata included)."""
    import pyarrow.parquet as pq

    trees = [("this tree", ROOT)] + [("reference", r) for r in REFERENCE]
    got: dict[str, list[list[float]]] = {name: [] for name, _ in trees}
    tables = {}
    for _ in range(runs):
        for name, root in trees:
            shutil.rmtree(store / "columns", ignore_errors=True)
            (store / "index.check.json").unlink(missing_ok=True)
            env = {**os.environ, "PYTHONPATH": str(root)}
            out = subprocess.run([sys.executable, "-c", _BUILD, str(store)], env=env, cwd=root, check=True,
                                 capture_output=True, text=True).stdout.split()
            got[name].append([float(x) for x in out])
            tables[name] = pq.read_table(store / "columns" / "facts.parquet")
    for name, rows in got.items():
        builds, cpus = sorted(r[1] for r in rows), sorted(r[2] for r in rows)
        print(f"{name}: build wall median {median(builds):.2f} s (p95 {percentile(builds, 0.95):.2f}, "
              f"{builds[0]:.2f}-{builds[-1]:.2f}); CPU median {median(cpus):.2f} s ({cpus[0]:.2f}-{cpus[-1]:.2f}); "
              f"peak {max(r[3] for r in rows):.0f} MB (worker {max(r[4] for r in rows):.0f} MB); "
              f"{int(rows[0][5]):,} rows; load {min(r[6] for r in rows):.1f}-{max(r[6] for r in rows):.1f}")
    if REFERENCE:
        same = tables["this tree"].equals(tables["reference"], check_metadata=True)
        print(f"Parquet content equal to the reference's: {same}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sizes", help="comma-separated round counts")
    p.add_argument("--runs", type=int)
    p.add_argument("--keep", type=Path, help="where to make (and keep, to reuse) the stores")
    p.add_argument("--no-cold", action="store_true", help="keep the columns a previous run built (no cold run)")
    p.add_argument("--cold-runs", type=int, default=1, help="first reports per size (below 100,000 rounds)")
    p.add_argument("--rejudged", type=float, default=0.0, help="share of rounds re-judged by another judge")
    p.add_argument("--reference", type=Path, help="a source tree (e.g. `git worktree add` of the commit before a "
                   "change) whose cold `report --json` must give the same bytes")
    p.add_argument("--columns", type=Path, metavar="STORE",
                   help="only the cold build of the analysis columns of STORE (see columns_only), --runs times")
    a = p.parse_args()
    REFERENCE[:] = [a.reference.resolve()] if a.reference else []
    if a.columns:
        columns_only(a.columns.resolve(), a.runs or 3)
        return
    REJUDGED[0] = a.rejudged
    sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else None
    load = os.getloadavg()
    res = bench_analysis(a.quick, sizes, a.runs, a.keep, not a.no_cold, a.cold_runs)
    print(f"load average: before {' / '.join(f'{x:.2f}' for x in load)}, after "
          f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for f in res.figures:
        print(f"| {f.name} | {f.value_text()} | {f.target} | {f.verdict()} | {f.note} |")
    print("\n".join(res.details))


if __name__ == "__main__":
    main()
