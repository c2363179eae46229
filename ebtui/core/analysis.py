"""What tournament data says: pure functions over a list of rounds, each returning a small `Table`.

Conventions every table follows (the report repeats them in its header):

* Two views. ``effective=True`` reads ``Judgment.effective_scores`` (human overrides applied);
  ``effective=False`` reads ``Judgment.parsed_scores`` (as judged). Tables that read no scores (framework
  usage) say so and are the same in both views.
* Missing is missing. A score the judge did not give (None) is left out of every mean and count — never
  treated as 0 — and every table's `coverage` says how many rounds and scores were left out.
* One observation per exchange. A judge panel is several rounds sharing an ``exchange_id`` (same phases 1-4,
  different judges); outside the judge-agreement tables, a team's score in an exchange is, per criterion,
  the mean of the panel's scores for it, so a panel does not count the same answer several times. A team's
  overall score in an exchange is the mean of its available criteria.
* Statistics come from scipy / numpy / krippendorff: 95% confidence intervals are Student-t intervals
  (``scipy.stats.t.interval`` with ``scipy.stats.sem``); n < 2 leaves the interval blank.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np
from scipy import stats

from ebtui.core.frameworks import (
    CONSISTENCY_CLASSES,
    CONSISTENCY_LABELS,
    FRAMEWORKS,
    CueMatch,
    consistency_cues,
    disagreement_sentences,
    framework_mentions,
    sentences,
)
from ebtui.core.records import CRITERIA, PhaseStatus, PhaseType, Round, Scores, Team
from ebtui.providers.base import ModelClient, ProviderError

Cell = str | int | float | None

OVERALL = "mean_of_criteria"
ROLES: dict[Team, str] = {"a": "presenting", "b": "responding"}
VIEW_EFFECTIVE = "effective"
VIEW_AS_JUDGED = "as_judged"
VIEW_BOTH = "both"  # the table reads no scores


@dataclass
class Coverage:
    """How much of the input a table could use."""

    rounds: int = 0
    rounds_without_judgment: int = 0
    rounds_without_any_score: int = 0  # a judgment exists but gives (in this view) no score at all
    scores_expected: int = 0  # 7 criteria x 2 teams per judged round
    scores_missing: int = 0

    @property
    def rounds_left_out(self) -> int:
        return self.rounds_without_judgment + self.rounds_without_any_score

    def describe(self) -> str:
        return (
            f"{self.rounds_left_out} of {self.rounds} rounds left out as missing "
            f"({self.rounds_without_judgment} without a judgment, {self.rounds_without_any_score} with no score); "
            f"{self.scores_missing} of {self.scores_expected} scores missing and left out (never counted as 0)"
        )


@dataclass
class Table:
    key: str  # file-name friendly id, e.g. "model_comparison"
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    view: str = VIEW_EFFECTIVE
    notes: list[str] = field(default_factory=list)
    coverage: Coverage | None = None
    #: columns holding model-written text (quotes): the report makes them inert
    text_columns: frozenset[str] = frozenset()

    def column(self, name: str) -> list[Cell]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def as_dicts(self) -> list[dict[str, Cell]]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]


# ---- small helpers ---------------------------------------------------------------------------------


def view_name(effective: bool) -> str:
    return VIEW_EFFECTIVE if effective else VIEW_AS_JUDGED


def team_scores(r: Round, team: Team, effective: bool) -> Scores | None:
    """A team's scores in one round (None: the round has no judgment)."""
    if r.judgment is None:
        return None
    return r.judgment.effective_scores(team) if effective else r.judgment.parsed_scores(team)


def coverage(rounds: Iterable[Round], effective: bool) -> Coverage:
    cov = Coverage()
    for r in rounds:
        cov.rounds += 1
        if r.judgment is None:
            cov.rounds_without_judgment += 1
            continue
        missing = 0
        for team in ("a", "b"):
            missing += len(team_scores(r, team, effective).missing())  # type: ignore[union-attr]
        cov.scores_expected += 2 * len(CRITERIA)
        cov.scores_missing += missing
        if missing == 2 * len(CRITERIA):
            cov.rounds_without_any_score += 1
    return cov


