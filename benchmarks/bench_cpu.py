"""Benchmark 8: CPU time per model call, with streaming and durable storage as in real use.

`play_round` against scripted models that stream a realistic reply (≈ 700 tokens, Markdown) one token per
`Delta` at a real pace (asyncio sleeps between tokens, as a network stream delivers them), saving to a
durable store (fsync on, the default). The figure is the process CPU time (`time.process_time()`: every
thread, the store's writer included) per model call — what a tournament of thousands of calls costs a laptop,
independent of how long the models take.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common import BenchResult, Figure, median, percentile

#: a reply of ≈ 700 tokens (our own words) for every team phase; the judge answers with the scripted JSON
REPLY = (
    "## The central tension\n\nThe case sets **autonomy** against *welfare*: the people deciding now, and "
    "those who will live with the decision. A consequentialist reading weighs expected welfare; a "
    "deontological one asks whether anyone is used merely as a means.\n\n- Stakeholders: the decision makers, "
    "the affected, and those represented only by proxy.\n- Uncertainty: I hold this view with about 70% "
    "confidence.\n- What would change my mind: evidence that the harm is reversible.\n\n"
) * 9 + "Principle: candour is owed unless it causes grave harm.\nConclusion: tell the truth, gently."
#: network reads per call: each delivers its share of the tokens, one Delta each (an SSE stream's chunks)
WAKEUPS = 60


def _clients() -> dict[str, object]:
    """Scripted models that stream as a network does: one `Delta` per token, the tokens arriving in bursts
    (WAKEUPS a call, each after a real sleep) over a sampled time of ≈ 0.15 s a call."""
    from benchmarks.common import LatencyScriptedClient
    from ebtui.providers.scripted import ScriptRule

    out: dict[str, object] = {}
    for m in ("m1", "m2", "m3"):
        c = LatencyScriptedClient(m, scale=0.01, seed=5, wakeups=WAKEUPS)
        c.rules = [ScriptRule(match="# Your task: Team", reply=REPLY)]
        out[m] = c
    return out


def cpu_per_call(rounds: int, tmp: Path, durable: bool = True) -> tuple[float, float, int]:
    """(CPU ms per call, wall ms per call, tokens per team call) over `rounds` rounds played one by one."""
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.records import RoundStatus
    from ebtui.core.round import RoundSpec, play_round
    from ebtui.core.store import ResultsStore
    from ebtui.providers.scripted import _TOKEN

    dilemmas = load_dilemmas()
    clients = _clients()
    store = ResultsStore(tmp, durable=durable)

    async def go() -> None:
        for i in range(rounds):
            spec = RoundSpec(dilemma=dilemmas[i % len(dilemmas)], team_a="m1", team_b="m2", judge="m3")
            r = await play_round(spec, clients, store)  # type: ignore[arg-type]
            assert r.status == RoundStatus.COMPLETE, r.error

    c0, w0 = time.process_time(), time.perf_counter()
    asyncio.run(go())
    store.close()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu / (rounds * 5) * 1000, wall / (rounds * 5) * 1000, len(_TOKEN.findall(REPLY))


def model_only_per_call(rounds: int) -> float:
    """CPU ms per call of the scripted models alone: the same streams (four team replies and the judge's JSON
    a round, token by token at the same pace) consumed by a bare loop — the model's share, not ebtui's."""
    from ebtui.core import judgment, prompts
    from ebtui.core.dilemmas import load_dilemmas

    clients = _clients()
    d = load_dilemmas()[0]
    calls = [("m1", "# Your task: Team A's presentation", None), ("m2", "# Your task: Team B's response", None),
             ("m1", "# Your task: Team A's rebuttal", None), ("m1", "# Your task: Team A's consistency test", None),
             ("m3", prompts.presentation_prompt(d), judgment.JUDGMENT_SCHEMA)]

    async def go() -> None:
        for _ in range(rounds):
            for model, prompt, schema in calls:
                async for _item in clients[model].stream(prompt, prompts.SYSTEM_PROMPT,  # type: ignore[attr-defined]
                                                         json_schema=schema):
                    pass

    c0 = time.process_time()
    asyncio.run(go())
    return (time.process_time() - c0) / (rounds * 5) * 1000


class _Llmock:
    """llmock serving in a process of its own (its CPU is not the benchmark's), every request answered with
    REPLY, streamed as the OpenAI wire format does: one server-sent event per word."""

    def __init__(self) -> None:
        import json
        import os
        import socket
        import subprocess
        import sys
        import urllib.request

        exe = Path(sys.executable).with_name("llmock")
        if not exe.exists():
            raise FileNotFoundError("llmock is not installed (pip install llmock)")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([str(exe), "serve", "--host", "127.0.0.1", "--port", str(port),
                                      "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.base}/_llmock/verdict", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise RuntimeError("llmock did not start") from None
                time.sleep(0.1)
        body = json.dumps({"behaviors": [{"type": "reply", "text": REPLY, "times": None}]}).encode()
        urllib.request.urlopen(urllib.request.Request(f"{self.base}/_llmock/scenario", data=body,
                                                      headers={"content-type": "application/json"}))
        os.environ["EBTUI_BENCH_LLMOCK_KEY"] = "sk-bench"

    def client(self, *, raw: bool = False) -> object:
        """The OpenAI client as a tournament builds it (its retry layer around the SDK client), or the SDK
        client alone (`raw`)."""
        from ebtui.config import parse_model
        from ebtui.providers.registry import build_client, build_raw_client

        cfg = parse_model("bench-openai", {"provider": "openai", "model": "gpt-4o-mini",
                                           "base_url": f"{self.base}/v1", "api_key_env": "EBTUI_BENCH_LLMOCK_KEY"},
                          None)
        return build_raw_client(cfg) if raw else build_client(cfg)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def http_per_call(server: _Llmock, rounds: int, tmp: Path) -> tuple[float, float, int]:
    """(CPU ms per call of whole rounds, CPU ms per call of the same streams read by a bare loop, output
    tokens per call) with the real OpenAI SDK over HTTP."""
    from ebtui.core import prompts
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.round import RoundSpec, play_round
    from ebtui.core.store import ResultsStore

    dilemmas = load_dilemmas()
    store = ResultsStore(tmp)
    tokens: list[int] = []

    async def rounds_() -> None:
        client = server.client()
        clients = {"m1": client, "m2": client, "m3": client}
        for i in range(rounds):
            spec = RoundSpec(dilemma=dilemmas[i % len(dilemmas)], team_a="m1", team_b="m2", judge="m3")
            r = await play_round(spec, clients, store)  # type: ignore[arg-type]
            tokens.extend(p.usage.output_tokens for p in r.phases)
        await client.aclose()  # type: ignore[attr-defined]

    async def bare() -> None:
        client = server.client(raw=True)
        for _ in range(rounds * 5):
            async for _item in client.stream("A prompt.", prompts.SYSTEM_PROMPT):  # type: ignore[attr-defined]
                pass
        await client.aclose()  # type: ignore[attr-defined]

    c0 = time.process_time()
    asyncio.run(rounds_())
    engine = (time.process_time() - c0) / (rounds * 5) * 1000
    store.close()
    c0 = time.process_time()
    asyncio.run(bare())
    sdk = (time.process_time() - c0) / (rounds * 5) * 1000
    return engine, sdk, round(sum(tokens) / max(len(tokens), 1))


def bench_cpu(quick: bool = False) -> BenchResult:
    res = BenchResult("cpu", "8. CPU time per model call (streaming, durable store)")
    trials = 3 if quick else 7
    rounds = 2 if quick else 8
    per_trial: list[float] = []
    model: list[float] = []
    walls: list[float] = []
    tmp = Path(tempfile.mkdtemp(prefix="ebtui-bench-cpu-"))
    try:
        cpu_per_call(1, tmp / "warm")  # imports and first-call caches out of the figures
        for t in range(trials):
            cpu, wall, tokens = cpu_per_call(rounds, tmp / f"store-{t}")
            per_trial.append(cpu)
            walls.append(wall)
            model.append(model_only_per_call(rounds))
        http: list[tuple[float, float, int]] = []
        http_note = ""
        try:
            server = _Llmock()
        except (OSError, RuntimeError) as exc:
            http_note = f"- over HTTP: not measured ({exc})"
        else:
            try:
                http_per_call(server, 1, tmp / "http-warm")
                for t in range(trials):
                    http.append(http_per_call(server, max(rounds // 2, 1), tmp / f"http-{t}"))
            finally:
                server.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med, p95 = median(per_trial), percentile(per_trial, 0.95)
    mmed = median(model)
    res.figures = [
        Figure("CPU time per model call, the whole process (every thread; the scripted model's own streaming "
               "included), median of the trials", med, "ms"),
        Figure("Same, 95th percentile of the trials", p95, "ms", "< 20 ms", p95 < 20),
        Figure("The scripted model alone, streaming the same replies into a bare loop, per call", mmed, "ms"),
    ]
    if http:
        res.figures += [
            Figure(f"Over HTTP: CPU time per model call with the real OpenAI SDK against llmock (≈ {http[0][2]:,} "
                   "tokens an answer, a server-sent event each), whole rounds, median of the trials",
                   median([h[0] for h in http]), "ms"),
            Figure("Same calls read by a bare loop (the SDK, httpx and ebtui's event parsing alone: the "
                   "transport's share)", median([h[1] for h in http]), "ms"),
        ]
    res.method = (
        f"{trials} trials, each {rounds} rounds (5 model calls each) played one after another with `play_round` "
        f"against `ScriptedClient`s streaming a {tokens}-token Markdown reply for every team phase (the judge's "
        f"scripted JSON for the judgment), one `Delta` per token, arriving in {WAKEUPS} bursts a call after real "
        "`asyncio.sleep`s (as a network stream's reads deliver them), saving to a fresh durable `ResultsStore` (fsync on). Per trial: "
        "`time.process_time()` (every thread of the process, the store's writer included) ÷ calls. A warm-up "
        "round runs first, outside the figures. The scripted model's own share (its sleeps and a `Delta` per "
        "token — what a network stream also costs, though no part of ebtui) is shown beside it, measured after "
        "each trial by streaming the same five replies a round into a bare loop; it is not subtracted."
    )
    res.method += (
        " Over HTTP: llmock (`llmock serve`, in a process of its own, so its CPU is not counted) answers every "
        "request with the same reply in the OpenAI wire format, one server-sent event per word; rounds are "
        "played with the OpenAI client as a tournament builds it (`build_client`: the retry layer around the "
        "real `openai` SDK client) in every seat and a durable store, and the same number of calls is then "
        "streamed from the SDK client alone into a bare loop. No target: the issue's < 20 ms is ebtui's "
        "own CPU (the figure above); what a call costs over HTTP is mostly the transport's, shown beside it."
    )
    res.details = [f"- per trial: {', '.join(f'{x:.2f}' for x in per_trial)} ms CPU per call "
                   f"(spread {min(per_trial):.2f}-{max(per_trial):.2f}); wall {median(walls):.0f} ms per call",
                   f"- the scripted model alone: {', '.join(f'{x:.2f}' for x in model)} ms per call"]
    if http:
        res.details.append(f"- over HTTP, per trial: rounds {', '.join(f'{h[0]:.1f}' for h in http)} ms; bare "
                           f"loop {', '.join(f'{h[1]:.1f}' for h in http)} ms CPU per call")
    elif http_note:
        res.details.append(http_note)
    return res
