"""Consistency-test answers (rules or a model classifier) and framework usage (reads no scores)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ebtui.core.analysis.bootstrap import SCALE, cluster_mean
from ebtui.core.analysis.common import (
    VIEW_BOTH,
    Cell,
    Table,
    coverage,
    exchanges,
    view_name,
)
from ebtui.core.analysis.consistency_rules import TEAM_PHASES, ConsistencyClassification, classify_consistency
from ebtui.core.frameworks import (
    CONSISTENCY_CLASSES,
    CONSISTENCY_LABELS,
    FRAMEWORKS,
    framework_mentions,
)
from ebtui.core.records import PhaseType, Round
from ebtui.providers.base import ModelClient, ProviderError

# ---- 4 consistency --------------------------------------------------------------------------------------


CLASSIFIER_SCHEMA: dict[str, Any] = {
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


def _quote(lines: Iterable[str], limit: int = 2) -> str:
    items = list(lines)[:limit]
    return " … ".join(f"“{s}”" for s in items)


def consistency_analysis(
    rounds: Sequence[Round],
    *,
    effective: bool = True,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
) -> tuple[Table, Table]:
    """Per model (as Team A, who takes the test): the judges' consistency scores and each answer's class.

    `classifications` (exchange id -> classification, e.g. from a model classifier) replaces the rules for
    the answers it covers; every row names its classifier.
    """
    answers: list[list[Cell]] = []
    per_model_scores: dict[str, list[tuple[float, str]]] = defaultdict(list)
    per_model_classes: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CONSISTENCY_CLASSES, 0))
    per_model_answers: dict[str, int] = defaultdict(int)
    unanswered = 0
    for ex in exchanges(rounds):
        model = ex.team_a_model
        score = ex.criterion_means("a", effective)["consistency"]
        if score is not None:
            per_model_scores[model].append((score, ex.dilemma_id))
        text = ex.text(PhaseType.CONSISTENCY_TEST)
        if text is None:
            unanswered += 1
            continue
        cls = (classifications or {}).get(ex.id) or classify_consistency(text)
        per_model_answers[model] += 1
        per_model_classes[model][cls.label] += 1
        answers.append([model, ex.dilemma_id, ex.id, score, cls.label, cls.classifier,
                        ", ".join(dict.fromkeys(cls.cues)), _quote(cls.evidence)])
    answers.sort(key=lambda r: (str(r[0]), str(r[1]), str(r[2])))
    summary_rows: list[list[Cell]] = []
    for model in sorted(set(per_model_scores) | set(per_model_answers)):
        got = per_model_scores.get(model, [])
        mean, iv = cluster_mean([v for v, _ in got], [d for _, d in got], clip=SCALE)
        counts = per_model_classes[model]
        summary_rows.append([model, len(got), mean, iv.low, iv.high, per_model_answers[model],
                             *[counts[c] for c in CONSISTENCY_CLASSES]])
    cov = coverage(rounds, effective)
    view = view_name(effective)
    classifiers = sorted({str(r[5]) for r in answers}) or ["rules"]
    notes = [
        "Consistency score: the judges' 'consistency' score for Team A (the team that takes the test).",
        "Classes: " + "; ".join(f"{c} = {CONSISTENCY_LABELS[c]}" for c in CONSISTENCY_CLASSES) + ".",
        f"Classified by: {', '.join(classifiers)}"
        + (" (documented cue-phrase rules; see README)" if classifiers == ["rules"] else "") + ".",
        f"{unanswered} exchanges have no completed consistency-test answer.",
    ]
    return (
        Table("consistency_summary", "Consistency: judges' scores and answer classes per model",
              ["model", "n_scores", "mean_consistency", "ci95_low", "ci95_high", "answers",
               *CONSISTENCY_CLASSES],
              summary_rows, view=view, coverage=cov, notes=notes),
        Table("consistency_answers", "Consistency: each consistency-test answer, classified, with its evidence",
              ["model", "dilemma", "exchange", "consistency_score", "class", "classifier", "cues", "evidence"],
              answers, view=view, coverage=cov, text_columns=frozenset({"evidence", "cues"}),
              notes=["Evidence: the answer's sentence(s) that matched the class's cue phrases, quoted."]),
    )


# ---- 5 framework usage ----------------------------------------------------------------------------------

JUDGE_REMARKS = "judge_remarks"


def framework_usage(rounds: Sequence[Round]) -> tuple[Table, Table]:
    """Per model and phase, how many answers mention each framework (documented lexicon), with quotes.

    Phase "judge_remarks" reads the judges' justifications about the model's team (one per judgment).
    Reads no scores, so it is the same in both views.
    """
    answers: dict[tuple[str, str], int] = defaultdict(int)
    hits: dict[tuple[str, str, str], int] = defaultdict(int)
    quotes: dict[tuple[str, str, str], tuple[str, str]] = {}

    def record(model: str, phase: str, source_id: str, text: str) -> None:
        answers[(model, phase)] += 1
        for fw, found in framework_mentions(text).items():
            if found:
                hits[(model, phase, fw)] += 1
                quotes.setdefault((model, phase, fw), (source_id, found[0].sentence))

    for ex in exchanges(rounds):
        for phase, team in TEAM_PHASES:
            text = ex.text(phase)
            if text is not None:
                record(ex.model(team), phase.value, ex.id, text)
    for r in sorted(rounds, key=lambda r: r.id):
        if r.judgment is None:
            continue
        for team in ("a", "b"):
            just = r.judgment.team_a_justification if team == "a" else r.judgment.team_b_justification
            if just.strip():
                record(r.team_a_model if team == "a" else r.team_b_model, JUDGE_REMARKS, r.id, just)
    phase_order = [p.value for p, _ in TEAM_PHASES] + [JUDGE_REMARKS]
    keys = sorted(answers, key=lambda k: (k[0], phase_order.index(k[1])))
    usage_rows: list[list[Cell]] = [[m, p, answers[(m, p)], *[hits.get((m, p, fw), 0) for fw in FRAMEWORKS]]
                                    for m, p in keys]
    quote_rows: list[list[Cell]] = []
    for m, p in keys:
        for fw in FRAMEWORKS:
            if (m, p, fw) in quotes:
                src, sentence = quotes[(m, p, fw)]
                quote_rows.append([m, p, fw, src, f"“{sentence}”"])
    notes = ["Counts: answers (texts) in which at least one sentence matches the framework's lexicon "
             "(ebtui/core/frameworks.py, listed in the README). Reads no scores: the same in both views."]
    return (
        Table("framework_usage", "Framework usage: answers mentioning each framework, per model and phase",
              ["model", "phase", "answers", *FRAMEWORKS], usage_rows, view=VIEW_BOTH, notes=notes,
              coverage=None),
        Table("framework_quotes", "Framework usage: first matching sentence per model, phase and framework",
              ["model", "phase", "framework", "source", "quote"], quote_rows, view=VIEW_BOTH,
              text_columns=frozenset({"quote"}),
              notes=["source: exchange id (debate phases) or round id (judge remarks)."]),
    )


