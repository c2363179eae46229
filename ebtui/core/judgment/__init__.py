"""The judgment: the JSON schema a judge is asked for (`JUDGMENT_SCHEMA`), and a tolerant parser for what it
actually says (`parse_judgment`): strict or repaired JSON first, then markdown tables and labelled lines.
A score the judge did not give (or gave outside 1-10) is missing, never defaulted, and anything other than
clean schema JSON is marked for review. The rules: docs/JUDGMENT.md.
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
