"""The events of a round, as yielded by the round engine (ebtui.core.round).

One stream, two front ends: the CLI prints these, the TUI routes them to panes, tournaments count them.
Past-tense dataclasses, cheap to create (one per streamed token).
"""

from __future__ import annotations

from dataclasses import dataclass

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
class PhaseFinished:
    round_id: str
    phase: Phase


@dataclass(frozen=True, slots=True)
class PhaseFailed:
    round_id: str
    phase: Phase  # status failed / skipped / cancelled, with .error


@dataclass(frozen=True, slots=True)
class JudgmentParsed:
    round_id: str
    judgment: Judgment


@dataclass(frozen=True, slots=True)
class RoundFinished:
    round: Round


RoundEvent = PhaseStarted | TextDelta | PhaseRetrying | PhaseFinished | PhaseFailed | JudgmentParsed | RoundFinished
