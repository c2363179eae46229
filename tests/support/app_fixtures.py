"""The app tests' fixtures (tests/tui and tests/snapshots take them through their conftest.py): a real store in
tmp, the app built on scripted models with a fixed clock, and the app with three scripted models for the
tournament screen."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ebtui.config import ModelsConfig
from ebtui.core.store import ResultsStore
from ebtui.core.usecases.context import ClientFactory
from ebtui.tui.app import EbtuiApp
from ebtui.tui.services import RoundPlayer
from tests.support.factories import open_store
from tests.support.tui_helpers import scripted_factory, scripted_models_toml, services_for


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    return open_store(tmp_path / "store")


@pytest.fixture
def make_app(store: ResultsStore) -> Callable[..., EbtuiApp]:
    """The app over a context of its own: `store` (default: the fixture's, in tmp; a stand-in may be given),
    `models` (a ModelsConfig; default: models.toml as the test's environment has it, the built-in models),
    `make_clients` (default: scripted clients), a fixed clock for snapshots; `run_round` replays a round's
    events instead of playing it; any other keyword sets that field of Services (dilemmas, choices...)."""
    def build(*, judge_mode: str = "valid", tokens_per_second: float | None = None, snapshot: bool = False,
              keymap_file: Path | None = None, store: ResultsStore = store, models: ModelsConfig | None = None,
              make_clients: ClientFactory | None = None, run_round: RoundPlayer | None = None,
              **app_state: object) -> EbtuiApp:
        services = services_for(store, make_clients or scripted_factory(judge_mode, tokens_per_second),
                                ["local", "scripted", "scripted-judge"], default="scripted", models=models,
                                clock=(lambda: 0.0) if snapshot else time.monotonic)
        services.run_round = run_round
        for key, value in app_state.items():
            assert hasattr(services, key), f"Services has no field {key}"
            setattr(services, key, value)
        return EbtuiApp(services, load_user_themes=False, snapshot=snapshot, keymap_file=keymap_file)
    return build


@pytest.fixture
def tournament_app(make_app: Callable[..., EbtuiApp], tmp_path: Path) -> Callable[..., EbtuiApp]:
    """The app with three scripted models (alpha, beta, gamma; `latency` seconds a call)."""
    from ebtui.config import load_models_config
    from ebtui.providers.registry import build_clients

    def build(latency: float = 0.0, **overrides: object) -> EbtuiApp:
        models = load_models_config(scripted_models_toml(tmp_path / "models.toml", latency))
        return make_app(models=models, make_clients=lambda names: build_clients(models, names), **overrides)
    return build
