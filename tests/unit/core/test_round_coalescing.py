"""Text deltas the consumer has not taken yet are joined: the same text, in order, in fewer events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ebtui.core.events import (
    PhaseFinished,
    PhaseRetrying,
    PhaseStarted,
    RoundEvent,
    RoundFinished,
    TextDelta,
)
from ebtui.core.records import PHASE_ORDER, PhaseStatus, PhaseType, RoundStatus
from ebtui.core.round import run_round
from ebtui.providers.base import Completion, Delta, ModelClient, ProviderError, StreamItem, Usage
from ebtui.providers.retry import RetryingClient, RetryPolicy
from ebtui.providers.scripted import _TOKEN, ScriptedClient, ScriptedFault
from tests.support.factories import round_spec


async def _events(clients: dict[str, ModelClient]) -> list[RoundEvent]:
    return [ev async for ev in run_round(round_spec(), clients)]


def _check_order(events: list[RoundEvent]) -> None:
    """Every phase's text lies between its PhaseStarted and PhaseFinished, and equals its response."""
    r = events[-1].round  # type: ignore[attr-defined]
    for pt in PHASE_ORDER:
        idx = [i for i, e in enumerate(events) if getattr(e, "phase_type", None) == pt and isinstance(e, TextDelta)]
        start = next(i for i, e in enumerate(events) if isinstance(e, PhaseStarted) and e.phase_type == pt)
        end = next(i for i, e in enumerate(events) if isinstance(e, PhaseFinished) and e.phase.phase_type == pt)
        assert idx and start < idx[0] and idx[-1] < end
        assert "".join(events[i].text for i in idx) == r.phase(pt).response  # type: ignore[attr-defined]


async def test_a_zero_latency_model_gives_fewer_events_with_the_same_text() -> None:
    clients: dict[str, ModelClient] = {m: ScriptedClient(m) for m in ("alpha", "beta", "judge")}
    events = await _events(clients)
    assert isinstance(events[-1], RoundFinished) and events[-1].round.status == RoundStatus.COMPLETE
    _check_order(events)
    r = events[-1].round
    tokens = sum(len(_TOKEN.findall(p.response)) for p in r.phases)
    deltas = sum(isinstance(e, TextDelta) for e in events)
    assert deltas * 10 < tokens  # joined: ~141 tokens a call, one event per event-loop turn


async def test_a_model_slower_than_the_consumer_gives_one_event_per_piece() -> None:
    clients: dict[str, ModelClient] = {m: ScriptedClient(m, tokens_per_second=5000) for m in ("alpha", "beta", "judge")}
    events = await _events(clients)
    _check_order(events)
    r = events[-1].round
    for pt in PHASE_ORDER:
        pieces = [e.text for e in events if isinstance(e, TextDelta) and e.phase_type == pt]
        assert pieces == _TOKEN.findall(r.phase(pt).response)


async def test_text_is_never_joined_across_a_retry() -> None:
    """The text streamed before a PhaseRetrying is void; after it, only the new attempt's text arrives."""
    alpha = ScriptedClient(
        "alpha", faults=[ScriptedFault(kind="server", match="presentation", times=1, after_tokens=20)]
    )
    policy = RetryPolicy(attempts=3, backoff_s=0.0, backoff_max_s=0.0)
    clients: dict[str, ModelClient] = {
        "alpha": RetryingClient(alpha, policy),
        "beta": ScriptedClient("beta"),
        "judge": ScriptedClient("judge"),
    }
    events = await _events(clients)
    r = events[-1].round  # type: ignore[attr-defined]
    pres = r.phase(PhaseType.PRESENTATION)
    assert pres.status == PhaseStatus.COMPLETE and pres.attempts == 2
    retry = next(i for i, e in enumerate(events) if isinstance(e, PhaseRetrying))
    before = "".join(e.text for e in events[:retry] if isinstance(e, TextDelta))
    after = "".join(
        e.text for e in events[retry:] if isinstance(e, TextDelta) and e.phase_type == PhaseType.PRESENTATION
    )
    assert before == "".join(_TOKEN.findall(pres.response)[:20])
    assert after == pres.response


class _Bursty(ModelClient):
    """Streams two phases' worth of pieces in bursts with no await in between (as a fast local model)."""

    provider = "test"
    supports_json_schema = False

    def __init__(self, name: str, pieces: list[str]) -> None:
        self.name = name
        self.model = name
        self.pieces = pieces

    async def stream(self, prompt: str, system_prompt: str, **kw: Any) -> AsyncIterator[StreamItem]:
        if not self.pieces:
            raise ProviderError("empty", "nothing")
        for p in self.pieces:
            yield Delta(p)
        yield Delta("")  # empty pieces are dropped, not sent as events
        yield Completion(text="".join(self.pieces), finish_reason="stop", usage=Usage())


async def test_the_text_of_record_is_the_models_whatever_the_events() -> None:
    pieces = ["Principle: ", "é", "\n", "", "Conclusion: ", "x" * 3]
    clients: dict[str, ModelClient] = {
        "alpha": _Bursty("alpha", pieces),
        "beta": ScriptedClient("beta"),
        "judge": ScriptedClient("judge"),
    }
    events = await _events(clients)
    pres = [e for e in events if isinstance(e, TextDelta) and e.phase_type == PhaseType.PRESENTATION]
    assert len(pres) == 1 and pres[0].text == "".join(pieces)
    assert all(e.text for e in events if isinstance(e, TextDelta))
    assert events[-1].round.phase(PhaseType.PRESENTATION).response == "".join(pieces)  # type: ignore[attr-defined]


def test_the_queue_joins_only_into_an_untaken_item_of_the_same_phase() -> None:
    """Unit level: the queue merges only into an untaken text item of the same phase."""
    from ebtui.core.events import EventQueue

    q = EventQueue()
    q.put_text("r", PhaseType.RESPONSE, "a")
    q.put_text("r", PhaseType.RESPONSE, "b")
    q.put_text("r", PhaseType.CONSISTENCY_TEST, "c")
    q.put_text("r", PhaseType.RESPONSE, "d")
    q.put(PhaseRetrying("r", PhaseType.RESPONSE, 2, "boom", 0.0))
    q.put_text("r", PhaseType.RESPONSE, "e")
    first = q.take()
    q.put_text("r", PhaseType.RESPONSE, "f")  # the consumer has taken "ab": "f" is not added to it
    got = [first] + [q.take() for _ in range(len(q.items))]
    assert [(type(e).__name__, getattr(e, "text", None)) for e in got] == [
        ("TextDelta", "ab"),
        ("TextDelta", "c"),
        ("TextDelta", "d"),
        ("PhaseRetrying", None),
        ("TextDelta", "ef"),
    ]
