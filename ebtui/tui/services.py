"""What the app needs from the rest of ebtui, gathered in one place so tests can substitute parts.

The screens never import the core's engine or the providers directly: they ask these services. The
defaults (see `default_services`) are the real modules; tests pass fixed dilemmas, a scripted client
factory, a fixed clock.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebtui.core.events import RoundEvent
from ebtui.core.records import Dilemma
from ebtui.providers.base import ModelClient


@dataclass(frozen=True)
class RoundRequest:
    """What the setup screen asks for; turned into the core's RoundSpec by `Services.start_round`."""

    dilemma: Dilemma
    team_a: str
    team_b: str
    judge: str
    blind_judge: bool = False
    max_tokens: int | None = None
    document: str = ""


ClientFactory = Callable[[Iterable[str]], dict[str, ModelClient]]


def _load_document(path: Path | None) -> list[Dilemma]:
    from ebtui.core.dilemmas import load_dilemmas

    return load_dilemmas(path)


def _run_round(request: RoundRequest, clients: dict[str, ModelClient], store: Any) -> AsyncIterator[RoundEvent]:
    from ebtui.core.round import RoundSpec, run_round

    spec = RoundSpec(
        dilemma=request.dilemma,
        team_a=request.team_a,
        team_b=request.team_b,
        judge=request.judge,
        blind_judge=request.blind_judge,
        max_tokens=request.max_tokens,
        document=request.document,
    )
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
    run_round: Callable[[RoundRequest, dict[str, ModelClient], Any], AsyncIterator[RoundEvent]] = _run_round
    #: seconds, monotonic; snapshot tests pass a fixed clock so elapsed times never change
    clock: Callable[[], float] = time.monotonic
    #: shown dimmed after each model's name in the pickers (see `model_detail`)
    model_details: dict[str, str] = field(default_factory=dict)
    #: the ebtui.config.ModelsConfig the app was opened with (the Tournament screen plans against it)
    models_config: Any = None
    #: Team A, Team B, judge preselected on the setup screen (None: default_model for all three)
    default_roles: tuple[str, str, str] | None = None

    def start_round(self, request: RoundRequest) -> AsyncIterator[RoundEvent]:
        """Build the clients (ConfigError for a missing key) and start the core's round engine."""
        clients = self.make_clients([request.team_a, request.team_b, request.judge])
        return self.run_round(request, clients, self.store)


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
    opens; the built-in one (known good) is left for the setup screen to load after its first paint."""
    from ebtui.config import default_role_models, load_models_config
    from ebtui.core.store import ResultsStore
    from ebtui.locations import store_dir
    from ebtui.providers.registry import build_clients, default_model_name

    config = load_models_config(models_file)
    doc_path = Path(document) if document else None
    dilemmas = _load_document(doc_path) if doc_path is not None else None
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
