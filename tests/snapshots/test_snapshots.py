"""Snapshot tests: every screen at a laptop's 80x24 and a large 160x50, in the light and the dark built-in theme.

Each screen is built from fixed records and scripted event streams (no clocks, blink, animations or random ids):
the setup screen; a live round mid-stream and finished; the score card of a round needing review and its edit
dialog; the results browser with rows; one saved round; the tournament screen's plan, progress and analysis
tabs; the help; the command palette.

Update after an intended change with `pytest tests/snapshots/test_snapshots.py --snapshot-update` and look at the
SVGs in __snapshots__ before committing them (`rsvg-convert -o x.png x.svg` renders one).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from ebtui.core.events import PhaseFinished, PhaseStarted, RoundEvent, TextDelta
from ebtui.core.records import PhaseType
from ebtui.core.store import ResultsStore
from ebtui.tui.screens.modals import HelpModal, ScoreEditModal
from ebtui.tui.screens.round_view import RoundScreen
from ebtui.tui.screens.score import ScoreCardScreen
from tests.support.factories import FIXED_TIME, fixed_round
from tests.support.tui_helpers import EntriesStore, events_from_round, settle, synthetic_entries

SIZES = {"80x24": (80, 24), "160x50": (160, 50)}
THEMES = {"dark": "ebtui-dark", "light": "ebtui-light"}

# every test below runs at both sizes in both themes; the snapshot files are named test_x[80x24-dark].svg etc.
pytestmark = pytest.mark.parametrize(
    ("size", "theme"),
    [(SIZES[s], THEMES[t]) for s in SIZES for t in THEMES],
    ids=[f"{s}-{t}" for s in SIZES for t in THEMES],
)


async def _wait_until(predicate: Callable[[], bool], timeout: float = 20.0, what: Callable[[], str] = str) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, f"timed out waiting for the screen {what()}"
        await asyncio.sleep(0.05)


def _themed(app: App[Any], theme: str) -> App[Any]:
    assert theme in app.available_themes, f"{theme} is not a built-in theme"
    app.theme = theme
    return app


# -- setup ---------------------------------------------------------------------------------------------------
def test_setup(snap_compare, make_app, size, theme) -> None:
    assert snap_compare(_themed(make_app(snapshot=True), theme), terminal_size=size, run_before=settle)


# -- live round ----------------------------------------------------------------------------------------------
async def _events_until_mid_response(round_: Any) -> AsyncIterator[RoundEvent]:
    """Team A's presentation whole, then about half of Team B's response; then the stream stays open (a model
    still writing) until the app closes."""
    presentation, response = round_.phases[0], round_.phases[1]
    assert presentation.phase_type == PhaseType.PRESENTATION and response.phase_type == PhaseType.RESPONSE
    yield PhaseStarted(round_.id, presentation.phase_type, presentation.model_id)
    for word in presentation.response.split(" "):
        yield TextDelta(round_.id, presentation.phase_type, word + " ")
    yield PhaseFinished(round_.id, presentation)
    yield PhaseStarted(round_.id, response.phase_type, response.model_id)
    words = response.response.split(" ")
    for word in words[: len(words) // 2]:
        yield TextDelta(round_.id, response.phase_type, word + " ")
    await asyncio.Event().wait()  # never set: the model is still writing when the snapshot is taken


def test_live_round_mid_stream(snap_compare, make_app, size, theme) -> None:
    round_ = fixed_round()
    app = _themed(make_app(snapshot=True,
                           run_round=lambda ctx, prepared: _events_until_mid_response(round_)), theme)

    async def run(pilot: Pilot) -> None:
        await pilot.press("ctrl+r")
        await _wait_until(lambda: getattr(app.screen, "state", "") == "running")
        screen = app.screen
        await _wait_until(lambda: not screen._inbox and bool(screen.view(PhaseType.RESPONSE).text))
        screen._refresh_status()  # what the pump does every 0.5 s: the panes' status lines, now
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


def test_live_round_finished(snap_compare, make_app, size, theme) -> None:
    round_ = fixed_round()
    app = _themed(make_app(snapshot=True, run_round=lambda ctx, prepared: events_from_round(round_)),
                  theme)

    async def run(pilot: Pilot) -> None:
        await pilot.press("ctrl+r")
        await _wait_until(lambda: getattr(app.screen, "state", "") == "finished")  # its status lines refreshed
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


# -- score card ----------------------------------------------------------------------------------------------
def test_score_card_needing_review(snap_compare, make_app, store, size, theme) -> None:
    round_ = fixed_round(missing=True)
    store.save_round(round_)
    round_ = store.apply_override(round_.id, "a", "consistency", 6, "read from the prose")
    app = _themed(make_app(snapshot=True), theme)

    async def run(pilot: Pilot) -> None:
        app.push_screen(ScoreCardScreen(round_))
        await pilot.pause()
        await pilot.press("r")  # the raw judge reply beside the grid
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


def test_score_edit_modal(snap_compare, make_app, store, size, theme) -> None:
    round_ = fixed_round(missing=True)
    store.save_round(round_)
    app = _themed(make_app(snapshot=True), theme)

    async def run(pilot: Pilot) -> None:
        app.push_screen(ScoreCardScreen(round_))  # the dialog over the card it edits
        await pilot.pause()
        app.push_screen(ScoreEditModal("b", "framework_awareness", None, None))
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


# -- results and one round ----------------------------------------------------------------------------------
def test_results_browser(snap_compare, make_app, size, theme) -> None:
    entries = synthetic_entries(60)
    for i in (57, 58):  # two of the newest rounds imported from the Ethics Bowl runner (`ebtui import eb`): ⇩
        entries[i]["id"] = f"eb-run1-{i:012x}"
    app = _themed(make_app(snapshot=True, store=EntriesStore(entries)), theme)

    async def run(pilot: Pilot) -> None:
        await pilot.press("f3")
        await _wait_until(lambda: len(getattr(app.screen, "entries", [])) >= 60)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


def _round_view_snapshot(snap_compare, make_app, size, theme, round_) -> bool:
    app = _themed(make_app(snapshot=True), theme)

    async def run(pilot: Pilot) -> None:
        app.push_screen(RoundScreen(round_.id, round_))
        await pilot.pause()
        await settle(pilot)

    return bool(snap_compare(app, terminal_size=size, run_before=run))


def test_round_view(snap_compare, make_app, size, theme) -> None:
    assert _round_view_snapshot(snap_compare, make_app, size, theme, fixed_round())


def test_round_view_of_an_imported_round(snap_compare, make_app, size, theme) -> None:
    """A round read by `ebtui import eb`: the header names the runner and the file it came from."""
    from ebtui.core.records import Imported

    round_ = fixed_round(round_id="eb-run1-0123456789ab").model_copy(update={"imported": Imported(
        runner="moral_reasoning_quality_evaluation", source_file="/data/runs/run1/results.jsonl", source_line=3,
        source_round_id="7", source_run="run1", imported_at=FIXED_TIME)})
    assert _round_view_snapshot(snap_compare, make_app, size, theme, round_)


# -- tournament ----------------------------------------------------------------------------------------------
MODELS_TOML = "".join(f'[models.{name}]\nprovider = "scripted"\nprice_in = 1.0\nprice_out = 4.0\n\n'
                      for name in ("alpha", "beta", "gamma"))
TOURNAMENT_TOML = ('name = "snapshot"\nmodels = ["alpha", "beta"]\njudges = ["gamma"]\n'
                   'dilemmas = ["fidelity_slider", "dormant_colonists"]\nrounds_per_pairing = 2\n')


@pytest.fixture
def tournament_app(make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., App[Any]]:
    """The app started in a folder holding tournament.toml (the screen reads it on opening, by a relative path
    so no temporary directory shows), with three scripted models."""
    from ebtui.config import load_models_config
    from ebtui.providers.registry import build_clients

    (tmp_path / "tournament.toml").write_text(TOURNAMENT_TOML)
    models = load_models_config(_write(tmp_path / "models.toml", MODELS_TOML))
    monkeypatch.chdir(tmp_path)

    def build(theme: str) -> App[Any]:
        return _themed(make_app(snapshot=True, models=models, make_clients=lambda n: build_clients(models, n)),
                       theme)
    return build


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


async def _tournament_screen(app: App[Any], pilot: Pilot) -> Any:
    from ebtui.tui.screens.tournament import TournamentScreen

    await pilot.pause()
    screen = TournamentScreen()
    app.push_screen(screen)
    await _wait_until(lambda: screen.state == "planned" and all(w.is_finished for w in screen.workers),
                      what=lambda: f"(state {screen.state}: {screen.query_one('#tournament-message').render()})")
    await pilot.pause()
    return screen


def test_tournament_plan(snap_compare, tournament_app, size, theme) -> None:
    app = tournament_app(theme)

    async def run(pilot: Pilot) -> None:
        screen = await _tournament_screen(app, pilot)
        assert screen.estimate.rounds == 8  # 2 dilemmas x 2 orderings x 2 repeats
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


def test_tournament_progress(snap_compare, tournament_app, size, theme) -> None:
    """A run in flight, drawn from a fixed progress record: 5 of 8 rounds finished, one not complete (the
    timings of a real run would differ on every run)."""
    from ebtui.core.tournament import Progress
    from ebtui.tui.screens.tournament_progress import new_breakdown

    app = tournament_app(theme)

    async def run(pilot: Pilot) -> None:
        screen = await _tournament_screen(app, pilot)
        keys = [r.schedule_key for r in screen.plan.schedule.rounds]
        breakdown = new_breakdown(screen.plan, app.services.context)  # type: ignore[attr-defined]
        assert breakdown is not None and len(keys) == 8
        for i, key in enumerate(keys[:5]):
            breakdown.mark(key, complete=i != 3)
        screen.breakdown = breakdown
        screen._set_state("running")
        screen.query_one(TabbedContent).active = "tab-progress"
        screen.progress = Progress(total=8, done=4, incomplete=1, already_done=0, rounds_in_flight=2,
                                   calls_in_flight=2, input_tokens=12_345, output_tokens=2_468, cost_usd=0.0221,
                                   elapsed_s=75.0, eta_s=45.0, budget_usd=None, budget_stopped=False)
        screen._failure(f"{keys[3]}: incomplete — judge: the reply was empty")
        _write_batch_ledger(app.services.context.store_root, screen.plan.tournament_id)  # type: ignore[attr-defined]
        batches = screen.query_one("#batch-status")
        batches.refresh_rows()  # what its 2 s timer does
        assert batches.display
        await _wait_until(lambda: screen._shown_progress is screen.progress)  # the screen's own refresh
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


def _write_batch_ledger(store_root: Path, tournament_id: str) -> None:
    """Two provider batches of the run, both ended (a pending one's age is counted from the wall clock)."""
    import json

    batches = [
        {"id": "msgbatch_01snapshotalpha", "model": "alpha", "wave": 1, "phases": {"presentation": 4},
         "status": "done", "total": 4, "completed": 4, "failed": 0, "submitted_at": 1_000.0, "ended_at": 1_754.0},
        {"id": "batch_snapshotgamma", "model": "gamma", "wave": 1, "phases": {"judgment": 4},
         "status": "failed", "total": 4, "completed": 3, "failed": 1, "retried": 1, "submitted_at": 2_000.0,
         "ended_at": 2_095.0},
    ]
    path = Path(store_root) / "batches" / f"{tournament_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"batches": batches}))


def test_tournament_analysis(snap_compare, make_app, store: ResultsStore, size, theme) -> None:
    from tests.support.factories import write_snapshot_tournament
    from tests.support.tui_helpers import open_snapshot_tournament

    write_snapshot_tournament(store)
    app = _themed(make_app(snapshot=True), theme)

    async def run(pilot: Pilot) -> None:
        screen = await open_snapshot_tournament(app, pilot)
        screen.query_one(TabbedContent).active = "tab-analysis"
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


# -- help and the command palette ---------------------------------------------------------------------------
def test_help(snap_compare, make_app, size, theme) -> None:
    app = _themed(make_app(snapshot=True), theme)

    async def run(pilot: Pilot) -> None:
        app.push_screen(HelpModal())
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)


def test_command_palette(snap_compare, make_app, size, theme) -> None:
    from textual.command import CommandList, CommandPalette

    app = _themed(make_app(snapshot=True), theme)

    async def run(pilot: Pilot) -> None:
        await settle(pilot)
        app.action_command_palette()
        await _wait_until(lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"result")  # a typed query: the hits are ranked, not listed in arrival order
        palette = app.screen
        # the palette searches its providers in a worker: wait until that search is over and has a hit
        await _wait_until(lambda: palette.query_one(CommandList).option_count >= 1
                          and all(w.is_finished for w in palette.workers))
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run)

