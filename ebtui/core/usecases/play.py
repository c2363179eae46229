"""Play one round: `prepare_round` checks everything before any model call (the dilemma, the models and
their keys, a writable store, the round to resume) and says what is wrong in one UsageError line; `play`
yields the round's events, `play_to_end` plays it through. The engine loads with the first round."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.core.records import Dilemma, Round, new_id
from ebtui.core.usecases.context import check_writable as _check_writable
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.events import RoundEvent
    from ebtui.core.round import RoundSpec as RoundSpec
    from ebtui.core.usecases.context import AppContext
    from ebtui.providers.base import ModelClient as ModelClient

#: what a front end is called with for each event of a round played to its end
EventHandler = Callable[["RoundEvent"], object]


@dataclass(frozen=True)
class RoundRequest:
    """A round as a front end asks for it. `dilemma` is the record, or its id looked up in `dilemmas`."""

    dilemma: Dilemma | str
    team_a: str
    team_b: str
    judge: str
    dilemmas: Sequence[Dilemma] = ()
    #: the dilemma document recorded with the round ("": the built-in one)
    document: str = ""
    #: how an unknown id's error names the document (default: `document`, else "the built-in document")
    document_name: str = ""
    blind_judge: bool = False
    #: the order the judge reads the teams' material in: "ab" (as it happened) or "ba" (Team B's first)
    judge_order: str = "ab"
    max_tokens: int | None = None
    #: a saved round to continue (same dilemma and teams): its completed phases are kept
    resume_id: str | None = None


@dataclass
class PreparedRound:
    """A round ready to play: its spec (round id chosen), one client per model, the round it resumes."""

    spec: RoundSpec
    clients: dict[str, ModelClient]
    resume: Round | None = None

    @property
    def round_id(self) -> str:
        return self.spec.round_id or ""

    @property
    def dilemma(self) -> Dilemma:
        return self.spec.dilemma


#: here too (its home is context.py: the app checks the store before its first frame without this module's
#: imports, the records among them)
check_writable = _check_writable


def prepare_round(ctx: AppContext, request: RoundRequest, *, check_store: bool = True) -> PreparedRound:
    """Everything a round needs, looked up and checked before any model call; a UsageError (one line) says
    what is wrong. `check_store=False` skips the store's write probe (the app probes it once, at start)."""
    from ebtui.core.facts import may_resume
    from ebtui.core.round import RoundSpec
    from ebtui.core.store import StoreError
    from ebtui.core.usecases.dilemmas import find_dilemma

    dilemma = request.dilemma
    if isinstance(dilemma, str):
        where = request.document_name or request.document or "the built-in document"
        dilemma = find_dilemma(request.dilemmas, dilemma, where)
    clients = ctx.clients([request.team_a, request.team_b, request.judge])  # ConfigError: a UsageError
    if check_store:
        check_writable(ctx)
    try:
        store = ctx.store
        previous = store.load_round(request.resume_id) if request.resume_id else None
    except StoreError as exc:
        raise UsageError(f"results store {ctx.store_root}: {exc}") from None
    if previous is not None and not may_resume(previous, dilemma.id, request.team_a, request.team_b):
        raise UsageError(
            f"round {request.resume_id} is {previous.dilemma_id}: Team A {previous.team_a_model} vs Team B "
            f"{previous.team_b_model}; resume it with that --dilemma, --team-a and --team-b"
        )
    spec = RoundSpec(dilemma, request.team_a, request.team_b, request.judge, blind_judge=request.blind_judge,
                     round_id=previous.id if previous is not None else new_id("r-"),
                     judge_order=request.judge_order, max_tokens=request.max_tokens, document=request.document)
    return PreparedRound(spec, clients, previous)


def play(ctx: AppContext, prepared: PreparedRound) -> AsyncIterator[RoundEvent]:
    """The round's events as it is played (each phase saved in the context's store); the last is
    RoundFinished."""
    from ebtui.core.round import run_round

    return run_round(prepared.spec, prepared.clients, ctx.store, resume=prepared.resume)


async def play_to_end(ctx: AppContext, prepared: PreparedRound, on_event: EventHandler | None = None) -> Round:
    """Play the round through (each event to `on_event`) and return it; the clients are closed after."""
    from ebtui.core.round import play_round

    try:
        return await play_round(prepared.spec, prepared.clients, ctx.store, resume=prepared.resume,
                                on_event=on_event)
    finally:
        for client in prepared.clients.values():
            with contextlib.suppress(Exception):
                await client.aclose()


def keep_unsaved(round_: Round | None) -> Path | None:
    """The round as played so far, written outside the store (its own disk may be full): the path, or None."""
    from ebtui.core.store.files import atomic_write, round_bytes

    if round_ is None:
        return None
    folder = Path(tempfile.gettempdir()) / "ebtui-unsaved"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{round_.id}.json"
        atomic_write(path, round_bytes(round_), durable=False)
    except OSError:
        return None
    return path


def resume_command(words: Sequence[str], options: Sequence[tuple[str, object]]) -> str:
    """The shell command that runs (or resumes) a round: `words`, then each option that is set, quoted."""
    from ebtui.core.preflight import command_hint

    return command_hint(words, options)