@dataclass
class Summary:
    n: int
    mean: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None


def summarize(values: Sequence[float]) -> Summary:
    """Mean, sample sd and 95% t-interval of the values (n < 2: no sd, no interval)."""
    n = len(values)
    if n == 0:
        return Summary(0, None, None, None, None)
    arr = np.asarray(values, dtype=float)
    mean = float(np.mean(arr))
    if n < 2:
        return Summary(n, mean, None, None, None)
    sd = float(np.std(arr, ddof=1))
    sem = float(stats.sem(arr))
    if sem == 0.0:  # every value equal: the interval collapses to the mean
        return Summary(n, mean, sd, mean, mean)
    lo, hi = stats.t.interval(0.95, n - 1, loc=mean, scale=sem)
    return Summary(n, mean, sd, float(lo), float(hi))


def _mean(values: Sequence[float]) -> float | None:
    # statistics.fmean: exact enough and ~20x faster than numpy on the short lists used here
    return statistics.fmean(values) if values else None


def phase_text(r: Round, phase: PhaseType) -> str | None:
    """A phase's answer, only when the phase completed (failed phases have no content)."""
    p = r.phase(phase)
    if p is None or p.status != PhaseStatus.COMPLETE or not p.response:
        return None
    return p.response


# ---- exchanges (one debate, possibly judged by a panel) -------------------------------------------


@dataclass
class Exchange:
    id: str
    rounds: list[Round]
    _means: dict[tuple[str, bool], dict[str, float | None]] = field(default_factory=dict, repr=False)
    _scores: dict[tuple[str, bool], list[tuple[str, Scores]]] = field(default_factory=dict, repr=False)

    def judged_scores(self, team: Team, effective: bool) -> list[tuple[str, Scores]]:
        """(judge, scores) for every round of the exchange that has a judgment (computed once)."""
        key = (team, effective)
        if key not in self._scores:
            self._scores[key] = [(r.judge_model, s) for r in self.rounds
                                 if (s := team_scores(r, team, effective)) is not None]
        return self._scores[key]

    @property
    def first(self) -> Round:
        return self.rounds[0]

    @property
    def dilemma_id(self) -> str:
        return self.first.dilemma_id

    @property
    def dilemma_title(self) -> str:
        return next((r.dilemma_title for r in self.rounds if r.dilemma_title), "")

    @property
    def team_a_model(self) -> str:
        return self.first.team_a_model

    @property
    def team_b_model(self) -> str:
        return self.first.team_b_model

    def model(self, team: Team) -> str:
        return self.team_a_model if team == "a" else self.team_b_model

    def text(self, phase: PhaseType) -> str | None:
        # prefer the round that ran the phase itself over one that copied it
        for r in sorted(self.rounds, key=lambda r: (r.phase(phase) is not None and bool(r.phase(phase).reused_from))):
            t = phase_text(r, phase)
            if t is not None:
                return t
        return None

    def criterion_means(self, team: Team, effective: bool) -> dict[str, float | None]:
        """Per criterion, the mean over the panel's judgments of the scores given (None: nobody gave one)."""
        if (team, effective) in self._means:
            return dict(self._means[(team, effective)])
        per: dict[str, list[int]] = {c: [] for c in CRITERIA}
        for _judge, s in self.judged_scores(team, effective):
            for c, v in s.as_dict().items():
                if v is not None:
                    per[c].append(v)
        self._means[(team, effective)] = {c: _mean(vs) for c, vs in per.items()}
        return dict(self._means[(team, effective)])

    def overall(self, team: Team, effective: bool) -> float | None:
        vals = [v for v in self.criterion_means(team, effective).values() if v is not None]
        return _mean(vals)


