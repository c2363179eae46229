"""What the judge is asked for: the JSON schema and the format instructions built from it."""

from __future__ import annotations

from pydantic import JsonValue

from ebtui.core.records import CRITERIA, CRITERION_LABELS

# --------------------------------------------------------------------------------------------------------
# What the judge is asked for
# --------------------------------------------------------------------------------------------------------

#: a name for the schema where a provider wants one (OpenAI's response_format.json_schema.name)
JUDGMENT_SCHEMA_NAME = "ethics_bowl_judgment"

_TEAM_DESCRIPTION = {
    "a": "Team A, the presenting team (presentation, rebuttal, consistency test)",
    "b": "Team B, the responding team (response)",
}


def _team_schema(team: str) -> dict[str, JsonValue]:
    return {
        "type": "object",
        "description": _TEAM_DESCRIPTION[team],
        "properties": {
            "scores": {
                "type": "object",
                "properties": {
                    c: {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 10,
                        "description": f"{CRITERION_LABELS[c]}: a whole number from 1 to 10",
                    }
                    for c in CRITERIA
                },
                "required": list(CRITERIA),
                "additionalProperties": False,
            },
            "justification": {
                "type": "string",
                "description": f"Why {'Team A' if team == 'a' else 'Team B'} earned these scores",
            },
        },
        "required": ["scores", "justification"],
        "additionalProperties": False,
    }


#: The structured output a judge is asked for. A deliberately small subset of JSON Schema (type,
#: properties, required, additionalProperties, minimum, maximum, description — no $ref, no oneOf/anyOf),
#: so the same dict works for OpenAI strict json_schema, Gemini response(_json)_schema, Anthropic
#: output formats and llama.cpp grammars. Scores come before the justification so that a reply cut off
#: by max tokens still holds the scores.
JUDGMENT_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "team_a": _team_schema("a"),
        "team_b": _team_schema("b"),
        "overall_analysis": {"type": "string", "description": "An analysis of the exchange as a whole"},
    },
    "required": ["team_a", "team_b", "overall_analysis"],
    "additionalProperties": False,
}

SCORE_PLACEHOLDER = "<whole number 1-10>"


def _format_example() -> str:
    def team(t: str) -> str:
        label = "Team A" if t == "a" else "Team B"
        scores = ",\n".join(f'      "{c}": {SCORE_PLACEHOLDER}' for c in CRITERIA)
        return (
            f'  "team_{t}": {{\n'
            f'    "scores": {{\n{scores}\n    }},\n'
            f'    "justification": "<why {label} earned these scores, citing the exchange>"\n'
            "  }"
        )

    return (
        "{\n"
        + team("a") + ",\n"
        + team("b") + ",\n"
        + '  "overall_analysis": "<your analysis of the exchange as a whole>"\n'
        + "}"
    )


_CRITERIA_KEYS = "; ".join(f'"{c}" ({CRITERION_LABELS[c]})' for c in CRITERIA)

#: The text telling a judge how to answer; the judgment prompt embeds it verbatim. Generated from
#: CRITERIA so it always agrees with JUDGMENT_SCHEMA and with the parser.
JUDGMENT_FORMAT_INSTRUCTIONS = f"""\
# Format of your answer

Answer with one JSON object and nothing else: no text before or after it, no code fence, no comments. \
It must have exactly this shape (replace each <...> with your own content):

{_format_example()}

Rules:
- "team_a" is Team A, the presenting team; "team_b" is Team B, the responding team.
- Give all fourteen scores, seven for each team. Each score is a whole number from 1 to 10, written as a \
bare JSON number: no fractions (not 7.5), no ranges (not 7-8), no "/10", no words, no quotes.
- Use the keys exactly as written, in lower case with underscores. The seven criteria keys are: \
{_CRITERIA_KEYS}.
- Write standard JSON: double quotes around every key and string, no trailing commas; inside a string \
write a line break as \\n and a double quote as \\".
- Keep each justification to a short paragraph, so your answer is not cut off.
"""

