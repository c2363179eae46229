"""The judgment: the JSON schema a judge is asked for, and a tolerant parser for what it actually says.

Structured first, tolerant fallback, never a default. `parse_judgment` reads, in this order of preference:

1. JSON — every object in the reply, strict (`json`) or repaired (`json_repaired`: trailing commas, single
   quotes, Python literals, missing commas, raw line breaks in strings, a reply cut off mid-object, whose
   complete scores are kept). Shapes other than the schema's are matched by name (`{"Team A": {...}}`,
   `{"team_a_scores": {...}}`, `{"consistency": {"team_a": 8, "team_b": 7}}`, per-criterion objects).
2. Text — markdown tables (a column per team, a column per criterion, or one table per team under a team
   heading: `table`) and lines such as "Consistency: 8/10" under a heading per team (`lines`).

A score the judge did not give, or gave outside 1-10, or gave as a fraction or a range, is missing (None) —
never clamped, rounded or defaulted — and the judgment is marked `needs_review` with a reason. Anything
other than clean schema JSON is marked too, so a human looks at every guessed reading.
"""

from ebtui.core.judgment.parser import parse_judgment
from ebtui.core.judgment.schema import (
    JUDGMENT_FORMAT_INSTRUCTIONS,
    JUDGMENT_SCHEMA,
    JUDGMENT_SCHEMA_NAME,
    SCORE_PLACEHOLDER,
)

__all__ = [
    "JUDGMENT_FORMAT_INSTRUCTIONS",
    "JUDGMENT_SCHEMA",
    "JUDGMENT_SCHEMA_NAME",
    "SCORE_PLACEHOLDER",
    "parse_judgment",
]
