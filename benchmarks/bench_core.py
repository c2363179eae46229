"""Benchmarks of the core: orchestration (1), overhead per call (2) and storage scaling (3, store part)."""

from __future__ import annotations

import asyncio
import heapq
import random
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import BenchResult, Figure, LatencyScriptedClient, median, now, percentile
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PhaseType, Round, RoundStatus
from ebtui.core.round import RoundSpec, play_round
from ebtui.core.store import ResultsStore
from ebtui.core.tournament import RoundCompleted, TournamentFinished, TournamentRunner
from ebtui.core.tournament.config import TournamentConfig
from ebtui.providers.scripted import ScriptedClient

P = PhaseType


def critical_path(r: Round) -> float:
    """presentation + max(response + rebuttal, consistency test) + judgment, from the phases' latencies."""
    lat = {ph.phase_type: ph.latency or 0.0 for ph in r.phases}
    return (lat.get(P.PRESENTATION, 0.0)
            + max(lat.get(P.RESPONSE, 0.0) + lat.get(P.REBUTTAL, 0.0), lat.get(P.CONSISTENCY_TEST, 0.0))
            + lat.get(P.JUDGMENT, 0.0))


def list_schedule(lengths: list[float], slots: int) -> float:
    """Makespan of greedy list scheduling: jobs in the given order, each to the first free slot — what a
    zero-overhead runner with `slots` exchanges in flight would take for these exact latencies."""
    free = [0.0] * slots
    heapq.heapify(free)
    end = 0.0
    for length in lengths:
        start = heapq.heappop(free)
        finish = start + length
        end = max(end, finish)
        heapq.heappush(free, finish)
    return end


def _models(n: int) -> list[str]:
    return [f"m{i + 1}" for i in range(n)]


# ---------------------------------------------------------------------------------------------------------
# 1. orchestration
# ---------------------------------------------------------------------------------------------------------
def bench_orchestration(quick: bool = False) -> BenchResult:
    res = BenchResult("orchestration", "1. Orchestration: tournament wall time against the critical-path bound")
    models = _models(3 if quick else 4)
    dilemmas = load_dilemmas()
    if quick:
        dilemmas = dilemmas[:1]
    concurrency = 2 if quick else 8
    repeats = 1 if quick else 2
    scale = 0.002 if quick else 1 / 70  # real phases take ~10-20 s; scaled down to keep the run short
    seed = 20261105

    with tempfile.TemporaryDirectory(prefix="ebtui-bench-orch-") as tmp:
        store = ResultsStore(Path(tmp) / "store")
        clients = {m: LatencyScriptedClient(m, scale=scale, seed=seed) for m in models}
        config = TournamentConfig(name="bench", models=models, dilemmas=[d.id for d in dilemmas],
                                  concurrency=concurrency, rounds_per_pairing=repeats, seed=seed)
        runner = TournamentRunner(config, clients, store, dilemmas=dilemmas, progress_interval_s=5.0)

        async def go() -> tuple[float, list[Round]]:
            done: list[Round] = []
            t0 = now()
            async for ev in runner.run():
                if isinstance(ev, RoundCompleted):
                    done.append(ev.round)
                elif isinstance(ev, TournamentFinished):
                    break
            return now() - t0, done

        wall, rounds = asyncio.run(go())
        store.close()

    complete = [r for r in rounds if r.status == RoundStatus.COMPLETE]
    # the exchanges in the order the runner starts them (its schedule order), with their critical paths
    order = {sr.round_id(runner.tournament_id): i for i, sr in enumerate(runner.schedule.rounds)}
    rounds.sort(key=lambda r: order.get(r.id, 0))
    paths = [critical_path(r) for r in rounds]
    calls = [lat for c in clients.values() for _, lat in c.samples]
    sequential = sum(calls)
    simple_lb = max(max(paths), sum(paths) / concurrency)
    ls = list_schedule(paths, concurrency)
    ratio = wall / simple_lb
    ratio_ls = wall / ls
    res.figures = [
        Figure("Wall time ÷ critical-path lower bound max(longest round, Σ round paths ÷ C)", ratio, "×",
               "≤ 1.05", ratio <= 1.05),
        Figure("Wall time ÷ zero-overhead list schedule of the same rounds in the runner's order", ratio_ls, "×",
               "≤ 1.05", ratio_ls <= 1.05),
        Figure("Speed-up over the five phases one after another, round after round (Σ all call latencies)",
               sequential / wall, "×", "", None),
        Figure("Tournament wall time", wall, "s"),
    ]
    res.method = (
        f"`TournamentRunner` over {len(models)} scripted models × {len(dilemmas)} dilemmas × "
        f"{repeats} repeat(s), rotating judges: {len(rounds)} rounds ({len(complete)} complete), "
        f"{len(calls)} model calls, concurrency C = {concurrency} exchanges in flight, results saved to a "
        "real store (its BackgroundSaver writer thread, fsync on). Every call sleeps a sampled time: time to first token "
        "and generation time are each log-normal (σ = 0.35) around per-phase medians (presentation 1.5 + "
        "14 s, response 1.5 + 12 s, rebuttal 1.5 + 11 s, consistency 1.2 + 8 s, judgment 2 + 16 s) scaled "
        f"by {scale:.4g}, seeded; tokens stream one `Delta` each, in {24} bursts per call.\n\n"
        "Lower bound. A round's phases form a small graph: the presentation, then the response → rebuttal "
        "chain alongside the consistency test, then the judgment, so with unlimited calls a round takes "
        "at least its critical path `L = pres + max(resp + reb, cons) + judg` (from the latencies each call "
        "actually sampled). With at most C rounds in flight, no schedule finishes before "
        "`max(max L, Σ L ÷ C)`. That bound ignores that rounds are indivisible, so a perfect runner still "
        "exceeds it by up to one round's length at the tail; the second figure compares with the greedy "
        "list schedule (rounds in the runner's start order, each to the first free slot — exactly what "
        "a runner with zero overhead would do), which isolates the orchestration overhead."
    )
    res.details = [
        f"- Σ all call latencies (strictly sequential): {sequential:.2f} s; Σ round critical paths: "
        f"{sum(paths):.2f} s; longest round: {max(paths):.3f} s; mean round: {sum(paths) / len(paths):.3f} s",
        f"- lower bound max(max L, Σ L ÷ C) = {simple_lb:.3f} s; list schedule = {ls:.3f} s; wall = {wall:.3f} s",
        f"- overhead over the list schedule: {wall - ls:+.3f} s in total, "
        f"{(wall - ls) / max(1, len(calls)) * 1000:+.2f} ms per call",
    ]
    return res


