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

from ebtui.core.usecases.models import ModelChoices

if TYPE_CHECKING:  # the engine is imported when a round starts, the records after the first frame
    from textual.dom import DOMNode

    from ebtui.core.events import RoundEvent
    from ebtui.core.records import Dilemma
    from ebtui.core.usecases.context import AppContext
    from ebtui.core.usecases.play import PreparedRound
    from ebtui.tui.first_screen import Listed

#: plays a prepared round: its events, the last RoundFinished (the signature of ebtui.core.usecases.play.play)
RoundPlayer = Callable[["AppContext", "PreparedRound"], AsyncIterator["RoundEvent"]]


def app_dilemmas(path: Path | None) -> list[Dilemma]:
    """The dilemmas of a document for the app (ebtui.core.usecases.dilemmas.app_dilemmas, imported when called:
    the records load after the first frame)."""
    from ebtui.core.usecases.dilemmas import app_dilemmas as read

    return read(path)


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
    #: what the list shows while `dilemmas` is None: the built-in dilemmas as the last start saw them
    #: (ebtui.tui.first_screen), so the first frame lists them before their records are read
    listed: list[Listed] | None = None
    load_document: Callable[[Path | None], list[Dilemma]] = app_dilemmas
    #: the test seam for a round's events: None plays it (ebtui.core.usecases.play.play); a test replays a
    #: fixed round's events here instead, once the round is prepared (its clients built) as usual
    run_round: RoundPlayer | None = None


def default_services(document: str | Path | None = None, models_file: str | Path | None = None,
                     store: str | Path | None = None, *, context: AppContext | None = None) -> Services:
    """The real thing (over `context` when given, else one opened on `models_file` and `store`). A bad
    models.toml or --document is a UsageError (one line, before the screen opens).

    The store opens when first used; its modules load in the app's warm-up, after the first frame. A
    document named on the command line is read now. For the built-in one, when the last start saw exactly
    these inputs (ebtui.tui.first_screen), the list and the pickers come from what it kept and the records
    and models are read after the first frame; otherwise the models are read and checked now, the dilemmas
    come from their cache (a few milliseconds; without a usable one the setup screen parses the document
    after its first paint), and what the first screen shows is kept for the next start."""
    from ebtui.core.usecases.context import open_context
    from ebtui.tui import first_screen

    ctx = context or open_context(store=store, models_file=models_file)
    doc_path = Path(document) if document else None
    if doc_path is None:
        known = first_screen.read(ctx.models_file)
        if known is not None:
            return Services(context=ctx, dilemmas=None, choices=known.choices, listed=known.listed)
    from ebtui.core.usecases.dilemmas import cached_builtin_dilemmas
    from ebtui.core.usecases.models import load_models, model_choices

    choices = model_choices(load_models(ctx))
    dilemmas = app_dilemmas(doc_path) if doc_path is not None else cached_builtin_dilemmas()
    if doc_path is None and dilemmas is not None:
        first_screen.remember(ctx, dilemmas)
    return Services(context=ctx, dilemmas=dilemmas, choices=choices, document=doc_path)


class _AppWithServices(Protocol):
    services: Services


def app_services(node: DOMNode) -> Services:
    """The Services of the app a screen or widget runs in (EbtuiApp.services)."""
    return cast(_AppWithServices, node.app).services


def app_context(node: DOMNode) -> AppContext:
    """The use-case context of the app a screen or widget runs in (what it passes to `ebtui.core.usecases`)."""
    return app_services(node).context
