"""What a team's answer looks like, apart from what it says: its length and how heavily it is formatted.

Both are measured on the team's own text in the exchange, exactly as the judge read it — Team A's
presentation, rebuttal and consistency test; Team B's response:

* `words`: the number of words (runs of non-space characters), reported per 100 words;
* `format_density`: Markdown formatting elements per 100 words — heading lines (`#`), list items (`-`, `*`,
  `+`, `1.`), table rows (`|`), block quotes (`>`), and emphasis spans (`**bold**`, `__bold__`, `*italic*`,
  `_italic_`, backtick code).

A consistency test skipped because the dilemma has none contributes no text. A phase that did not complete
has no text (its round has no judgment either).
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