# ---------------------------------------------------------------------------------------------------------
# 2. overhead per call
# ---------------------------------------------------------------------------------------------------------
def _model_only_ms(clients: dict[str, ScriptedClient], spec: RoundSpec, n: int = 50) -> float:
    """The zero-latency scripted model's own time per call (text generation, token split): not ebtui's
    orchestration, measured separately so it can be taken out."""
    from ebtui.core import prompts

    d = spec.dilemma
    pres = clients[spec.team_a]._generic_reply(prompts.presentation_prompt(d))
    resp = clients[spec.team_b]._generic_reply(prompts.response_prompt(d, pres))
    ps = [prompts.presentation_prompt(d), prompts.response_prompt(d, pres), prompts.rebuttal_prompt(d, pres, resp),
          prompts.consistency_prompt(d, pres)]

    async def one() -> None:
        for p in ps:
            async for _ in clients[spec.team_a].stream(p, prompts.SYSTEM_PROMPT):
                pass

    t0 = now()
    for _ in range(n):
        asyncio.run(one())
    return (now() - t0) / (n * len(ps)) * 1000


def _round_loop(n: int, durable: bool, tmp: Path) -> tuple[list[float], list[float], float, float]:
    """Per call: wall ms and process CPU ms (the writer thread included) per round ÷ 5; the scripted
    model's own ms per call; round files written per round."""
    dilemmas = load_dilemmas()
    models = _models(3)
    clients = {m: ScriptedClient(m) for m in models}
    store = ResultsStore(tmp / f"store-{'durable' if durable else 'nosync'}", durable=durable)
    writes = [0]
    save = store.save_round

    def counting_save(round_: Round) -> Path:  # what the store's writer thread actually writes
        writes[0] += 1
        return save(round_)

    store.save_round = counting_save  # type: ignore[method-assign]
    per_call_ms: list[float] = []
    per_call_cpu: list[float] = []

    async def go() -> None:
        for i in range(n):
            d = dilemmas[i % len(dilemmas)]
            a, b, j = models[i % 3], models[(i + 1) % 3], models[(i + 2) % 3]
            spec = RoundSpec(dilemma=d, team_a=a, team_b=b, judge=j)
            t0, c0 = now(), time.process_time()
            r = await play_round(spec, clients, store)
            per_call_ms.append((now() - t0) / 5 * 1000)
            per_call_cpu.append((time.process_time() - c0) / 5 * 1000)
            assert r.status == RoundStatus.COMPLETE, r.error

    asyncio.run(go())
    store.close()
    spec = RoundSpec(dilemma=dilemmas[0], team_a=models[0], team_b=models[1], judge=models[2])
    return per_call_ms, per_call_cpu, _model_only_ms(clients, spec), writes[0] / n


