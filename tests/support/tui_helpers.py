"""Fixed records and event streams for the app's tests (no clocks, no random ids)."""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.widgets import Input

from ebtui.core.events import PhaseFinished, PhaseStarted, RoundEvent, RoundFinished, TextDelta
from ebtui.core.records import Round, Tournament, TournamentStatus
from ebtui.providers.base import ModelClient
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import FIXED_TIME, SNAP_TID
from tests.support.sim_designs import equal_world, play, round_robin

if TYPE_CHECKING:
    from ebtui.config import ModelsConfig
    from ebtui.core.records import Dilemma
    from ebtui.core.store import ResultsStore
    from ebtui.core.usecases.context import ClientFactory
    from ebtui.tui.services import Services


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


def services_for(store: ResultsStore, make_clients: ClientFactory, names: Sequence[str], *,
                 default: str | None = None, dilemmas: list[Dilemma] | None = None,
                 models: ModelsConfig | None = None, clock: Callable[[], float] = time.monotonic) -> Services:
    """The app's Services over a context of `store` (a real one in tmp, or a stand-in), `make_clients` and
    `clock`; the pickers offer `names` with `default` (the first name) in every seat; the dilemmas are the
    factory's unless given."""
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.models import ModelChoices
    from ebtui.tui.services import Services
    from tests.support.factories import make_dilemmas

    seat = default or names[0]
    context = open_context(store_obj=store, models=models, make_clients=make_clients, clock=clock)
    choices = ModelChoices(names=list(names), default=seat, details={}, seats=(seat, seat, seat))
    return Services(context=context, dilemmas=make_dilemmas() if dilemmas is None else dilemmas, choices=choices)


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

    #: where the app's context says the store is (nothing is written there)
    root = Path("entries-store")

    def __init__(self, entries: list[dict[str, Any]], rounds: dict[str, Round] | None = None,
                 full_query_gate: Any = None) -> None:
        self.entries = entries
        self.rounds = rounds or {}
        self.full_query_gate = full_query_gate  # a threading.Event a whole-index query waits for
        self.calls: list[int | None] = []  # the limit of each query

    def query(self, newest_first: bool = False, limit: int | None = None, **filters: Any) -> list[dict[str, Any]]:
        assert all(v is None for v in filters.values()), "the browser filters in memory"
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
    app = make_app(run_round=lambda ctx, prepared: events())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        yield pilot, app.screen


# -- the tournament screen ----------------------------------------------------------------------------------
async def wait_long(predicate: Callable[[], object], timeout: float = 30.0) -> None:
    """wait_until, 30 s by default: the tournament screen's waits (a loaded machine plays whole rounds there)."""
    await wait_until(predicate, timeout=timeout)


def scripted_models_toml(path: Path, latency: float = 0.0) -> Path:
    """A models.toml of three scripted models, alpha, beta and gamma (priced, `latency` seconds a call)."""
    lines = []
    for name in ("alpha", "beta", "gamma"):
        lines += [f"[models.{name}]", 'provider = "scripted"', f"latency_s = {latency}",
                  "price_in = 1.0", "price_out = 4.0", ""]
    path.write_text("\n".join(lines))
    return path


