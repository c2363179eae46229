"""What the app's screens need: the use-case layer's context (`Services.context`, what they pass to
`ebtui.core.usecases`: store, models, clients, clock) and what only the app has: the dilemmas shown and the
model pickers.

Screens reach it with `app_services(self)` or `app_context(self)`; tests build the context with scripted
clients and a fixed clock, and may replay a round's events (`run_round`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from ebtui.core.records import Dilemma
from ebtui.core.usecases.dilemmas import app_dilemmas, cached_builtin_dilemmas
from ebtui.core.usecases.models import ModelChoices

if TYPE_CHECKING:  # the engine is imported when a round starts, not at start-up
    from textual.dom import DOMNode

    from ebtui.core.events import RoundEvent
    from ebtui.core.usecases.context import AppContext
    from ebtui.core.usecases.play import PreparedRound

#: plays a prepared round: its events, the last RoundFinished (the signature of ebtui.core.usecases.play.play)
RoundPlayer = Callable[["AppContext", "PreparedRound"], AsyncIterator["RoundEvent"]]


@dataclass
class Services:
    #: the use-case layer's context: store, models, clients, clock, settings (what screens pass to
    #: `ebtui.core.usecases`); tests open it on a temporary store, scripted clients and a fixed clock
    context: AppContext
    #: None until the document is read: the setup screen paints first and loads it in a thread worker
    dilemmas: list[Dilemma] | None
    #: what the setup screen's model pickers offer (names, default, seats, what is shown after each name)
    choices: ModelChoices
    document: Path | None = None
    load_document: Callable[[Path | None], list[Dilemma]] = app_dilemmas
    #: the test seam for a round's events: None plays it (ebtui.core.usecases.play.play); a test replays a
    #: fixed round's events here instead, once the round is prepared (its clients built) as usual
    run_round: RoundPlayer | None = None


def default_services(document: str | Path | None = None, models_file: str | Path | None = None,
                     store: str | Path | None = None, *, context: AppContext | None = None) -> Services:
    """The real thing (over `context` when given, else one opened on `models_file` and `store`). A bad
    models.toml or --document is a UsageError (one line, before the screen opens).

    The store opens when first used; its modules load in the app's warm-up, after the first frame. A
    document named on the command line is read now. The built-in one comes from its cache (a few
    milliseconds), so the setup screen's first frame already lists the dilemmas; without a usable cache it
    is left for the setup screen to parse after its first paint (and cached then)."""
    from ebtui.core.usecases.context import open_context
    from ebtui.core.usecases.models import load_models, model_choices

    ctx = context or open_context(store=store, models_file=models_file)
    choices = model_choices(load_models(ctx))
    doc_path = Path(document) if document else None
    dilemmas = app_dilemmas(doc_path) if doc_path is not None else cached_builtin_dilemmas()
    return Services(context=ctx, dilemmas=dilemmas, choices=choices, document=doc_path)


class _AppWithServices(Protocol):
    services: Services


def app_services(node: DOMNode) -> Services:
    """The Services of the app a screen or widget runs in (EbtuiApp.services)."""
    return cast(_AppWithServices, node.app).services


def app_context(node: DOMNode) -> AppContext:
    """The use-case context of the app a screen or widget runs in (what it passes to `ebtui.core.usecases`)."""
    return app_services(node).context
