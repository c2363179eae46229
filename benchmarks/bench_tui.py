"""Benchmarks of the app: the results browser (3), live streaming (4) and start-up (5)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

from benchmarks.common import BenchResult, Figure, median, now, percentile
from ebtui.launcher import tune_frame_rate

# Textual at the frame rate `ebtui` gives it, set before Textual is first imported (each benchmark runs in an
# interpreter of its own)
tune_frame_rate()

ROOT = Path(__file__).resolve().parent.parent
SIZE = (160, 48)


def _services(store: Any) -> Any:
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.dilemmas import cached_builtin_dilemmas
    from ebtui.core.usecases.models import ModelChoices
    from ebtui.providers.scripted import ScriptedClient
    from ebtui.tui.services import Services

    names = ["m1", "m2", "m3"]
    context = open_context(store_obj=store, make_clients=lambda wanted: {n: ScriptedClient(n) for n in wanted})
    choices = ModelChoices(names=names, default="m1", details={}, seats=("m1", "m1", "m1"))
    # as default_services on a first-screen cache miss: the built-in dilemmas' records, before the app is built
    return Services(context=context, dilemmas=cached_builtin_dilemmas(), choices=choices)


def _frame_app(services: Any) -> Any:
    """The real app, with a clock on its frames: every compositor update it would write to the terminal
    is timestamped (in headless mode Textual still composes the update; only the write is skipped)."""
    from ebtui.tui.app import EbtuiApp

    class FrameClockApp(EbtuiApp):
        # CSS_PATH is relative to the module defining the class: point back at the app's own sheets (all of them:
        # the setup screen's and the results browser's are read with the app's)
        CSS_PATH = [str(Path(sys.modules[EbtuiApp.__module__].__file__ or "").parent / p)
                    for p in cast("list[str]", EbtuiApp.CSS_PATH)]

        def __init__(self, services: Any) -> None:
            super().__init__(services, load_user_themes=False, tune_gc=True)  # as in a terminal
            self.frames: list[float] = []
            self.frame_cpu: list[float] = []  # process CPU time at each frame
            self.frame_event = asyncio.Event()
            self.probe: Any = None  # a callable: True once the frame shows what we wait for
            self.update: Any = None  # the update the latest frame painted (what the terminal would be sent)

        def _display(self, screen: Any, renderable: Any) -> None:
            super()._display(screen, renderable)
            if renderable is not None:
                self.update = renderable
                self.frames.append(time.perf_counter())
                self.frame_cpu.append(time.process_time())
                if self.probe is not None and self.probe():
                    self.probe = None
                    self.frame_event.set()

    return FrameClockApp(services)


def _release() -> None:
    """After a trial: what the app froze out of the collector's sight (it does, as in a terminal, once its
    first frame is up: `gc.freeze()`) goes back, so the next trial starts from the same heap. A real app runs
    once per process; without this each trial's app stayed in memory for good (storage's peak: +40 MB a
    trial)."""
    import gc

    gc.unfreeze()
    gc.collect()


def _painted(update: Any, y: int, x1: int, x2: int) -> list[Any] | None:
    """The segments a frame's update paints on row `y` between columns x1 and x2 (None: it leaves that part of
    the row as it was), read from the update Textual hands to the driver (a full layout or changed spans)."""
    from textual._compositor import ChopsUpdate, LayoutUpdate

    if isinstance(update, LayoutUpdate):
        row = y - update.region.y
        if not 0 <= row < len(update.strips):
            return None
        return [seg for strip in update.strips[row] for seg in strip]
    if isinstance(update, ChopsUpdate):
        if not any(sy == y and sx1 <= x1 and sx2 >= x2 for sy, sx1, sx2 in update.spans):
            return None
        chops = update.chops[y] if y < len(update.chops) else {}
        return [seg for cut, strip in sorted(chops.items()) if strip is not None and x1 <= cut < x2 for seg in strip]
    return None


def _shows_scrolled(app: Any, body: Any, y0: float) -> bool:
    """The frame repaints the pane's body (every row of it) and the body's scroll offset has moved."""
    region = body.content_region
    return body.scroll_y != y0 and all(
        _painted(app.update, y, region.x, region.right) is not None for y in (region.y, region.bottom - 1))


def _shows_title_reversed(app: Any) -> bool:
    """The frame paints the focused pane's title (its role's name) reversed, on the pane's top border."""
    focused = app.focused
    pane = getattr(focused, "parent", None)
    role = getattr(pane, "role", None)
    if pane is None or role is None:
        return False
    region = pane.region
    segments = _painted(app.update, region.y, region.x, region.right) or []
    return any(seg.style is not None and seg.style.reverse and role in seg.text for seg in segments)


