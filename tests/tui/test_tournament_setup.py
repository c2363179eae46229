"""Setting a tournament up on the tournament screen without a file (ctrl+n): the prediction (half-width,
detectable gap, calls, cost) follows the choices; save writes a tournament.toml the CLI reads; run plays it,
and an adaptive run shows its half-width against the target and why it stopped."""

from __future__ import annotations

import tomllib
from functools import partial
from pathlib import Path

import pytest
from textual.widgets import Input, Select, SelectionList

from ebtui.config import load_models_config
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.tournament.config import load_tournament_config
from ebtui.providers.registry import build_clients
from ebtui.tui.screens.tournament import TournamentScreen
from ebtui.tui.screens.tournament_setup import TournamentSetupScreen
from tests.support.tui_helpers import wait_until

SIZE = (130, 44)
_wait_until = partial(wait_until, timeout=30.0)


@pytest.fixture
def setup_app(make_app, tmp_path: Path):
    lines = []
    for name in ("alpha", "beta", "gamma", "delta"):
        lines += [f"[models.{name}]", 'provider = "scripted"', "price_in = 1.0", "price_out = 4.0", ""]
    (tmp_path / "models.toml").write_text("\n".join(lines))
    models = load_models_config(tmp_path / "models.toml")
    # the services' dilemmas are the document's (here the built-in one), as in the app
    return make_app(models=models, make_clients=lambda names: build_clients(models, names),
                    dilemmas=load_dilemmas())


async def _open_setup(app, pilot) -> tuple[TournamentScreen, TournamentSetupScreen]:
    await pilot.pause()
    screen = TournamentScreen()
    app.push_screen(screen)
    await pilot.pause()
    await pilot.press("ctrl+n")
    await _wait_until(lambda: isinstance(app.screen, TournamentSetupScreen))
    setup = app.screen
    assert isinstance(setup, TournamentSetupScreen)
    await _wait_until(lambda: setup.prediction is not None)
    return screen, setup


async def _repredicted(setup: TournamentSetupScreen, before: dict) -> dict:
    try:
        await _wait_until(lambda: setup.prediction is not None and setup.prediction is not before)
    except AssertionError:
        raise AssertionError(f"no new prediction: {setup.error}") from None
    assert setup.prediction is not None
    return setup.prediction


async def test_the_prediction_follows_the_choices_and_save_writes_a_tournament_file(setup_app, tmp_path: Path) -> None:
    app = setup_app
    async with app.run_test(size=SIZE) as pilot:
        screen, setup = await _open_setup(app, pilot)
        first = setup.prediction
        assert first is not None
        # defaults: the first three models, the first four dilemmas, rotate, one repeat
        assert first["dilemmas"] == 4 and first["pairings"] == 6 and first["calls"] == 4 * 6 * 5
        assert first["half_width"] > 0 and first["detectable_gap"] > first["half_width"]
        shown = str(setup.query_one("#setup-prediction").render())
        assert f"{first['calls']} model calls" in shown and "Predicted half-width" in shown

        setup.query_one("#setup-repeats", Input).value = "2"
        second = await _repredicted(setup, first)
        assert second["calls"] == 2 * first["calls"] and second["cost_usd"] == pytest.approx(2 * first["cost_usd"],
                                                                                               rel=0.05)
        assert second["half_width"] < first["half_width"]

        dil = setup.query_one("#setup-dilemmas", SelectionList)
        for value in list(dil.selected)[2:]:
            dil.deselect(value)
        third = await _repredicted(setup, second)
        assert third["dilemmas"] == 2 and third["detectable_gap"] is None  # fewer than 3 dilemmas: no interval

        setup.query_one("#setup-models", SelectionList).select("gamma")  # (alpha, beta, delta: the first three)
        setup.query_one("#setup-judges", Select).value = "panel"
        fourth = await _repredicted(setup, third)
        assert fourth["judge_mode"] == "panel" and fourth["pairings"] == 12

        target = tmp_path / "mine.toml"
        setup.query_one("#setup-path", Input).value = str(target)
        await pilot.press("ctrl+s")
        await _wait_until(lambda: app.screen is screen and screen.state in ("planned", "idle"))
        data = tomllib.loads(target.read_text())
        assert sorted(data["models"]) == ["alpha", "beta", "delta", "gamma"] and data["judges"] == "panel"
        assert data["rounds_per_pairing"] == 2 and len(data["dilemmas"]) == 2
        assert load_tournament_config(target).models == data["models"]  # the CLI reads it as it is
        assert screen.state == "planned" and screen.estimate.rounds == 2 * 12 * 2 * 2


async def test_run_from_the_set_up_shows_half_width_against_the_target_and_why_it_stopped(setup_app) -> None:
    app = setup_app
    async with app.run_test(size=SIZE) as pilot:
        screen, setup = await _open_setup(app, pilot)
        dil = setup.query_one("#setup-dilemmas", SelectionList)
        for value in list(dil.selected)[3:]:
            dil.deselect(value)
        before = setup.prediction
        setup.query_one("#setup-target", Input).value = "50"
        pred = await _repredicted(setup, before)
        assert pred["target"] == 50
        await pilot.press("ctrl+r")
        await _wait_until(lambda: app.screen is screen)
        await _wait_until(lambda: screen.state == "finished")
        status = str(screen.query_one("#adaptive-status").render())
        assert "target ±50" in status and "target reached" in status
        assert "adaptive: target reached" in screen.finished.tournament.note