def exchange_key(r: Round) -> str:
    return r.exchange_id or r.id


def exchanges(rounds: Iterable[Round]) -> list[Exchange]:
    groups: dict[str, list[Round]] = {}
    for r in rounds:
        groups.setdefault(exchange_key(r), []).append(r)
    return [Exchange(k, v) for k, v in sorted(groups.items())]


def _models(rounds: Iterable[Round]) -> list[str]:
    return sorted({m for r in rounds for m in (r.team_a_model, r.team_b_model)})


# ---- 1 model comparison -----------------------------------------------------------------------------


def model_comparison(rounds: Sequence[Round], *, effective: bool = True) -> Table:
    """Per model and role (presenting = Team A, responding = Team B), each criterion's mean, n and 95% CI."""
    values: dict[tuple[str, Team, str], list[float]] = defaultdict(list)
    for ex in exchanges(rounds):
        for team in ("a", "b"):
            means = ex.criterion_means(team, effective)
            for c, v in means.items():
                if v is not None:
                    values[(ex.model(team), team, c)].append(v)
            overall = ex.overall(team, effective)
            if overall is not None:
                values[(ex.model(team), team, OVERALL)].append(overall)
    rows: list[list[Cell]] = []
    for model in _models(rounds):
        for team in ("a", "b"):
            for c in (*CRITERIA, OVERALL):
                s = summarize(values.get((model, team, c), []))
                if s.n == 0 and c == OVERALL:
                    continue
                rows.append([model, ROLES[team], c, s.n, s.mean, s.ci_low, s.ci_high])
    return Table(
        "model_comparison",
        "Model comparison: mean score per criterion by role",
        ["model", "role", "criterion", "n", "mean", "ci95_low", "ci95_high"],
        rows,
        view=view_name(effective),
        coverage=coverage(rounds, effective),
        notes=[
            "n counts exchanges (a judge panel's scores for one answer are averaged first).",
            f"{OVERALL}: per exchange, the mean of the criteria the judges gave.",
        ],
    )


# ---- 2 dilemma difficulty ----------------------------------------------------------------------------


def dilemma_difficulty(rounds: Sequence[Round], *, effective: bool = True) -> Table:
    """Per dilemma: mean across models, spread between models (max-min and sd of model means), rank."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    titles: dict[str, str] = {}
    n_ex: dict[str, int] = defaultdict(int)
    for ex in exchanges(rounds):
        titles.setdefault(ex.dilemma_id, ex.dilemma_title)
        n_ex[ex.dilemma_id] += 1
        for team in ("a", "b"):
            v = ex.overall(team, effective)
            if v is not None:
                per[ex.dilemma_id][ex.model(team)].append(v)
    rows: list[list[Cell]] = []
    for d in sorted(set(titles)):
        model_means = {m: float(np.mean(vs)) for m, vs in per.get(d, {}).items() if vs}
        if model_means:
            arr = np.array(list(model_means.values()))
            mean = float(np.mean(arr))
            spread = float(np.max(arr) - np.min(arr))
            sd = float(np.std(arr, ddof=1)) if len(arr) >= 2 else None
            low = min(model_means, key=lambda m: (model_means[m], m))
            high = max(model_means, key=lambda m: (model_means[m], m))
        else:
            mean = spread = sd = None
            low = high = None
        rows.append([d, titles[d], n_ex[d], len(model_means), mean, spread, sd, low, high, None, ""])
    ranked = sorted((r for r in rows if r[4] is not None), key=lambda r: (r[4], r[0]))
    for i, r in enumerate(ranked, 1):
        r[9] = i
    if len(ranked) >= 2:
        ranked[0][10] = "hardest"
        ranked[-1][10] = "easiest"
    return Table(
        "dilemma_difficulty",
        "Dilemma difficulty",
        ["dilemma", "title", "exchanges", "models", "mean", "spread", "sd", "lowest_model", "highest_model",
         "rank", "verdict"],
        rows,
        view=view_name(effective),
        coverage=coverage(rounds, effective),
        text_columns=frozenset({"title"}),
        notes=[
            "A model's mean on a dilemma is the mean of its overall scores there (both roles); the dilemma's "
            "mean is the mean of its model means (each model weighs the same); spread = highest - lowest "
            "model mean; sd = sample sd of the model means. Rank 1 = lowest mean = hardest.",
        ],
    )


# ---- 3 cross-model matrix -----------------------------------------------------------------------------


def cross_model(rounds: Sequence[Round], *, effective: bool = True) -> tuple[Table, Table]:
    """Team A model x Team B model: Team A's mean overall score, and how many exchanges each cell holds."""
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    a_models = sorted({r.team_a_model for r in rounds})
    b_models = sorted({r.team_b_model for r in rounds})
    for ex in exchanges(rounds):
        v = ex.overall("a", effective)
        if v is not None:
            cells[(ex.team_a_model, ex.team_b_model)].append(v)
    cols = ["team_a_model", *b_models]
    means = [[a, *[_mean(cells.get((a, b), [])) for b in b_models]] for a in a_models]
    counts = [[a, *[len(cells.get((a, b), [])) for b in b_models]] for a in a_models]
    cov = coverage(rounds, effective)
    view = view_name(effective)
    return (
        Table("cross_model", "Cross-model matrix: Team A's mean score (rows: Team A, columns: Team B)",
              cols, means, view=view, coverage=cov,
              notes=["Cell: mean of Team A's overall score over the exchanges with that pairing; blank: none."]),
        Table("cross_model_n", "Cross-model matrix: exchanges with a Team A score", cols, counts, view=view,
              coverage=cov),
    )


