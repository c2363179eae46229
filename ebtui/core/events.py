"""The events of a round, as yielded by the round engine (ebtui.core.round).

One stream, two front ends: the CLI prints these, the TUI routes them to panes, tournaments count them.
Past-tense dataclasses, cheap to create (one per streamed token).
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass
from enum import Enum

from ebtui.core.records import Judgment, Phase, PhaseType, Round


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    round_id: str
    phase_type: PhaseType
    model_id: str
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class TextDelta:
    round_id: str
    phase_type: PhaseType
    text: str


@dataclass(frozen=True, slots=True)
class PhaseRetrying:
    """The call failed and restarts: text streamed for this phase so far is void."""

    round_id: str
    phase_type: PhaseType
    attempt: int
    error: str
    delay_s: float


@dataclass(frozen=True, slots=True)
class _PhaseEnded:
    round_id: str
    phase: Phase


@dataclass(frozen=True, slots=True)
class PhaseFinished(_PhaseEnded):
    """The phase completed: `phase.response` holds its answer."""


@dataclass(frozen=True, slots=True)
class PhaseFailed(_PhaseEnded):
    """The phase failed, was skipped or cancelled: `phase.status` says which, `phase.error` why."""


@dataclass(frozen=True, slots=True)
class JudgmentParsed:
    round_id: str
    judgment: Judgment


@dataclass(frozen=True, slots=True)
class RoundFinished:
    round: Round


RoundEvent = PhaseStarted | TextDelta | PhaseRetrying | PhaseFinished | PhaseFailed | JudgmentParsed | RoundFinished


class RoundEventHandler:
    """A dispatch a consumer of round events may subclass: `handle(event)` calls the one `on_...` method for
    the event's kind; each does nothing unless overridden."""

    def handle(self, event: RoundEvent) -> None:
        # exact types: the event classes are final leaves, so one dict lookup per streamed token
        getattr(self, _DISPATCH[type(event)])(event)

    def on_phase_started(self, event: PhaseStarted) -> None:
        """A phase's model call starts (attempt 1) or a resumed phase starts again."""

    def on_text(self, event: TextDelta) -> None:
        """Streamed text of a running phase (consecutive pieces of one phase may arrive joined)."""

    def on_retrying(self, event: PhaseRetrying) -> None:
        """The phase's call restarts: text shown for it so far is void."""

    def on_phase_finished(self, event: PhaseFinished) -> None:
        """The phase completed."""

    def on_phase_failed(self, event: PhaseFailed) -> None:
        """The phase failed, was skipped or cancelled."""

    def on_judgment(self, event: JudgmentParsed) -> None:
        """The judge's reply was read into scores."""

    def on_round_finished(self, event: RoundFinished) -> None:
        """The round ended (complete, failed or interrupted); the last event of a round."""


_DISPATCH: dict[type, str] = {
    PhaseStarted: "on_phase_started",
    TextDelta: "on_text",
    PhaseRetrying: "on_retrying",
    PhaseFinished: "on_phase_finished",
    PhaseFailed: "on_phase_failed",
    JudgmentParsed: "on_judgment",
    RoundFinished: "on_round_finished",
}


# ------------------------------------------------------------------ the engine -> consumer hand-off

class End(Enum):
    """The one value put on an EventQueue by the round engine when it has nothing more to say (END)."""

    END = "end"


END = End.END


class TextRun:
    """Text of one phase queued for the consumer, not yet taken: consecutive deltas of the same phase
    join it (one TextDelta instead of one per piece), so a model that streams faster than the consumer
    reads costs one event per event-loop turn, not one per token."""

    __slots__ = ("round_id", "phase_type", "parts")

    def __init__(self, round_id: str, phase_type: PhaseType, text: str) -> None:
        self.round_id = round_id
        self.phase_type = phase_type
        self.parts = [text]

    def event(self) -> TextDelta:
        parts = self.parts
        return TextDelta(self.round_id, self.phase_type, parts[0] if len(parts) == 1 else "".join(parts))


class EventQueue:
    """The engine → consumer hand-off: a deque and one wake-up future (an asyncio.Queue costs a future and
    several calls per item; a zero-latency model streams thousands of deltas a round).

    Text is coalesced: a delta whose phase is also the phase of the last item still queued (not yet taken
    by the consumer) is appended to that item, so the consumer sees the same text, in the same order
    relative to every other event, in fewer TextDelta events. Nothing is merged across another event (a
    PhaseRetrying, another phase's text, a phase transition), and text the consumer has taken is final."""

    __slots__ = ("items", "waiter")

    def __init__(self) -> None:
        self.items: collections.deque[RoundEvent | TextRun | End] = collections.deque()
        self.waiter: asyncio.Future[None] | None = None

    def put(self, item: RoundEvent | TextRun | End) -> None:
        self.items.append(item)
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    def put_text(self, round_id: str, phase_type: PhaseType, text: str) -> None:
        items = self.items
        if items:
            last = items[-1]
            if type(last) is TextRun and last.phase_type is phase_type:  # one queue per round
                last.parts.append(text)
                return  # the consumer has a wake-up pending already (it has not taken `last`)
        self.put(TextRun(round_id, phase_type, text))

    async def wait(self) -> None:
        if not self.items:
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None

    def take(self) -> RoundEvent | End:
        item = self.items.popleft()
        return item.event() if isinstance(item, TextRun) else item
