"""The app tests' fixtures (tests/tui and tests/snapshots take them through their conftest.py): a real store in
tmp, the app built on scripted models with a fixed clock, and the app with three scripted models for the
tournament screen."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ebtui.core.store import ResultsStore
from ebtui.tui.app import EbtuiApp
from ebtui.tui.services import Services
from tests.support.factories import make_dilemmas, open_store
from tests.support.tui_helpers import scripted_factory, scripted_models_toml


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    return open_store(tmp_path / "store")


@pytest.fixture
def make_app(store: ResultsStore) -> Callable[..., EbtuiApp]:
    def build(*, judge_mode: str = "valid", tokens_per_second: float | None = None, snapshot: bool = False,
              keymap_file: Path | None = None, **overrides: object) -> EbtuiApp:
        services = Services(
            dilemmas=make_dilemmas(),
            model_names=["local", "scripted", "scripted-judge"],
            default_model="scripted",
            store=store,
            make_clients=scripted_factory(judge_mode, tokens_per_second),
            clock=(lambda: 0.0) if snapshot else time.monotonic,
        )
        for key, value in overrides.items():
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
        return make_app(models_config=models, make_clients=lambda names: build_clients(models, names), **overrides)
    return build
