"""Consistency-test answers classified by a model (the rules are ebtui.core.analysis.consistency_rules; the
tables are ebtui.core.analysis.columnar's)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import JsonValue

from ebtui.core.analysis.common import exchanges
from ebtui.core.analysis.consistency_rules import ConsistencyClassification
from ebtui.core.frameworks import CONSISTENCY_CLASSES
from ebtui.core.records import PhaseType, Round
from ebtui.providers.base import ModelClient, ProviderError

CLASSIFIER_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": [c for c in CONSISTENCY_CLASSES if c != "unclassified"]},
        "quote": {"type": "string"},
    },
    "required": ["label", "quote"],
}

CLASSIFIER_SYSTEM = "You classify answers to a moral-philosophy consistency test. Answer with JSON only."


def classifier_prompt(presentation: str, answer: str) -> str:
    return (
        "A debater first presented this analysis, stating a principle:\n\n<presentation>\n"
        f"{presentation}\n</presentation>\n\nThen, given a structurally similar case, answered:\n\n<answer>\n"
        f"{answer}\n</answer>\n\nClassify the answer as exactly one of:\n"
        "- kept_principle: applies the same principle and reaches a consistent conclusion\n"
        "- relevant_difference: reaches a different conclusion and names a morally relevant difference\n"
        "- acknowledged_refinement: admits the original principle needs refinement or revision\n"
        "- inconsistent_unacknowledged: reaches a conflicting conclusion without acknowledging it\n"
        'Reply as JSON: {"label": "...", "quote": "<the sentence of the answer that best supports it>"}'
    )


async def classify_consistency_with_model(
    presentation: str, answer: str, client: ModelClient, *, max_tokens: int | None = 300
) -> ConsistencyClassification:
    """Ask a model to classify one answer. A failed call or an unusable reply is recorded as such
    ("unclassified" with `error`), never guessed; the quote is kept only if it occurs in the answer."""
    who = f"model:{client.name}"
    try:
        completion = await client.generate(
            classifier_prompt(presentation, answer), CLASSIFIER_SYSTEM,
            json_schema=CLASSIFIER_SCHEMA, max_tokens=max_tokens,
        )
    except ProviderError as exc:
        return ConsistencyClassification("unclassified", [], classifier=who, error=f"{exc.kind}: {exc.message}")
    text = completion.text.strip()
    m = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        data = json.loads(m.group(0) if m else text)
        label = str(data["label"])
    except (ValueError, KeyError, TypeError):
        return ConsistencyClassification("unclassified", [], classifier=who, error="reply was not the JSON asked for")
    if label not in CONSISTENCY_CLASSES or label == "unclassified":
        return ConsistencyClassification("unclassified", [], classifier=who, error=f"unknown label {label!r}")
    quote = str(data.get("quote") or "").strip()
    evidence = [quote] if quote and quote in answer else []
    return ConsistencyClassification(label, evidence, classifier=who,
                                     error=None if evidence or not quote else "quote not found in the answer")


async def classify_consistency_answers_with_model(
    rounds: Sequence[Round], client: ModelClient
) -> dict[str, ConsistencyClassification]:
    """Model classifications of every consistency-test answer, keyed by exchange id (calls run one by one)."""
    out: dict[str, ConsistencyClassification] = {}
    for ex in exchanges(rounds):
        answer = ex.text(PhaseType.CONSISTENCY_TEST)
        if answer is None:
            continue
        out[ex.id] = await classify_consistency_with_model(ex.text(PhaseType.PRESENTATION) or "", answer, client)
    return out