# ---- 4 consistency --------------------------------------------------------------------------------------


@dataclass
class ConsistencyClassification:
    label: str  # one of CONSISTENCY_CLASSES
    evidence: list[str]  # the sentences that support it
    cues: list[str] = field(default_factory=list)
    classifier: str = "rules"  # "rules" or "model:<name>"
    error: str | None = None


def classify_consistency(text: str) -> ConsistencyClassification:
    """Classify a consistency-test answer with the documented cue lexicon (frameworks.CONSISTENCY_CUES).

    Refinement beats a named difference; a change of conclusion counts as inconsistent only when no
    acknowledging cue (refinement, difference) appears; kept-principle comes last; nothing matched:
    "unclassified" (the rules could not tell — not a verdict on the model).
    """
    found = consistency_cues(text)

    def result(label: str, hits: list[CueMatch]) -> ConsistencyClassification:
        return ConsistencyClassification(label, [h.sentence for h in hits], [h.cue for h in hits])

    for label in ("acknowledged_refinement", "relevant_difference", "inconsistent_unacknowledged", "kept_principle"):
        if found[label]:
            return result(label, found[label])
    return ConsistencyClassification("unclassified", [], [])


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
    per_model_scores: dict[str, list[float]] = defaultdict(list)
    per_model_classes: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CONSISTENCY_CLASSES, 0))
    per_model_answers: dict[str, int] = defaultdict(int)
    unanswered = 0
    for ex in exchanges(rounds):
        model = ex.team_a_model
        score = ex.criterion_means("a", effective)["consistency"]
        if score is not None:
            per_model_scores[model].append(score)
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
        s = summarize(per_model_scores.get(model, []))
        counts = per_model_classes[model]
        summary_rows.append([model, s.n, s.mean, s.ci_low, s.ci_high, per_model_answers[model],
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

TEAM_PHASES: tuple[tuple[PhaseType, Team], ...] = (
    (PhaseType.PRESENTATION, "a"),
    (PhaseType.RESPONSE, "b"),
    (PhaseType.REBUTTAL, "a"),
    (PhaseType.CONSISTENCY_TEST, "a"),
)
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


# ---- 6 judge agreement ------------------------------------------------------------------------------------

#: name fragments -> provider family; checked against each "/"-separated part of a model name
FAMILY_PREFIXES: tuple[tuple[str, str], ...] = (
    ("claude", "anthropic"), ("anthropic", "anthropic"),
    ("gpt", "openai"), ("chatgpt", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
    ("openai", "openai"), ("davinci", "openai"),
    ("gemini", "google"), ("gemma", "google"), ("palm", "google"), ("google", "google"),
    ("grok", "xai"), ("xai", "xai"),
    ("qwen", "alibaba"), ("qwq", "alibaba"),
    ("llama", "meta"), ("meta-llama", "meta"),
    ("mistral", "mistral"), ("mixtral", "mistral"), ("codestral", "mistral"), ("magistral", "mistral"),
    ("deepseek", "deepseek"), ("phi", "microsoft"), ("command", "cohere"), ("kimi", "moonshot"),
    ("smollm", "huggingface"), ("scripted", "scripted"),
)

#: configured provider -> family (providers that serve many families, e.g. openai-compatible hosts, are
#: not in here: the name decides for them)
PROVIDER_FAMILY: dict[str, str] = {"anthropic": "anthropic", "google": "google", "gemini": "google", "xai": "xai"}


def model_family(name: str, provider: str | None = None) -> str:
    """The provider family of a model, by a documented heuristic.

    1. A configured provider that names one family (anthropic, google/gemini, xai) decides.
    2. Otherwise the name: lower-cased, split on "/" (e.g. "meta-llama/Llama-3"), the first part that starts
       with a known prefix (FAMILY_PREFIXES: claude→anthropic, gpt/o1/o3→openai, gemini→google, grok→xai,
       qwen→alibaba, llama→meta, mistral→mistral, deepseek→deepseek, ...) decides.
    3. A configured provider "openai" with an unrecognised name → openai; else the name itself (its own family).
    """
    if provider and provider.lower() in PROVIDER_FAMILY:
        return PROVIDER_FAMILY[provider.lower()]
    parts = [p for p in name.lower().split("/") if p]
    for part in reversed(parts):
        for prefix, family in FAMILY_PREFIXES:
            if part.startswith(prefix) and (len(part) == len(prefix) or not part[len(prefix)].isalpha()
                                            or len(prefix) >= 4):
                return family
    if provider and provider.lower() == "openai":
        return "openai"
    return name.lower()


def _panels(rounds: Sequence[Round]) -> list[Exchange]:
    return [ex for ex in exchanges(rounds)
            if len({r.judge_model for r in ex.rounds if r.judgment is not None}) >= 2]


def _judge_values(ex: Exchange, team: Team, criterion: str, effective: bool) -> dict[str, float]:
    """judge -> the value it gave (a judge who judged the exchange twice: the mean of the two)."""
    got: dict[str, list[float]] = defaultdict(list)
    for judge, s in ex.judged_scores(team, effective):
        if criterion == OVERALL:
            v = s.mean()
        else:
            v = s.as_dict()[criterion]
        if v is not None:
            got[judge].append(float(v))
    return {j: statistics.fmean(vs) for j, vs in got.items()}


def judge_agreement(
    rounds: Sequence[Round],
    *,
    effective: bool = True,
    families: Mapping[str, str] | None = None,
) -> tuple[Table, Table, Table, Table]:
    """Where several judges scored the same exchange: agreement, correlations, offsets, own-family bias.

    Units are (exchange, team). `families` maps a model name to a provider (or family) to use before the
    name heuristic of `model_family`.
    """
    panels = _panels(rounds)
    panel_rounds = [r for ex in panels for r in ex.rounds]
    judges = sorted({r.judge_model for r in panel_rounds if r.judgment is not None})
    units = [(ex, team) for ex in panels for team in ("a", "b")]
    view = view_name(effective)
    cov = coverage(panel_rounds, effective)

    def fam(m: str) -> str:
        return model_family(m, (families or {}).get(m))

    alpha_rows: list[list[Cell]] = []
    corr_rows: list[list[Cell]] = []
    for c in (*CRITERIA, OVERALL):
        table = [_judge_values(ex, team, c, effective) for ex, team in units]
        data = np.array([[u.get(j, np.nan) for u in table] for j in judges], dtype=float) if judges else None
        alpha: float | None = None
        pairable = int(np.sum(np.sum(~np.isnan(data), axis=0) >= 2)) if data is not None and data.size else 0
        if data is not None and pairable >= 1 and len(judges) >= 2:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    a = float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
                alpha = None if math.isnan(a) else a
            except (ValueError, ZeroDivisionError):
                alpha = None
        ratings = int(np.sum(~np.isnan(data))) if data is not None and data.size else 0
        alpha_rows.append([c, pairable, len(judges), ratings, alpha])
        for j1, j2 in combinations(judges, 2):
            pairs = [(u[j1], u[j2]) for u in table if j1 in u and j2 in u]
            r_p = p_p = r_s = p_s = None
            if len(pairs) >= 3:
                x, y = np.array(pairs).T
                if np.ptp(x) > 0 and np.ptp(y) > 0:
                    pr = stats.pearsonr(x, y)
                    sr = stats.spearmanr(x, y)
                    r_p, p_p = float(pr.statistic), float(pr.pvalue)
                    r_s, p_s = float(sr.statistic), float(sr.pvalue)
            corr_rows.append([c, j1, j2, len(pairs), r_p, p_p, r_s, p_s])

    offset_rows: list[list[Cell]] = []
    family_rows: list[list[Cell]] = []
    for j in judges:
        offsets: list[float] = []
        same: list[float] = []
        other: list[float] = []
        for ex, team in units:
            vals = _judge_values(ex, team, OVERALL, effective)
            if j not in vals or len(vals) < 2:
                continue
            others = [v for k, v in vals.items() if k != j]
            off = vals[j] - statistics.fmean(others)
            offsets.append(off)
            (same if fam(ex.model(team)) == fam(j) else other).append(off)
        s = summarize(offsets)
        tendency = ""
        if s.ci_low is not None and s.ci_high is not None:
            tendency = "harsh" if s.ci_high < 0 else "generous" if s.ci_low > 0 else "within noise"
        offset_rows.append([j, fam(j), s.n, s.mean, s.ci_low, s.ci_high, tendency])
        ss, so = summarize(same), summarize(other)
        diff = p = None
        if ss.mean is not None and so.mean is not None:
            diff = ss.mean - so.mean
            if ss.n >= 2 and so.n >= 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    t = stats.ttest_ind(same, other, equal_var=False)
                p = None if math.isnan(t.pvalue) else float(t.pvalue)
        family_rows.append([j, fam(j), ss.n, ss.mean, so.n, so.mean, diff, p])

    panel_note = (f"{len(panels)} exchanges were scored by two or more judges ({len(judges)} judges); "
                  "a unit is one team in one exchange.")
    return (
        Table("judge_alpha", "Judge agreement: Krippendorff's alpha (interval) per criterion",
              ["criterion", "units_pairable", "judges", "ratings", "alpha"], alpha_rows, view=view,
              coverage=cov, notes=[panel_note, "alpha: krippendorff.alpha, interval level; 1 = perfect "
                                   "agreement, 0 = chance. Blank: not computable."]),
        Table("judge_correlation", "Judge agreement: pairwise correlation per criterion",
              ["criterion", "judge_1", "judge_2", "n", "pearson_r", "pearson_p", "spearman_rho", "spearman_p"],
              corr_rows, view=view, coverage=cov,
              notes=["scipy.stats.pearsonr / spearmanr over the units both judges scored; blank with fewer than 3 units or "
                     "a judge gave the same value throughout."]),
        Table("judge_offsets", "Judges: mean offset from the other judges (negative = harsh)",
              ["judge", "family", "n", "mean_offset", "ci95_low", "ci95_high", "tendency"],
              offset_rows, view=view, coverage=cov,
              notes=["Offset per unit: the judge's overall score (mean of its criteria) minus the mean of the "
                     "other judges' overall scores for the same unit. harsh/generous: the 95% CI excludes 0."]),
        Table("judge_family", "Judges: offset on teams of their own provider family vs other families",
              ["judge", "family", "n_same_family", "offset_same_family", "n_other_family",
               "offset_other_family", "difference", "welch_p"],
              family_rows, view=view, coverage=cov,
              notes=["Family: ebtui.core.analysis.model_family (configured provider if it names one family, "
                     "else the model-name prefix). A positive difference means the judge is more generous "
                     "to its own family; welch_p: scipy.stats.ttest_ind(equal_var=False)."]),
    )


# ---- 7 self-debate ---------------------------------------------------------------------------------------


def self_debate(rounds: Sequence[Round], *, effective: bool = True) -> Table:
    """When a model plays both teams: does Team B push back? Compared with the same model as Team B
    against other models: Team B's constructive_engagement, the share of Team B's response sentences
    with a disagreement cue, and the absolute gap between the two teams' overall scores."""
    rows: list[list[Cell]] = []
    by_model: dict[tuple[str, str], list[Exchange]] = defaultdict(list)
    for ex in exchanges(rounds):
        cond = "self" if ex.team_a_model == ex.team_b_model else "vs_others"
        by_model[(ex.team_b_model, cond)].append(ex)
    self_models = sorted({m for m, cond in by_model if cond == "self"})
    for model in self_models:
        for cond in ("self", "vs_others"):
            exs = by_model.get((model, cond), [])
            ce = [v for ex in exs if (v := ex.criterion_means("b", effective)["constructive_engagement"]) is not None]
            rates = []
            for ex in exs:
                text = ex.text(PhaseType.RESPONSE)
                if text:
                    n_sent = len(sentences(text))
                    rates.append(len(disagreement_sentences(text)) / n_sent if n_sent else 0.0)
            gaps = []
            for ex in exs:
                a, b = ex.overall("a", effective), ex.overall("b", effective)
                if a is not None and b is not None:
                    gaps.append(abs(a - b))
            s_ce = summarize(ce)
            rows.append([model, cond, len(exs), s_ce.n, s_ce.mean, s_ce.ci_low, s_ce.ci_high,
                         len(rates), _mean(rates), len(gaps), _mean(gaps)])
    return Table(
        "self_debate",
        "Self-debate: the model as Team B against itself vs against other models",
        ["model", "condition", "exchanges", "n_engagement", "b_constructive_engagement", "ci95_low", "ci95_high",
         "n_responses", "disagreement_rate", "n_gap", "abs_score_gap"],
        rows,
        view=view_name(effective),
        coverage=coverage(rounds, effective),
        notes=["disagreement_rate: mean over responses of the share of sentences with a disagreement cue "
               "(frameworks.DISAGREEMENT_CUES). abs_score_gap: |Team A overall - Team B overall|. Less "
               "disagreement and a smaller gap in 'self' suggest the model agrees with itself."],
    )


# ---- everything ---------------------------------------------------------------------------------------------


def analyse(
    rounds: Sequence[Round],
    *,
    effective: bool = True,
    classifications: Mapping[str, ConsistencyClassification] | None = None,
    families: Mapping[str, str] | None = None,
) -> list[Table]:
    """Every score-based table for one view (framework usage, which reads no scores, is separate)."""
    return [
        model_comparison(rounds, effective=effective),
        dilemma_difficulty(rounds, effective=effective),
        *cross_model(rounds, effective=effective),
        *consistency_analysis(rounds, effective=effective, classifications=classifications),
        *judge_agreement(rounds, effective=effective, families=families),
        self_debate(rounds, effective=effective),
    ]