def _fps() -> int:
    from textual import constants

    return int(constants.MAX_FPS)


def _post_key(app: Any, key: str, char: str | None = None) -> None:
    """Deliver a key press as the terminal driver does, without waiting for anything: `Pilot.press` waits
    twice for the whole process to go idle (up to 1 s each), which never happens while text streams in."""
    from textual import events

    ev = events.Key(key, char)
    ev.set_sender(app)
    app._driver.send_message(ev)


async def _time_key(app: Any, key: str, probe: Any, timeout: float = 10.0, char: str | None = None
                    ) -> tuple[float, float]:
    """Press `key` and wait for the first frame composed while `probe()` holds (checked at every frame the
    compositor hands to the driver); (wall seconds, process CPU seconds) from the press to that frame."""
    app.frame_event.clear()
    app.probe = probe
    t0, c0 = time.perf_counter(), time.process_time()
    _post_key(app, key, char)
    await asyncio.wait_for(app.frame_event.wait(), timeout)
    return app.frames[-1] - t0, app.frame_cpu[-1] - c0


# ---------------------------------------------------------------------------------------------------------
# 3 (part). the results browser over a big store
# ---------------------------------------------------------------------------------------------------------
def browser_times(root: Path, trials: int = 5) -> list[tuple[float, str]]:
    """Seconds from pressing F3 (results) to the first frame with the table filled, each trial with a freshly
    opened store (the index is read from disk, as when the app starts)."""
    from textual.widgets import DataTable, Static

    from ebtui.core.store import ResultsStore
    from ebtui.tui.screens.results import ResultsScreen

    out: list[tuple[float, str]] = []
    for _ in range(trials):
        store = ResultsStore(root)
        app = _frame_app(_services(store))

        async def go(app: Any = app) -> tuple[float, str]:
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()

                def filled() -> bool:
                    s = app.screen
                    return (isinstance(s, ResultsScreen) and bool(s.entries)
                            and s.query_one(DataTable).row_count > 0)

                wall, _cpu = await _time_key(app, "f3", filled, timeout=30)
                count = str(app.screen.query_one("#results-count", Static).render())
                return wall, count

        out.append(asyncio.run(go()))
        store.close()
        _release()
    return out


# ---------------------------------------------------------------------------------------------------------
# 4. live streaming
# ---------------------------------------------------------------------------------------------------------
STREAM_TEXT = (
    "## The central tension\n\nThe case sets **autonomy** against *welfare*: the people deciding now, and "
    "those who will live with the decision. A consequentialist reading weighs expected welfare; a "
    "deontological one asks whether anyone is used merely as a means.\n\n- Stakeholders: the decision makers, "
    "the affected, and those represented only by proxy.\n- Uncertainty: I hold this view with about 70% "
    "confidence.\n- What would change my mind: evidence that the harm is reversible.\n\n"
)


