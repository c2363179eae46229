"""What the app's screens need: the use-case layer's context (`Services.context`, what they pass to
`ebtui.core.usecases`) and what only the app has: the dilemmas shown, the model pickers, a clock.

Screens reach it with `app_services(self)`. The defaults (`default_services`) are the real thing; tests pass
fixed dilemmas, a scripted client factory, a fixed clock, and may replay a round's events (`run_round`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from ebtui.core.records import Dilemma
from ebtui.core.usecases.dilemmas import app_dilemmas, cached_builtin_dilemmas
from ebtui.core.usecases.models import model_detail as model_detail

if TYPE_CHECKING:  # the engine is imported when a round starts, not at start-up
    from textual.dom import DOMNode

    from ebtui.core.events import RoundEvent
    from ebtui.core.usecases.context import AppContext, ClientFactory, ModelClient, ModelsConfig, ResultsStore
    from ebtui.core.usecases.play import RoundSpec

#: a stand-in for a round's events (tests replay a fixed round): (spec, clients, store) -> its events
RoundEvents = Callable[["RoundSpec", "dict[str, ModelClient]", "ResultsStore"], AsyncIterator["RoundEvent"]]


@dataclass
class Services:
    #: None until the document is read: the setup screen paints first and loads it in a thread worker
    dilemmas: list[Dilemma] | None
    model_names: list[str]
    default_model: str
    store: ResultsStore
    make_clients: ClientFactory
    document: Path | None = None
    load_document: Callable[[Path | None], list[Dilemma]] = app_dilemmas
    #: None: rounds are played by ebtui.core.usecases.play
    run_round: RoundEvents | None = None
    #: seconds, monotonic; snapshot tests pass a fixed clock so elapsed times never change
    clock: Callable[[], float] = time.monotonic
    #: shown dimmed after each model's name in the pickers (see `model_detail`)
    model_details: dict[str, str] = field(default_factory=dict)
    #: the models.toml the app was opened with (the Tournament screen plans against it)
    models_config: ModelsConfig | None = None
    #: Team A, Team B, judge preselected on the setup screen (None: default_model for all three)
    default_roles: tuple[str, str, str] | None = None

    @cached_property
    def context(self) -> AppContext:
        """The use-case layer's context over this app's store, models, clients and clock (what the screens
        pass to `ebtui.core.usecases`)."""
        from ebtui.core.usecases.context import open_context

        return open_context(store_obj=self.store, models=self.models_config, make_clients=self.make_clients,
                            clock=self.clock)


def default_services(document: str | Path | None = None, models_file: str | Path | None = None,
                     store: str | Path | None = None, *, context: AppContext | None = None) -> Services:
    """The real thing (over `context` when given, else one opened on `models_file` and `store`). A bad
    models.toml or --document is a UsageError (one line, before the screen opens).

    A document named on the command line is read now. The built-in one comes from its cache (a few
    milliseconds), so the setup screen's first frame already lists the dilemmas; without a usable cache it
    is left for the setup screen to parse after its first paint (and cached then)."""
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.models import load_models, model_choices

    ctx = context or open_context(store=store, models_file=models_file)
    config = load_models(ctx)
    doc_path = Path(document) if document else None
    dilemmas = app_dilemmas(doc_path) if doc_path is not None else cached_builtin_dilemmas()
    choices = model_choices(config)
    services = Services(dilemmas=dilemmas, model_names=choices.names, default_model=choices.default,
                        store=ctx.store, make_clients=ctx.clients, document=doc_path, model_details=choices.details,
                        models_config=config, default_roles=choices.seats)
    services.__dict__["context"] = ctx  # the cached property: one context for the app
    return services


class _AppWithServices(Protocol):
    services: Services


def app_services(node: DOMNode) -> Services:
    """The Services of the app a screen or widget runs in (EbtuiApp.services)."""
    return cast(_AppWithServices, node.app).services
