"""Fixtures for the app's tests: fixed dilemmas, a real store in tmp, scripted models, a fixed clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tui_helpers import make_dilemmas, scripted_factory

from ebtui.core.store import ResultsStore
from ebtui.tui.app import EbtuiApp
from ebtui.tui.services import Services


@pytest.fixture
def store(tmp_path: Path) -> ResultsStore:
    return ResultsStore(tmp_path / "store", durable=False)


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
