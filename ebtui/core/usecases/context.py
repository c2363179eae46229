"""What every task needs, opened once per command or app: settings, models, store, clients, a clock."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.locations import store_dir
from ebtui.settings import Settings, load_settings

if TYPE_CHECKING:  # the store, the config and the SDK registry load when a task first needs them
    # (named here for the front ends' annotations too)
    from ebtui.config import ModelsConfig as ModelsConfig
    from ebtui.core.store import ResultsStore as ResultsStore
    from ebtui.providers.base import ModelClient as ModelClient

#: model names -> clients (each name once); raises ebtui.config.ConfigError for an unknown name or missing key
ClientFactory = Callable[[Iterable[str]], "dict[str, ModelClient]"]


@dataclass
class AppContext:
    """The models config and the store open on first use, so a command that needs neither pays for neither.

    Tests pass `models` (a ModelsConfig), `make_clients` (scripted clients) and `clock` (a fixed one)."""

    store_root: Path
    models_file: str | Path | None = None
    settings: Settings = field(default_factory=load_settings)
    clock: Callable[[], float] = time.monotonic
    make_clients: ClientFactory | None = None
    _models: ModelsConfig | None = field(default=None, repr=False)
    _store: ResultsStore | None = field(default=None, repr=False)

    @property
    def models(self) -> ModelsConfig:
        """models.toml (raises ebtui.config.ConfigError naming the file and field when it is bad)."""
        if self._models is None:
            from ebtui.config import load_models_config

            self._models = load_models_config(self.models_file)
        return self._models

    @property
    def store(self) -> ResultsStore:
        """The results store (raises ebtui.core.store.StoreError when it cannot be opened)."""
        if self._store is None:
            from ebtui.core.store import ResultsStore

            self._store = ResultsStore(self.store_root)
        return self._store

    def clients(self, names: Iterable[str]) -> dict[str, ModelClient]:
        """Clients for the named models: the context's factory, else the registry over `models`."""
        if self.make_clients is not None:
            return self.make_clients(names)
        from ebtui.providers.registry import build_clients

        return build_clients(self.models, names)


def open_context(*, store: str | Path | None = None, models_file: str | Path | None = None,
                 models: ModelsConfig | None = None, store_obj: ResultsStore | None = None,
                 make_clients: ClientFactory | None = None,
                 clock: Callable[[], float] = time.monotonic) -> AppContext:
    """The context of one command or one app session. `store` and `models_file` are the user's options
    (None: settings, then the defaults); `models`, `store_obj` and `make_clients` are for tests and embedders."""
    root = Path(store_obj.root) if store_obj is not None else store_dir(store)
    return AppContext(store_root=root, models_file=models_file, clock=clock, make_clients=make_clients,
                      _models=models, _store=store_obj)


def check_writable(ctx: AppContext) -> None:
    """The context's store can be written (a probe file), else a UsageError saying why: checked before any
    model call, so a round that cannot be saved is not paid for."""
    from ebtui.core.preflight import PreflightError, check_store_writable
    from ebtui.errors import UsageError

    try:
        check_store_writable(ctx.store_root)
    except PreflightError as exc:
        raise UsageError(str(exc)) from None
