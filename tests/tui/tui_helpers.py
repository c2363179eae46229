"""Fixed records and event streams for the app's tests (no clocks, no random ids)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from factories import make_dilemmas  # noqa: F401 - the tui tests import it from here too
from textual.widgets import Input

from ebtui.core.events import PhaseFinished, PhaseStarted, RoundEvent, RoundFinished, TextDelta
from ebtui.core.records import (
    PHASE_ORDER,
    PHASE_SPEAKER,
    Judgment,
    Phase,
    PhaseStatus,
    Round,
    RoundStatus,
    Scores,
)
from ebtui.providers.base import ModelClient, Usage
from ebtui.providers.scripted import ScriptedClient

FIXED_TIME = datetime(2026, 11, 5, 14, 30, tzinfo=UTC)


async def wait_until(predicate: Callable[[], object], timeout: float = 20.0) -> None:
    """Poll `predicate` every 50 ms until it holds; fail the test after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.05)


def scripted_factory(judge_mode: str = "valid", tokens_per_second: float | None = None
                     ) -> Callable[[Iterable[str]], dict[str, ModelClient]]:
    def make(names: Iterable[str]) -> dict[str, ModelClient]:
        return {n: ScriptedClient(n, judge_mode=judge_mode, tokens_per_second=tokens_per_second)  # type: ignore[arg-type]
                for n in names}
    return make

TEXTS = {
    "presentation": "## Principle first\n\nThe keeper owes **honesty** to the harbour, but the duty is not absolute."
                    "\n\nPrinciple: keep records true unless truth itself causes grave harm.\n"
                    "Conclusion: keep the log honest and plead for the sailor openly.",
    "response": "Team A's principle is clear. It under-weights the child the sailor saved; a care lens asks "
                "who depends on the keeper's silence.",
    "rebuttal": "The care lens matters, yet a log that lies protects no one next winter.",
    "consistency_test": "The nurse case is parallel: the chart is a shared record, so it stays true.",
    "judgment": '{"team_a": {"scores": {...}}, "overall_analysis": "A close round."}',
}


def fixed_round(*, round_id: str = "r-fixed000001", missing: bool = False, dilemma_index: int = 0,
                status: RoundStatus = RoundStatus.COMPLETE, texts: dict[str, str] | None = None) -> Round:
    d = make_dilemmas()[dilemma_index]
    texts = {**TEXTS, **(texts or {})}
    models = {"a": "scripted", "b": "local", "judge": "scripted-judge"}
    phases = []
    for i, pt in enumerate(PHASE_ORDER):
        phases.append(Phase(
            phase_type=pt, model_id=models[PHASE_SPEAKER[pt]], response=texts[pt.value],
            timestamp=FIXED_TIME + timedelta(seconds=10 * i), finished_at=FIXED_TIME + timedelta(seconds=10 * i + 8),
            status=PhaseStatus.COMPLETE, attempts=1, finish_reason="stop",
            usage=Usage(input_tokens=400, output_tokens=60 + i, cost_usd=0.0012), latency=8.0,
        ))
    if missing:
        judgment = Judgment(raw_response=texts["judgment"], needs_review=True, parse_method="none",
                            review_reasons=["no scores found in the judge's reply"], judge_model="scripted-judge",
                            overall_analysis="Both teams engaged thoughtfully.")
    else:
        judgment = Judgment(
            team_a_scores=Scores(**dict(zip(
                ["principle_articulation", "consistency", "stakeholder_recognition", "uncertainty_integration",
                 "framework_awareness", "intellectual_honesty", "constructive_engagement"], [8, 7, 6, 7, 8, 9, 7],
                strict=True))),
            team_b_scores=Scores(principle_articulation=6, consistency=7, stakeholder_recognition=9,
                                 uncertainty_integration=6, framework_awareness=7, intellectual_honesty=8,
                                 constructive_engagement=9),
            team_a_justification="Clear principle, applied consistently to the nurse case.",
            team_b_justification="Raised the child's interests; engaged generously.",
            overall_analysis="A close round decided by consistency.",
            raw_response=texts["judgment"], parse_method="json", judge_model="scripted-judge",
        )
    return Round(
        id=round_id, dilemma_id=d.id, dilemma_title=d.title, team_a_model="scripted", team_b_model="local",
        judge_model="scripted-judge", phases=phases, judgment=judgment, timestamp=FIXED_TIME,
        finished_at=FIXED_TIME + timedelta(minutes=1), status=status,
    )


_WORD = re.compile(r"\S+\s*|\s+")


async def events_from_round(round_: Round, *, pause: float = 0.0) -> AsyncIterator[RoundEvent]:
    """Replay a finished round as the engine would stream it."""
    for phase in round_.phases:
        yield PhaseStarted(round_.id, phase.phase_type, phase.model_id)
        for word in _WORD.findall(phase.response):
            yield TextDelta(round_.id, phase.phase_type, word)
            if pause:
                await asyncio.sleep(pause)
        yield PhaseFinished(round_.id, phase)
    yield RoundFinished(round_)


