"""What the app needs from the rest of ebtui, gathered in one place so tests can substitute parts.

The screens never import the core's engine or the providers directly: they ask these services. The
defaults (see `default_services`) are the real modules; tests pass fixed dilemmas, a scripted client
factory, a fixed clock.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ebtui.core.events import RoundEvent
from ebtui.core.records import Dilemma
from ebtui.providers.base import ModelClient

if TYPE_CHECKING:  # the engine is imported when a round starts, not at start-up
    from textual.dom import DOMNode

    from ebtui.core.round import RoundSpec
    from ebtui.core.usecases.context import AppContext


ClientFactory = Callable[[Iterable[str]], dict[str, ModelClient]]


#: the built-in dilemmas, parsed from the .docx and kept as JSON beside it (checked against the .docx's hash, so
#: a stale one is never used): reading the .docx means python-docx, lxml and the parser, ≈ 0.3 s at start-up
PACKAGED_CACHE = "builtin_dilemmas.cache.json"


def _builtin_key(doc: Path) -> str:
    """What a cache of the built-in dilemmas must match: the document's bytes and the Dilemma record's fields."""
    h = hashlib.sha256(doc.read_bytes())
    h.update(",".join(Dilemma.model_fields).encode())
    return h.hexdigest()


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ebtui"


def builtin_cache_paths() -> list[Path]:
    from ebtui.locations import package_data_dir

    return [package_data_dir() / PACKAGED_CACHE, user_cache_dir() / PACKAGED_CACHE]


def cached_builtin_dilemmas() -> list[Dilemma] | None:
    """The built-in dilemmas from a cache that matches the shipped document, or None (then parse it)."""
    from ebtui.locations import builtin_document

    doc = builtin_document()
    try:
        key = _builtin_key(doc)
    except OSError:
        return None
    for path in builtin_cache_paths():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("key") == key:
                # the cache holds no path (it ships in the package): the source is where the document is now
                return [Dilemma.model_validate({**d, "source": str(doc)}) for d in data["dilemmas"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return None


def write_builtin_cache(dilemmas: list[Dilemma], path: Path | None = None) -> Path | None:
    """Keep the parsed built-in dilemmas for the next start (atomically; a cache that cannot be written is
    only a slower next start, never an error)."""
    from ebtui.locations import builtin_document

    path = path or builtin_cache_paths()[1]
    try:
        data = {"key": _builtin_key(builtin_document()),
                "dilemmas": [d.model_dump(mode="json", exclude={"source"}) for d in dilemmas]}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return None
    return path


def _load_document(path: Path | None) -> list[Dilemma]:
    from ebtui.core.dilemmas import load_dilemmas

    if path is None:
        cached = cached_builtin_dilemmas()
        if cached is not None:
            return cached
        dilemmas = load_dilemmas(None)
        write_builtin_cache(dilemmas)
        return dilemmas
    return load_dilemmas(path)


def _run_round(spec: RoundSpec, clients: dict[str, ModelClient], store: Any) -> AsyncIterator[RoundEvent]:
    from ebtui.core.round import run_round

    return run_round(spec, clients, store)


@dataclass
class Services:
    #: None until the document is read: the setup screen paints first and loads it in a thread worker
    dilemmas: list[Dilemma] | None
    model_names: list[str]
    default_model: str
    store: Any  # ebtui.core.store.ResultsStore (or anything with its methods)
    make_clients: ClientFactory
    document: Path | None = None
    load_document: Callable[[Path | None], list[Dilemma]] = _load_document
    run_round: Callable[[RoundSpec, dict[str, ModelClient], Any], AsyncIterator[RoundEvent]] = _run_round
    #: seconds, monotonic; snapshot tests pass a fixed clock so elapsed times never change
    clock: Callable[[], float] = time.monotonic
    #: shown dimmed after each model's name in the pickers (see `model_detail`)
    model_details: dict[str, str] = field(default_factory=dict)
    #: the ebtui.config.ModelsConfig the app was opened with (the Tournament screen plans against it)
    models_config: Any = None
    #: Team A, Team B, judge preselected on the setup screen (None: default_model for all three)
    default_roles: tuple[str, str, str] | None = None

    @cached_property
    def context(self) -> AppContext:
        """The use-case layer's context over this app's store, models, clients and clock (what the screens
        pass to `ebtui.core.usecases`)."""
        from ebtui.core.usecases.context import open_context

        return open_context(store_obj=self.store, models=self.models_config, make_clients=self.make_clients,
                            clock=self.clock)


def model_detail(name: str, provider: str | None, model: str | None) -> str:
    """What the model picker shows after a model's name: provider/model, each said once and only when it
    adds something (`scripted` is just "scripted", not "scripted (scripted: scripted)")."""
    parts: list[str] = []
    for part in (provider, model):
        part = str(part or "").strip()
        if part and part != name and part not in parts:
            parts.append(part)
    return "/".join(parts)


def default_services(document: str | Path | None = None, models_file: str | Path | None = None,
                     store: str | Path | None = None) -> Services:
    """The real thing. Raises ConfigError / DocumentError for bad --models / --document (the caller reports).

    A document named on the command line is read now, so a bad one is a one-line error before the screen
    opens. The built-in one comes from its cache (a few milliseconds), so the setup screen's first frame
    already lists the dilemmas; without a usable cache it is left for the setup screen to parse after its
    first paint (and cached then)."""
    from ebtui.config import default_role_models, load_models_config
    from ebtui.core.store import ResultsStore
    from ebtui.locations import store_dir
    from ebtui.providers.registry import build_clients, default_model_name

    config = load_models_config(models_file)
    doc_path = Path(document) if document else None
    dilemmas = _load_document(doc_path) if doc_path is not None else cached_builtin_dilemmas()
    names = list(config.models)
    details = {name: model_detail(name, cfg.provider, cfg.model) for name, cfg in config.models.items()}
    return Services(
        dilemmas=dilemmas,
        model_names=names,
        default_model=default_model_name(config),
        store=ResultsStore(store_dir(store)),
        make_clients=lambda wanted: build_clients(config, wanted),
        document=doc_path,
        model_details=details,
        models_config=config,
        default_roles=default_role_models(config),
    )


class _AppWithServices(Protocol):
    services: Services


def app_services(node: DOMNode) -> Services:
    """The Services of the app a screen or widget runs in (EbtuiApp.services)."""
    return cast(_AppWithServices, node.app).services
