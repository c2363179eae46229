"""What both front ends call the phases and their speakers: one table, so `ebtui run`, the live screen and
the saved round's transcript always use the same words."""

from __future__ import annotations

from ebtui.core.facts import round_seats, speaker
from ebtui.core.facts import seat_phases as seat_phases  # the phases a seat speaks in
from ebtui.core.records import PHASE_SPEAKER, PhaseType, Round

#: a phase's title, as shown above its text
PHASE_LABELS: dict[PhaseType, str] = {
    PhaseType.PRESENTATION: "Presentation",
    PhaseType.RESPONSE: "Response",
    PhaseType.REBUTTAL: "Rebuttal",
    PhaseType.CONSISTENCY_TEST: "Consistency test",
    PhaseType.JUDGMENT: "Judgment",
}

#: who speaks (PHASE_SPEAKER's value) -> how the front ends name them
SPEAKER_LABELS: dict[str, str] = {"a": "Team A", "b": "Team B", "judge": "Judge"}


def speaker_label(phase_type: PhaseType) -> str:
    """"Team A", "Team B" or "Judge": who speaks in this phase."""
    return SPEAKER_LABELS[PHASE_SPEAKER[phase_type]]


def speaker_model(round_: Round, phase_type: PhaseType) -> str:
    """The configured model name that speaks in this phase of `round_` (not escaped: the caller shows it
    through strip_control like any other text from a file)."""
    return speaker(phase_type, round_seats(round_))