def _tournament_zero_latency(n_rounds: int, tmp: Path) -> tuple[float, float, int]:
    dilemmas = load_dilemmas()
    models = _models(3)
    repeats = max(1, round(n_rounds / (6 * len(dilemmas))))
    config = TournamentConfig(name="overhead", models=models, concurrency=8, rounds_per_pairing=repeats)
    store = ResultsStore(tmp / "store-tournament")
    runner = TournamentRunner(config, {m: ScriptedClient(m) for m in models}, store, dilemmas=dilemmas,
                              progress_interval_s=5.0)
    t0, c0 = now(), time.process_time()
    t = asyncio.run(runner.run_to_end())
    wall, cpu = now() - t0, time.process_time() - c0
    store.close()
    assert t.status.value == "complete", t.note
    return wall, cpu, len(runner.schedule) * 5


def bench_overhead(quick: bool = False) -> BenchResult:
    res = BenchResult("overhead", "2. Overhead: orchestration plus storage per model call (zero-latency model)")
    n = 20 if quick else 1000
    trials = 3 if quick else 5
    per = n // trials
    tr: dict[str, list[float]] = {"wd": [], "cd": [], "wn": [], "cn": [], "net": [], "tour": []}
    durable_ms: list[float] = []
    durable_cpu: list[float] = []
    nosync_ms: list[float] = []
    nosync_cpu: list[float] = []
    writes_d = writes_n = 0.0
    t_wall = t_cpu = 0.0
    t_calls = 0
    with tempfile.TemporaryDirectory(prefix="ebtui-bench-over-") as tmp_:
        for t in range(trials):
            tmp = Path(tmp_) / f"trial-{t}"
            tmp.mkdir()
            wd, cd, model_ms, writes_d = _round_loop(per, True, tmp)
            wn, cn, _, writes_n = _round_loop(per, False, tmp)
            tw, tc, calls = _tournament_zero_latency(30 if quick else n // trials, tmp)
            durable_ms += wd
            durable_cpu += cd
            nosync_ms += wn
            nosync_cpu += cn
            t_wall, t_cpu, t_calls = t_wall + tw, t_cpu + tc, t_calls + calls
            tr["wd"].append(median(wd))
            tr["cd"].append(median(cd))
            tr["wn"].append(median(wn))
            tr["net"].append(median(wn) - model_ms)
            tr["tour"].append(tw / calls * 1000)
    med_d, med_n = median(durable_ms), median(nosync_ms)
    cpu_d, cpu_n = median(durable_cpu), median(nosync_cpu)
    def p95(key: str) -> float:
        return percentile(tr[key], 0.95)

    res.figures = [
        Figure("Per call, `play_round` + store (fsync on, the default), wall time, incl. the model's own work: "
               "95th percentile of the trials' medians", p95("wd"), "ms", "< 1 ms", p95("wd") < 1.0),
        Figure("Same, CPU time (the process, the store's writer thread included)", p95("cd"), "ms", "< 1 ms",
               p95("cd") < 1.0),
        Figure("Per call, `play_round` + store with `EBTUI_STORE_FSYNC=0`, wall time, p95 of the trials", p95("wn"),
               "ms", "< 1 ms", p95("wn") < 1.0),
        Figure("Same, less the zero-latency scripted model's own work per call", p95("net"), "ms", "< 1 ms",
               p95("net") < 1.0),
        Figure("Per call in a zero-latency tournament (C = 8, fsync on), wall time ÷ calls, p95 of the trials",
               p95("tour"), "ms", "< 1 ms", p95("tour") < 1.0),
    ]
    res.method = (
        f"{trials} trials, each {n // trials} rounds played one after another with `play_round` (the round engine, as `ebtui run` and the "
        "TUI use it) against `ScriptedClient` with no latency and infinite tokens/s, saving to a fresh "
        "`ResultsStore` in a temporary directory. The engine hands a snapshot of the round to the store's "
        "`BackgroundSaver` at every phase transition (11 a round); its writer thread writes only the newest "
        "snapshot of a round when it gets to it (counted below), and `play_round` returns once the round's "
        "last write is on disk (RoundFinished means saved). Time per round ÷ 5 calls, the median over the "
        "rounds; wall time and process CPU time (`time.process_time()`, all threads), because with fsync "
        "the wall time is dominated by the shared disk's fsync jitter. The scripted model's own work per "
        "call (building its reply, splitting tokens) is measured alone and shown separately. The tournament "
        f"figure is the wall time of a {t_calls // 5}-round zero-latency tournament ÷ its calls (a mean)."
    )
    res.details = [
        f"- {trials} trials of {per} rounds (and a {n // trials}-round tournament each); per-trial medians, wall "
        f"fsync on: {', '.join(f'{x:.3f}' for x in tr['wd'])} ms; CPU: {', '.join(f'{x:.3f}' for x in tr['cd'])} "
        f"ms; fsync off: {', '.join(f'{x:.3f}' for x in tr['wn'])} ms; tournament: "
        f"{', '.join(f'{x:.3f}' for x in tr['tour'])} ms",
        f"- fsync on: median {med_d:.3f} ms, p90 {percentile(durable_ms, 0.9):.3f} ms per call (wall); CPU median "
        f"{cpu_d:.3f} ms, p90 {percentile(durable_cpu, 0.9):.3f} ms; round files written {writes_d:.2f} a round",
        f"- fsync off: median {med_n:.3f} ms, p90 {percentile(nosync_ms, 0.9):.3f} ms per call (wall); CPU median "
        f"{cpu_n:.3f} ms; round files written {writes_n:.2f} a round",
        f"- the scripted model alone: {model_ms:.3f} ms per call",
        f"- tournament: {t_calls // 5} rounds in {t_wall:.2f} s, CPU {t_cpu:.2f} s ({t_cpu / t_calls * 1000:.3f} ms "
        "per call)",
    ]
    return res


# ---------------------------------------------------------------------------------------------------------
# 3. storage scaling
# ---------------------------------------------------------------------------------------------------------
def template_round() -> Round:
    """One real complete round (scripted models), to copy: realistic size and shape."""
    d = load_dilemmas()[0]
    clients = {m: ScriptedClient(m) for m in ("m1", "m2", "m3")}
    r = asyncio.run(play_round(RoundSpec(dilemma=d, team_a="m1", team_b="m2", judge="m3"), clients))
    assert r.status == RoundStatus.COMPLETE
    return r


def variant(template: Round, i: int, rng: random.Random, dilemma_ids: list[str], models: list[str],
            tournaments: list[str]) -> Round:
    a, b, j = rng.sample(models, 3)
    r = template.model_copy(deep=False)
    r.id = f"bench-{i:06d}"
    r.exchange_id = r.id
    r.dilemma_id = rng.choice(dilemma_ids)
    r.team_a_model, r.team_b_model, r.judge_model = a, b, j
    r.tournament_id = rng.choice(tournaments)
    return r


def bench_storage(quick: bool = False) -> BenchResult:
    res = BenchResult("storage", "3. Storage scaling")
    n = 600 if quick else 10_000
    window = 21 if quick else 101
    early = 100
    template = template_round()
    rng = random.Random(11)
    dilemmas = [d.id for d in load_dilemmas()]
    models = _models(6)
    tournaments = [f"t{i}" for i in range(5)]
    tmp_ = tempfile.mkdtemp(prefix="ebtui-bench-store-")
    root = Path(tmp_) / "store"
    store = ResultsStore(root)  # durable (the default)
    half = window // 2
    lo_a, hi_a = early - half, early + half + 1
    lo_b, hi_b = n - half, n + half + 1
    times: dict[int, float] = {}
    cpu_times: dict[int, float] = {}
    index_writes_in: dict[str, int] = {"early": 0, "late": 0}
    t_build = now()
    for i in range(1, hi_b):
        r = variant(template, i, rng, dilemmas, models, tournaments)
        in_window = lo_a <= i < hi_a or lo_b <= i < hi_b
        if not in_window:
            store.durable = False  # filling the store fast between the windows; the windows use fsync
        before = store.index_writes
        t0, c0 = now(), time.process_time()
        store.save_round(r)
        dt, dc = now() - t0, time.process_time() - c0
        store.durable = True
        if in_window:
            times[i] = dt
            cpu_times[i] = dc
            if store.index_writes != before:
                index_writes_in["early" if i < hi_a else "late"] += 1
    store.flush()
    build_s = now() - t_build
    a = [times[i] * 1000 for i in range(lo_a, hi_a)]
    b = [times[i] * 1000 for i in range(lo_b, hi_b)]
    ratio = median(b) / median(a)
    ca = [cpu_times[i] * 1000 for i in range(lo_a, hi_a)]
    cb = [cpu_times[i] * 1000 for i in range(lo_b, hi_b)]
    cpu_ratio = median(cb) / median(ca)
    mean_ratio = (sum(b) / len(b)) / (sum(a) / len(a))
    size_mb = sum(f.stat().st_size for f in (root / "rounds").iterdir()) / 1e6
    index_mb = (root / "index.json").stat().st_size / 1e6
    store.close()

    # filtered load_rounds over the whole store
    filt = {"dilemma": dilemmas[0], "model": models[0], "role": "team_a"}
    warm = ResultsStore(root)
    t0 = now()
    first = warm.load_rounds(**filt)
    cold_ms = (now() - t0) * 1000
    warm_ms: list[float] = []
    for _ in range(3 if quick else 7):
        t0 = now()
        got = warm.load_rounds(**filt)
        warm_ms.append((now() - t0) * 1000)
    q_ms: list[float] = []
    for _ in range(5):
        t0 = now()
        warm.query(model=models[1], status="complete")
        q_ms.append((now() - t0) * 1000)
    assert len(got) == len(first)
    warm.close()
    lr = median(warm_ms)
    res.figures = [
        Figure(f"Save of round {n:,} ÷ save of round {early} (medians of {window} saves around each), wall time",
               ratio, "×", "≤ 2×", ratio <= 2.0),
        Figure("Same, CPU time (wall is dominated by fsync jitter on a shared disk)", cpu_ratio, "×", "≤ 2×",
               cpu_ratio <= 2.0),
        Figure(f"Filtered `load_rounds` over {n:,} rounds ({len(first)} match), store already open", lr, "ms",
               "< 100 ms", lr < 100),
        Figure("Same, first call on a freshly opened store", cold_ms, "ms", "< 100 ms", cold_ms < 100),
    ]
    res.method = (
        f"One `ResultsStore` (fsync on) in a temporary directory filled with {n + half:,} copies of a real "
        "complete scripted round (5 phases with their prompts, a judgment; varied ids, dilemmas, models and "
        "tournaments). Each save in the two windows is timed on its own; between the windows the store is "
        "filled with fsync off to keep the run short (the index and files are the same). "
        f"The filter is `load_rounds(dilemma={filt['dilemma']!r}, model={filt['model']!r}, role='team_a')`; "
        "its time is the median of repeated calls on an open store — the first call on a freshly opened "
        "store is shown too: it reads index.check.json (trusted when index.json's stamp, the rounds folder's "
        "mtime and its file count match what the note records, and no `.unindexed-*` marker exists), picks "
        "the ids from the note's filter columns without parsing index.json, then reads those round files."
    )
    res.details = [
        f"- save around round {early}: median {median(a):.2f} ms, p90 {percentile(a, 0.9):.2f} ms, mean "
        f"{sum(a) / len(a):.2f} ms ({index_writes_in['early']} index write(s) in the window); CPU median "
        f"{median(ca):.2f} ms",
        f"- save around round {n:,}: median {median(b):.2f} ms, p90 {percentile(b, 0.9):.2f} ms, mean "
        f"{sum(b) / len(b):.2f} ms ({index_writes_in['late']} index write(s) in the window); mean ratio "
        f"{mean_ratio:.2f}×; CPU median {median(cb):.2f} ms",
        f"- store: {size_mb:.0f} MB of round files ({size_mb * 1000 / (n + half):.1f} KB each), index.json "
        f"{index_mb:.1f} MB; built in {build_s:.1f} s",
        f"- `query(model=..., status='complete')` (index only, no files read): median {median(q_ms):.1f} ms",
    ]

    # the results browser (the TUI's screen) over the same store
    from benchmarks.bench_tui import browser_times

    shown = browser_times(root, trials=2 if quick else 7)
    br = median([t for t, _ in shown])
    br95 = percentile([t for t, _ in shown], 0.95)
    res.figures.append(Figure(f"Results browser shows the {n:,}-round store (F3 to the first page's rows "
                              "painted), 95th percentile (median in the details)", br95 * 1000, "ms",
                              "< 1,000 ms", br95 < 1.0))
    res.details.append(f"- browser: median {br * 1000:.0f} ms; {', '.join(f'{t * 1000:.0f} ms' for t, _ in shown)} over {len(shown)} "
                       f"trials, each with a freshly opened store; count line: “{shown[-1][1]}”")
    shutil.rmtree(tmp_, ignore_errors=True)
    return res
