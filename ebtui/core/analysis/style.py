"""What a team's answer looks like, apart from what it says: its length (`words`) and how heavily it is
formatted (`format_density`: Markdown elements per 100 words), measured on the team's own text exactly as
the judge read it. Definitions: docs/STATISTICS.md, "Judge bias and reliability".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ebtui.core.facts import seat_phases
from ebtui.core.records import PhaseStatus, Round, Team

_WORD = re.compile(r"\S+")
_BLOCK = re.compile(r"^[ \t]*(?:#{1,6}[ \t]|[-*+][ \t]|\d{1,3}[.)][ \t]|\||>)", re.MULTILINE)
_SPAN = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__|(?<![*\w])\*[^*\s][^*\n]*\*(?!\*)|(?<![_\w])_[^_\s][^_\n]*_(?![_\w])"
                   r"|`[^`\n]+`")


@dataclass(frozen=True)
class Style:
    words: int
    format_elements: int

    @property
    def per_100_words(self) -> float:
        return 100.0 * self.format_elements / self.words if self.words else 0.0


def text_style(text: str) -> Style:
    words = len(_WORD.findall(text))
    elements = len(_BLOCK.findall(text)) + len(_SPAN.findall(text))
    return Style(words, elements)


def team_text(r: Round, team: Team) -> str:
    parts = []
    for pt in seat_phases(team):
        ph = r.phase(pt)
        if ph is not None and ph.status == PhaseStatus.COMPLETE and ph.response:
            parts.append(ph.response)
    return "\n\n".join(parts)


def team_style(r: Round, team: Team) -> Style:
    return text_style(team_text(r, team))