def tournament_toml(path: Path, dilemmas: list[str], **extra: object) -> Path:
    """A tournament.toml: alpha and beta judged by gamma on `dilemmas`; `extra` are further keys."""
    quoted = ", ".join(f'"{d}"' for d in dilemmas)
    lines = ['name = "screen-test"', 'models = ["alpha", "beta"]', 'judges = ["gamma"]', f"dilemmas = [{quoted}]"]
    lines += [f"{k} = {v}" for k, v in extra.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


async def open_tournament_screen(app: Any, pilot: Any) -> Any:
    """The tournament screen, pushed and mounted."""
    from ebtui.tui.screens.tournament import TournamentScreen

    await pilot.pause()
    screen = TournamentScreen()
    app.push_screen(screen)
    await pilot.pause()
    return screen


async def plan_tournament(pilot: Any, screen: Any, path: Path) -> None:
    """Type `path` into the tournament screen's file field and read its plan."""
    field = screen.query_one("#tournament-path", Input)
    field.value = str(path)
    field.focus()
    await pilot.press("enter")
    await wait_long(lambda: screen.state in ("planned", "idle"))
    await pilot.pause()


async def open_snapshot_tournament(app: Any, pilot: Any) -> Any:
    """The tournament screen, with the saved snapshot tournament (factories.write_snapshot_tournament) opened
    from its list (and analysed)."""
    from textual.widgets import DataTable, TabbedContent

    from ebtui.tui.screens.tournament import TournamentScreen

    screen = TournamentScreen()
    app.push_screen(screen)
    await wait_long(lambda: len(screen.saved) == 1)
    screen.query_one("#tournament-path", Input).cursor_blink = False
    screen.query_one(TabbedContent).active = "tab-saved"
    await pilot.pause()
    screen.query_one("#saved-tournaments", DataTable).focus()
    await pilot.press("enter")
    await wait_long(lambda: screen.analysed_id == SNAP_TID)
    return screen


# -- the analysis tab and the compare view ------------------------------------------------------------------
PAIRS_TID = "t-pairs0001"


def pairs_tournament(store: Any) -> list[Any]:
    """Three models (m1 clearly best) round-robin on four dilemmas, generated from a planted truth and saved
    with their tournament; the first round's text is hostile. The seed is one whose compared differences and
    intervals sit on no rounding boundary (x.xx5), so their shown text cannot depend on the CPU (a snapshot test
    checks it with `on_rounding_boundary`)."""
    truth = equal_world(3)
    truth.skill = {"m1": 7.6, "m2": 6.4, "m3": 6.3}
    rounds = play(truth, round_robin(list(truth.skill), list(truth.skill), 4), seed=19, tournament_id=PAIRS_TID)
    rounds[0].phases[0].response = "[bold red]not markup[/] \x1b[31mno escape\x1b[0m m1 speaks first"
    rounds[0].judgment.team_a_justification = "Clear principle, well defended."
    for r in rounds:
        store.save_round(r)
    store.save_tournament(Tournament(id=PAIRS_TID, name="pairs", created=FIXED_TIME, status=TournamentStatus.COMPLETE,
                                     finished_at=FIXED_TIME + timedelta(hours=1), models=list(truth.skill),
                                     dilemmas=sorted({r.dilemma_id for r in rounds}), total_rounds=len(rounds)))
    return rounds



def on_rounding_boundary(values: Iterable[object], decimals: int = 2, within: float = 1e-6) -> list[float]:
    """The values within `within` of a boundary of the shown precision (x.xx5 for 2 decimals): their text
    would rest on the display rounding's noise floor instead of sitting plainly on one side."""
    out = []
    for v in values:
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            frac = abs(v) * 10**decimals % 1
            if abs(frac - 0.5) < within * 10**decimals:
                out.append(float(v))
    return out


# -- a played round, the score card and its edit dialog -----------------------------------------------------
@asynccontextmanager
async def played_round(app: Any, size: tuple[int, int] = (140, 45),
                       timeout: float = 30.0) -> AsyncIterator[tuple[Any, Any]]:
    """`app` running, its round started (ctrl+r on the setup screen) and played until the live screen is no
    longer running: (pilot, live screen)."""
    from ebtui.tui.screens.live import LiveRoundScreen

    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LiveRoundScreen)
        await wait_until(lambda: screen.state != "running", timeout=timeout)
        yield pilot, screen


@asynccontextmanager
async def score_card_open(make_app: Callable[..., Any], store: Any, round_: Round,
                          size: tuple[int, int] = (140, 45)) -> AsyncIterator[tuple[Any, Any]]:
    """The app with `round_` saved and its score card on screen: (app, pilot)."""
    from ebtui.tui.screens.score import ScoreCardScreen

    store.save_round(round_)
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.push_screen(ScoreCardScreen(round_))
        await pilot.pause()
        yield app, pilot


async def edit_score(app: Any, pilot: Any) -> Any:
    """Enter on the score card's focused cell: the score edit dialog, on screen."""
    from ebtui.tui.screens.modals import ScoreEditModal

    await pilot.press("enter")
    await pilot.pause()
    modal = app.screen
    assert isinstance(modal, ScoreEditModal)
    return modal


async def save_score(app: Any, pilot: Any, modal: Any, value: str, note: str) -> None:
    """Type `value` and `note` into the edit dialog, click Save and wait for the override's save."""
    modal.query_one("#score-value", Input).value = value
    modal.query_one("#score-note", Input).value = note
    await pilot.click("#save")
    await app.workers.wait_for_complete()


@asynccontextmanager
async def results_open(app: Any, size: tuple[int, int]) -> AsyncIterator[tuple[Any, Any, Any]]:
    """`app` running with the results browser opened (f3): (pilot, results screen, its table)."""
    from textual.widgets import DataTable

    from ebtui.tui.screens.results import ResultsScreen

    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("f3")
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        yield pilot, screen, screen.query_one(DataTable)