def synthetic_entries(n: int) -> list[dict[str, Any]]:
    """Index documents shaped like ResultsStore.query's, deterministic."""
    models = ["claude", "gpt", "gemini", "local", "scripted"]
    statuses = ["complete", "complete", "complete", "incomplete", "failed"]
    out = []
    for i in range(n):
        ts = FIXED_TIME + timedelta(minutes=i)
        out.append({
            "id": f"r-{i:012d}", "dilemma_id": f"D{i % 12 + 1}", "dilemma_title": f"Dilemma {i % 12 + 1}",
            "team_a": models[i % 5], "team_b": models[(i + 1) % 5], "judge": models[(i + 2) % 5],
            "tournament_id": f"t-{i // 500:03d}" if i % 3 else None, "status": statuses[i % 5],
            "has_judgment": i % 5 < 3, "needs_review": i % 7 == 0,
            "total_a": 40 + i % 20 if i % 7 else None, "total_b": 45 + i % 15 if i % 7 else None,
            "timestamp": ts.isoformat(), "ts": ts.timestamp(),
        })
    return out


class EntriesStore:
    """Stands in for the store's index where a test needs thousands of entries without writing rounds."""

    def __init__(self, entries: list[dict[str, Any]], rounds: dict[str, Round] | None = None,
                 full_query_gate: Any = None) -> None:
        self.entries = entries
        self.rounds = rounds or {}
        self.full_query_gate = full_query_gate  # a threading.Event a whole-index query waits for
        self.calls: list[int | None] = []  # the limit of each query

    def query(self, newest_first: bool = False, limit: int | None = None, **filters: Any) -> list[dict[str, Any]]:
        assert not filters, "the browser filters in memory"
        self.calls.append(limit)
        if limit is None and self.full_query_gate is not None:
            assert self.full_query_gate.wait(20), "the test never released the whole-index query"
        rows = sorted(self.entries, key=lambda e: (e["ts"], e["id"]), reverse=newest_first)
        return [dict(e) for e in rows[:limit]]

    def load_round(self, round_id: str) -> Round:
        return self.rounds[round_id]


class TmuxApp:
    """`python -m ebtui` in a detached tmux session on a private server: keys in (send-keys), the screen out
    (capture-pane). Every wait is bounded; `close()` kills the server (call it in a finally)."""

    def __init__(self, name: str, command: str, *, size: tuple[int, int], cwd: str) -> None:
        import os
        import subprocess

        self._subprocess = subprocess
        self.socket = f"ebtui-{name}-{os.getpid()}"
        self.target = "app"
        self.run("new-session", "-d", "-s", self.target, "-x", str(size[0]), "-y", str(size[1]), "-c", cwd,
                 command)

    def run(self, *args: str) -> str:
        return self._subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], check=True,
                                    capture_output=True, text=True, timeout=10).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.target)

    def size(self) -> tuple[int, int]:
        w, h = self.run("display", "-p", "-t", self.target, "#{window_width} #{window_height}").split()
        return int(w), int(h)

    def keys(self, *keys: str, pause: float = 0.3) -> None:
        import time

        for key in keys:
            self.run("send-keys", "-t", self.target, key)
            time.sleep(pause)

    def resize(self, width: int, height: int) -> None:
        self.run("resize-window", "-t", self.target, "-x", str(width), "-y", str(height))

    def wait_for(self, check: str | Callable[[str], bool], timeout: float = 30.0) -> str:
        """The screen once `check` (a text on it, or a predicate over it) holds; fails with the screen shown."""
        import time

        test = (lambda shown: check in shown) if isinstance(check, str) else check
        end = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < end:
            shown = self.screen()
            if test(shown):
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{check!r} not seen within {timeout:.0f} s; the screen was:\n{shown}")

    def close(self) -> None:
        self._subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


async def settle(pilot: Any) -> None:
    """Wait for a pushed screen to mount, stop every cursor blinking and clear notifications (snapshots)."""
    app = pilot.app
    await pilot.pause()  # let a just-pushed screen mount its inputs first
    for screen in app.screen_stack:
        for field in screen.query(Input):
            field.cursor_blink = False
    await pilot.pause()
    app.clear_notifications()
    await pilot.pause()


@asynccontextmanager
async def replayed_round(make_app: Callable[..., Any], round_: Round,
                         size: tuple[int, int] = (140, 45)) -> AsyncIterator[tuple[Any, Any]]:
    """The app replaying `round_`'s events (ctrl+r on the setup screen), once the live screen says finished:
    (pilot, live screen)."""
    async with started_round(make_app, lambda: events_from_round(round_), size) as (pilot, screen):
        await wait_until(lambda: screen.state == "finished")
        yield pilot, screen


@asynccontextmanager
async def started_round(make_app: Callable[..., Any], events: Callable[[], AsyncIterator[RoundEvent]],
                        size: tuple[int, int] = (140, 45)) -> AsyncIterator[tuple[Any, Any]]:
    """The app whose round plays `events()`, just after ctrl+r started it: (pilot, live screen)."""
    app = make_app(run_round=lambda request, clients, store: events())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        yield pilot, app.screen