def _stream_events(rate: float, seconds: float, counter: dict[str, int]) -> Any:
    """An event source for LiveRoundScreen: three phases running at once (Team A's presentation, Team B's
    response, the judge's judgment), `rate` tokens/s in total, spread evenly over the three panes."""
    from ebtui.core.events import PhaseStarted, TextDelta
    from ebtui.core.records import PhaseType
    from ebtui.providers.scripted import _TOKEN

    tokens = _TOKEN.findall(STREAM_TEXT)
    phases = (PhaseType.PRESENTATION, PhaseType.RESPONSE, PhaseType.JUDGMENT)

    async def events() -> AsyncIterator[Any]:
        rid = "bench-live"
        for pt, m in zip(phases, ("m1", "m2", "m3"), strict=True):
            yield PhaseStarted(rid, pt, m, 1)
        loop = asyncio.get_running_loop()
        tick = 0.02  # 50 wake-ups a second, each delivering its share to every pane
        per_tick = rate * tick
        start = loop.time()
        sent = 0.0
        k = 0
        while loop.time() - start < seconds:
            k += 1
            due = start + k * tick
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            sent += per_tick
            while counter["tokens"] < int(sent):
                i = counter["tokens"]
                pt = phases[i % 3]
                yield TextDelta(rid, pt, tokens[(i // 3) % len(tokens)])
                counter["tokens"] += 1
        counter["done"] = 1
        await asyncio.sleep(3600)  # stay "running" (as a long round would) until the benchmark ends

    return events


def bench_streaming(quick: bool = False) -> BenchResult:
    res = BenchResult("streaming", "4. Live streaming: three panes at 300 tokens/s in total")
    # --quick streams 4 s (EBTUI_BENCH_STREAM_S sets another length, for profiling)
    seconds = float(os.environ.get("EBTUI_BENCH_STREAM_S", "4")) if quick else 60.0
    rate = 300.0
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.round import RoundSpec
    from ebtui.core.store import ResultsStore
    from ebtui.tui.screens.live import LiveRoundScreen

    tmp = tempfile.mkdtemp(prefix="ebtui-bench-live-")
    store = ResultsStore(Path(tmp) / "store")
    app = _frame_app(_services(store))
    counter = {"tokens": 0, "done": 0}
    scroll_ms: list[float] = []  # home/end: the focused pane scrolls (a visible change)
    scroll_cpu: list[float] = []
    focus_ms: list[float] = []  # tab: focus moves to the next pane
    skipped = 0
    frames_during: list[float] = []
    cpu = wall = 0.0

    async def go() -> None:
        nonlocal cpu, wall, skipped
        from ebtui.tui.widgets.role_pane import PaneScroll

        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            d = load_dilemmas()[0]
            request = RoundSpec(dilemma=d, team_a="m1", team_b="m2", judge="m3")
            app.push_screen(LiveRoundScreen(request, _stream_events(rate, seconds, counter)))
            await pilot.pause()
            app.screen.query(PaneScroll).first().focus()
            await pilot.pause()
            c0, w0, f0 = time.process_time(), time.perf_counter(), len(app.frames)
            n0 = counter["tokens"]
            next_probe = w0 + 0.5
            cycle = ("home", "end", "tab")
            k = 0
            while not counter["done"]:
                await asyncio.sleep(0.05)
                if time.perf_counter() < next_probe:
                    continue
                key = cycle[k % len(cycle)]
                k += 1
                body = app.focused
                if key == "tab":
                    # the change on screen: the frame paints the newly focused pane's title reversed
                    wall_s, _ = await _time_key(
                        app, "tab", lambda b=body: app.focused is not b and _shows_title_reversed(app), char="\t")
                    focus_ms.append(wall_s * 1000)
                elif body is not None and body.max_scroll_y >= 2:
                    y0 = body.scroll_y
                    if (key == "home") == (y0 == 0):  # already there: nothing would change on screen
                        key = "end" if key == "home" else "home"
                    wall_s, cpu_s = await _time_key(app, key, lambda b=body, y=y0: _shows_scrolled(app, b, y))
                    scroll_ms.append(wall_s * 1000)
                    scroll_cpu.append(cpu_s * 1000)
                else:
                    skipped += 1  # the pane has nothing to scroll yet
                next_probe = time.perf_counter() + 0.5
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            frames_during.append((len(app.frames) - f0) / wall)
            counter["window"] = counter["tokens"] - n0
            await asyncio.sleep(1.0)  # a few more pumps (0.25 s each, up to two skipped after a key)
            counter["shown"] = sum(v.tokens for v in app.screen._views.values())
            screen = app.screen
            for worker in screen.workers:
                worker.cancel()
            await pilot.pause()

    asyncio.run(go())
    store.close()
    shutil.rmtree(tmp, ignore_errors=True)
    tokens = counter["window"]
    per_token_us = cpu / tokens * 1e6
    med, p95, worst = median(scroll_ms), percentile(scroll_ms, 0.95), max(scroll_ms, default=float("nan"))
    fmed, fp95 = median(focus_ms), percentile(focus_ms, 0.95)
    cmed = median(scroll_cpu)
    cp95 = percentile(scroll_cpu, 0.95)
    res.figures = [
        Figure("Key press (home/end) to the frame showing the focused pane scrolled, median", med, "ms"),
        Figure("Same, 95th percentile", p95, "ms", "< 50 ms", p95 < 50),
        Figure("CPU time the app spent between that key press and its frame, 95th percentile", cp95, "ms",
               "< 50 ms", cp95 < 50),
        Figure("Key press (tab) to the frame showing the next pane focused (its title reversed), 95th "
               "percentile (median in the details)", fp95, "ms", "< 50 ms", fp95 < 50),
        Figure(f"Tokens streamed per second (offered: {rate:.0f})", tokens / wall, "tok/s"),
        Figure("CPU time per streamed token (the whole app process)", per_token_us, "µs"),
        Figure("CPU load while streaming (CPU seconds ÷ wall seconds)", cpu / wall * 100, "%"),
    ]
    res.method = (
        f"The real app (`EbtuiApp`, headless via `App.run_test`, {SIZE[0]}×{SIZE[1]}) with its live round "
        "screen fed by an event source that keeps Team A's presentation, Team B's response and the judgment "
        f"running at once and delivers {rate:.0f} tokens/s in total ({rate / 3:.0f} per pane, 50 bursts a "
        f"second, Markdown with headings, emphasis and lists) for {seconds:.0f} s, Textual at {_fps()} frames/s "
        "at most (as `ebtui` runs it). Every 0.5 s the benchmark "
        "presses a key in the cycle home, end, tab: home/end scroll the focused pane to its top or bottom "
        "(a visible change: the pane's text moves), tab moves focus to the next pane. A key is delivered as "
        "the terminal driver delivers it (`driver.send_message(events.Key)`), without `Pilot.press`, which "
        "waits for the whole app to go idle — never, while text streams. The time runs from the key to the "
        "first frame the compositor hands to the driver that paints the change (read from the update itself: "
        "the frame repaints every row of the pane's body and its scroll offset has moved; for tab, the frame "
        "paints the newly focused pane's title, its role's name, in reverse video). Headless Textual composes every frame as it "
        "would for a terminal and skips only the final write. CPU time is `time.process_time()` over the "
        "streaming period ÷ tokens delivered."
    )
    res.details = [
        f"- {tokens:,} tokens in {wall:.1f} s ({tokens / wall:.0f}/s); all {counter['tokens']:,} the source "
        f"sent reached the panes' counts: {counter['shown'] == counter['tokens']} ({counter['shown']:,} counted); "
        f"{len(scroll_ms)} scroll key "
        f"presses: median {med:.1f} ms, p95 {p95:.1f} ms, worst {worst:.1f} ms"
        + (f" ({skipped} skipped: nothing to scroll yet)" if skipped else ""),
        f"- {len(focus_ms)} tab presses: median {fmed:.1f} ms, p95 {fp95:.1f} ms; scroll keys' CPU median "
        f"{cmed:.1f} ms",
        f"- frames composed while streaming: {frames_during[0]:.0f}/s; CPU {cpu:.2f} s over {wall:.1f} s",
    ]
    return res


# ---------------------------------------------------------------------------------------------------------
# 5. start-up
# ---------------------------------------------------------------------------------------------------------
def _ebtui_exe() -> str:
    exe = Path(sys.executable).parent / "ebtui"
    return str(exe) if exe.exists() else shutil.which("ebtui") or "ebtui"


def _help_times(n: int) -> list[float]:
    out = []
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    subprocess.run([_ebtui_exe(), "--help"], capture_output=True, env=env, check=True)  # warm the .pyc files
    for _ in range(n):
        t0 = now()
        subprocess.run([_ebtui_exe(), "--help"], capture_output=True, env=env, check=True)
        out.append(now() - t0)
    return out


def _list_filled(screen: Any) -> bool:
    from textual.widgets import OptionList

    lists = list(screen.query(OptionList))
    return bool(lists) and lists[0].option_count > 0


def _run_test_first_frame(n: int) -> list[float]:
    """In-process: from constructing the app to the first frame with the setup screen (imports excluded)."""
    from ebtui.core.store import ResultsStore
    from ebtui.tui.screens.setup import SetupScreen

    out = []
    for _ in range(n):
        tmp = tempfile.mkdtemp(prefix="ebtui-bench-first-")
        t0 = time.perf_counter()
        app = _frame_app(_services(ResultsStore(Path(tmp) / "store")))
        first: list[float] = []

        async def go(app: Any = app, first: list[float] = first) -> None:
            # the first frame that shows the dilemma list filled (not a placeholder)
            app.probe = lambda: isinstance(app.screen, SetupScreen) and _list_filled(app.screen)
            async with app.run_test(size=SIZE):
                await asyncio.wait_for(app.frame_event.wait(), 20)
                first.append(app.frames[-1])

        asyncio.run(go())
        out.append(first[0] - t0)
        shutil.rmtree(tmp, ignore_errors=True)
        _release()
    return out


def bench_startup(quick: bool = False) -> BenchResult:
    res = BenchResult("startup", "5. Start-up")
    n = 3 if quick else 9
    help_s = _help_times(n)
    h, h95 = median(help_s) * 1000, percentile(help_s, 0.95) * 1000
    res.figures.append(Figure("`ebtui --help`, wall time (subprocess), 95th percentile (median in the details)",
                              h95, "ms", "< 300 ms", h95 < 300))
    ff = _run_test_first_frame(n)
    rt, rt95 = median(ff) * 1000, percentile(ff, 0.95) * 1000
    res.figures.append(Figure("TUI in process (`run_test`): services and app constructed → first frame with the "
                              "dilemma list filled, 95th percentile (median in the details)", rt95, "ms",
                              "< 1,000 ms", rt95 < 1000))
    res.details.append(f"- in process: {', '.join(f'{t * 1000:.0f}' for t in ff)} ms (median {rt:.0f} ms); "
                       "the same from outside, in a terminal, is benchmark 7")
    res.method = (
        f"`ebtui --help` run {n} times as a subprocess of the venv's console script (after one warm-up run "
        "that writes the bytecode cache), wall time. In process: from building the services (the built-in "
        "dilemmas' records from their cache, as `ebtui` does when its first-screen cache misses) and constructing `EbtuiApp` (modules already imported) to "
        "the first composed frame in which the setup screen's dilemma list holds the dilemmas, under "
        "`run_test`. The time from launching `ebtui` in a real terminal to the list on screen is benchmark 7."
    )
    res.details.insert(0, f"- `--help`: {', '.join(f'{t * 1000:.0f}' for t in help_s)} ms (median {h:.0f} ms)")
    return res
