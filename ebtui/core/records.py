"""The records ebtui reads and writes. Every record carries a schema_version so files can evolve."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from ebtui.providers.base import Usage

SCHEMA_VERSION = 1

CRITERIA: tuple[str, ...] = (
    "principle_articulation",
    "consistency",
    "stakeholder_recognition",
    "uncertainty_integration",
    "framework_awareness",
    "intellectual_honesty",
    "constructive_engagement",
)

CRITERION_LABELS: dict[str, str] = {
    "principle_articulation": "Principle articulation",
    "consistency": "Consistency",
    "stakeholder_recognition": "Stakeholder recognition",
    "uncertainty_integration": "Uncertainty integration",
    "framework_awareness": "Framework awareness",
    "intellectual_honesty": "Intellectual honesty",
    "constructive_engagement": "Constructive engagement",
}

Team = Literal["a", "b"]


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"


class Record(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=False)
    schema_version: int = SCHEMA_VERSION


class Dilemma(Record):
    id: str
    title: str
    category: str = ""
    core_scenario: str = ""
    complications: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)
    asymmetric_features: list[str] = Field(default_factory=list)
    consistency_case: str = ""
    #: anything else the document gives, e.g. {"structure": "Symmetric"}
    metadata: dict[str, str] = Field(default_factory=dict)
    #: where it came from (document path) — informative only
    source: str = ""

    @property
    def has_consistency_case(self) -> bool:
        """False: its rounds skip the consistency test (recorded as skipped, no prompt sent)."""
        return bool(self.consistency_case.strip())


class PhaseType(StrEnum):
    PRESENTATION = "presentation"
    RESPONSE = "response"
    REBUTTAL = "rebuttal"
    CONSISTENCY_TEST = "consistency_test"
    JUDGMENT = "judgment"


PHASE_ORDER: tuple[PhaseType, ...] = (
    PhaseType.PRESENTATION,
    PhaseType.RESPONSE,
    PhaseType.REBUTTAL,
    PhaseType.CONSISTENCY_TEST,
    PhaseType.JUDGMENT,
)

#: which team speaks in each phase ("judge" for the judgment)
PHASE_SPEAKER: dict[PhaseType, str] = {
    PhaseType.PRESENTATION: "a",
    PhaseType.RESPONSE: "b",
    PhaseType.REBUTTAL: "a",
    PhaseType.CONSISTENCY_TEST: "a",
    PhaseType.JUDGMENT: "judge",
}


class PhaseStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    SKIPPED = "skipped"  # not run because a phase it needs failed (or, error_kind NO_CONSISTENCY_CASE, not applicable)
    CANCELLED = "cancelled"


#: error_kind of a consistency-test phase SKIPPED because the dilemma has no consistency case: nothing was
#: sent, and the round can still complete (the judge is told there was no consistency test)
NO_CONSISTENCY_CASE = "no_consistency_case"


class Phase(Record):
    phase_type: PhaseType
    model_id: str
    prompt: str = ""
    system_prompt: str = ""
    response: str = ""  # only ever the model's successful answer; never error text
    timestamp: datetime = Field(default_factory=utcnow)  # when the phase started
    finished_at: datetime | None = None
    status: PhaseStatus = PhaseStatus.PENDING
    error: str | None = None  # what went wrong, when status is failed/skipped/cancelled
    error_kind: str | None = None
    partial_response: str = ""  # text streamed before a failure, kept for the record, never passed on
    attempts: int = 0
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency: float | None = None  # seconds
    #: when this phase was copied from another round (a judge panel shares phases 1-4)
    reused_from: str | None = None


class Scores(Record):
    """Seven criteria, each 1-10 or None (missing: the judge did not give it)."""

    principle_articulation: int | None = None
    consistency: int | None = None
    stakeholder_recognition: int | None = None
    uncertainty_integration: int | None = None
    framework_awareness: int | None = None
    intellectual_honesty: int | None = None
    constructive_engagement: int | None = None

    @field_validator(*CRITERIA)
    @classmethod
    def _in_range(cls, v: int | None) -> int | None:
        if v is not None and not 1 <= v <= 10:
            raise ValueError(f"score {v} outside 1-10")
        return v

    def as_dict(self) -> dict[str, int | None]:
        return {c: getattr(self, c) for c in CRITERIA}

    def missing(self) -> list[str]:
        return [c for c in CRITERIA if getattr(self, c) is None]

    def total(self) -> int | None:
        """Sum of the seven, or None when any is missing (a partial sum would mislead)."""
        vals = list(self.as_dict().values())
        return None if any(v is None for v in vals) else sum(vals)  # type: ignore[arg-type]

    def mean(self) -> float | None:
        vals = [v for v in self.as_dict().values() if v is not None]
        return sum(vals) / len(vals) if vals else None


#: how a score was read from the judge's reply (see docs/JUDGMENT.md)
PROVENANCE_KINDS: tuple[str, ...] = ("json", "json_repaired", "table", "line", "prose", "correction")


class ScoreSource(Record):
    """Where one parsed score came from: how it was read and the exact text it was read from."""

    team: Team
    criterion: str
    kind: str  # one of PROVENANCE_KINDS
    value: int | None  # the value read (None: read but not a valid score, e.g. 7.5 or 4/5)
    text: str = ""  # the exact source text (a JSON member, a table row, a line, a sentence)
    position: int | None = None  # character offset of `text` in the raw reply, where known
    note: str = ""  # e.g. "corrected from 7"


class ReviewReason(Record):
    """One item of a judgment's review checklist: a team's criterion, a team, or the whole judgment."""

    team: Team | None = None
    criterion: str | None = None  # None: about the whole team (team set) or the whole judgment
    kind: str = ""  # missing, invalid, prose, correction, conflict, truncated, parser, unattributed
    message: str = ""


def known_criterion(v: str) -> str:
    """A criterion's key, as records store it (an unknown one: ValueError)."""
    if v not in CRITERIA:
        raise ValueError(f"unknown criterion {v!r}")
    return v


#: a criterion's key, checked where a record is read (Override, the human audit's ratings)
Criterion = Annotated[str, AfterValidator(known_criterion)]


class Override(Record):
    team: Team
    criterion: Criterion
    parsed_value: int | None  # what the judge gave (None: missing)
    value: int | None  # the human's value; None clears the override
    note: str = ""
    time: datetime = Field(default_factory=utcnow)
    author: str = ""
    #: "score": a human's value (value None clears it); "accept": the parsed value was reviewed and accepted
    #: as it is (value then repeats parsed_value, so a reader that ignores kind still sees the parsed value)
    kind: Literal["score", "accept"] = "score"

    @field_validator("value")
    @classmethod
    def _range(cls, v: int | None) -> int | None:
        if v is not None and not 1 <= v <= 10:
            raise ValueError(f"override {v} outside 1-10")
        return v


class Judgment(Record):
    team_a_scores: Scores = Field(default_factory=Scores)
    team_b_scores: Scores = Field(default_factory=Scores)
    team_a_justification: str = ""
    team_b_justification: str = ""
    overall_analysis: str = ""
    raw_response: str = ""
    needs_review: bool = False
    review_reasons: list[str] = Field(default_factory=list)
    #: how the scores were read: "json", "json_repaired", "table", "lines", "none", ...
    parse_method: str = ""
    #: history of overrides, oldest first; the last one per (team, criterion) is in force
    overrides: list[Override] = Field(default_factory=list)
    judge_model: str = ""
    #: how each parsed score was read (one entry per team and criterion the reply gave a value for)
    provenance: list[ScoreSource] = Field(default_factory=list)
    #: the review checklist as parsed (review_reasons holds the same messages as plain text); whether it is
    #: still open is ebtui.core.review.needs_review, how each item is addressed ebtui.core.overrides
    review_items: list[ReviewReason] = Field(default_factory=list)
    # -- where this judgment came from (several judgments per round: see Round.extra_judgments) -----------
    #: a stable key for a judgment added after the round (`ebtui rejudge`: deterministic, so a resumed run
    #: never adds the same planned judgment twice); "" on the judgment the round itself asked for
    key: str = ""
    #: the order the judge read the teams' material in: "ab" (the exchange in order, Team A's presentation
    #: first — every judgment written before this field existed) or "ba" (Team B's material first)
    order: Literal["ab", "ba"] = "ab"
    #: the judge prompt's version (ebtui.core.prompts.JUDGE_PROMPT_VERSION); "" on older files
    prompt_version: str = ""
    #: when the judge's reply arrived (None on older files: the judgment phase's finished_at holds it)
    judged_at: datetime | None = None
    #: "round" (asked for by the round itself) or "rejudge" (added afterwards, transcript unchanged)
    origin: str = "round"
    #: the repeat number of a re-judgment (the same judge may judge the same transcript several times)
    repeat: int = 0
    #: the judge call's token usage and latency for a re-judgment (a round's own judgment keeps them in its
    #: judgment phase)
    usage: Usage | None = None
    latency: float | None = None
    blind: bool = False

    @model_validator(mode="after")
    def _plain_review_copies(self) -> Judgment:
        """A judgment made from its checklist (`review_items`) gets the plain copies older readers and files
        use — `needs_review` and `review_reasons` (each message once) — unless they were given: the checklist
        is the one form a writer gives."""
        if self.review_items:
            given = self.model_fields_set
            if "needs_review" not in given:
                self.needs_review = True
            if "review_reasons" not in given:
                self.review_reasons = list(dict.fromkeys(i.message for i in self.review_items))
        return self

    def source_of(self, team: Team, criterion: str) -> ScoreSource | None:
        for src in self.provenance:
            if src.team == team and src.criterion == criterion:
                return src
        return None

    def parsed_scores(self, team: Team) -> Scores:
        return self.team_a_scores if team == "a" else self.team_b_scores

    def last_actions(self) -> dict[tuple[str, str], Override]:
        """The latest human action per (team, criterion): a score, a clearing (value None) or an acceptance."""
        last: dict[tuple[str, str], Override] = {}
        for ov in self.overrides:
            last[(ov.team, ov.criterion)] = ov
        return last

    def active_overrides(self) -> dict[tuple[str, str], Override]:
        """The override in force per (team, criterion); a cleared one (value None) and an acceptance of the
        parsed value are dropped (the parsed value applies)."""
        return {k: v for k, v in self.last_actions().items() if v.value is not None and v.kind == "score"}

    def effective_scores(self, team: Team) -> Scores:
        parsed = self.parsed_scores(team).as_dict()
        for (t, crit), ov in self.active_overrides().items():
            if t == team:
                parsed[crit] = ov.value
        return Scores(**parsed)


class Imported(Record):
    """Where an imported round came from (None on rounds ebtui played itself).

    `score_sources` says, per team ("a"/"b") and criterion, where the parsed value came from:
    "imported" (the original runner's recorded score, kept as parsed), "ebtui" (ebtui's own parser, where
    the runner recorded no judgment) or "missing" (the runner defaulted it, or nobody could read it).
    """

    runner: str  # the program that played the round, e.g. "moral_reasoning_quality_evaluation"
    source_file: str  # absolute path of the file it was read from
    source_line: int | None = None  # 1-based line, when the file is a .jsonl
    source_round_id: str = ""  # the runner's own round id
    source_run: str = ""  # the runner's run (folder) name, when the file sits in one
    content_sha256: str = ""  # of the source record, canonical JSON
    imported_at: datetime = Field(default_factory=utcnow)
    #: scores exactly as the runner recorded them, defaults included: {"a": {criterion: int}, "b": {...}}
    runner_scores: dict[str, dict[str, int | None]] = Field(default_factory=dict)
    runner_parse_errors: list[str] = Field(default_factory=list)
    #: [team, criterion] pairs the runner could not parse and filled with 5
    defaulted: list[tuple[str, str]] = Field(default_factory=list)
    score_sources: dict[str, dict[str, str]] = Field(default_factory=dict)
    #: where ebtui's re-parse of the judge's reply differs from the runner's recorded (non-defaulted) score:
    #: {"team", "criterion", "runner", "ebtui"}
    disagreements: list[dict[str, object]] = Field(default_factory=list)
    #: the runner's phases ebtui has no phase type for (e.g. "consistency_test_b": Team B's consistency test)
    extra_phases: dict[str, Phase] = Field(default_factory=dict)
    #: the dilemma as the round's prompts give it, when the loaded document does not hold it
    dilemma: Dilemma | None = None


class RoundStatus(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"  # a phase failed or was cancelled; what completed is kept
    FAILED = "failed"  # nothing usable (the presentation itself failed)


class RoundSettings(BaseModel):
    """How a round was played, beyond its seats: kept in the round file under "settings".

    Unknown keys (from other tools or later versions) are kept as they are, so every old file loads and
    saves back unchanged in them."""

    model_config = ConfigDict(extra="allow")

    #: the max_tokens every call of the round was given (None: each model's own)
    max_tokens: int | None = None
    #: the dilemma as it was played (Dilemma.model_dump(mode="json")), so a judge panel can re-judge it
    dilemma: dict[str, object] | None = None
    #: who is playing a running round (see ebtui.core.liveness.writer_stamp)
    writer: list[object] | None = None
    #: model -> family (models.toml `family`, else provider) of the round's seats, as configured when it was
    #: played, so the same-family statistics do not depend on the models.toml found at report time
    families: dict[str, str] | None = None

    def get(self, key: str, default: object = None) -> object:
        """A setting by name (a field or an extra key), as the dict this used to be allowed."""
        value = getattr(self, key, None)
        if value is None and self.model_extra:
            value = self.model_extra.get(key)
        return default if value is None else value


class Round(Record):
    id: str = Field(default_factory=lambda: new_id("r-"))
    dilemma_id: str
    dilemma_title: str = ""
    team_a_model: str
    team_b_model: str
    judge_model: str
    phases: list[Phase] = Field(default_factory=list)
    judgment: Judgment | None = None
    timestamp: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    status: RoundStatus = RoundStatus.RUNNING
    error: str | None = None
    tournament_id: str | None = None
    #: rounds that share phases 1-4 (a judge panel) share an exchange id; by default the round's own id
    exchange_id: str | None = None
    #: a stable key within a tournament (dilemma, pairing, repeat, judge) used for resume
    schedule_key: str | None = None
    blind_judge: bool = False
    settings: RoundSettings = Field(default_factory=RoundSettings)
    document: str = ""  # path of the dilemma document used
    #: set on rounds imported from another program's files (see ebtui/core/importers/)
    imported: Imported | None = None
    #: judgments added after the round (`ebtui rejudge`: other judges, repeats, swapped order) of the same
    #: transcript; `judgment` stays the round's own (primary) judgment. Old files have none.
    extra_judgments: list[Judgment] = Field(default_factory=list)

    def all_judgments(self) -> list[Judgment]:
        """Every judgment of the round: its own first (when it has one), then those added afterwards."""
        return ([self.judgment] if self.judgment is not None else []) + list(self.extra_judgments)

    def judgment_by_key(self, key: str) -> Judgment | None:
        """A judgment by its key ("" or "primary": the round's own judgment)."""
        if key in ("", "primary"):
            return self.judgment
        return next((j for j in self.extra_judgments if j.key == key), None)

    def phase(self, phase_type: PhaseType | str) -> Phase | None:
        pt = PhaseType(phase_type)
        for p in self.phases:
            if p.phase_type == pt:
                return p
        return None

    def total_usage(self, include_reused: bool = False) -> Usage:
        total = Usage()
        for p in self.phases:
            if p.reused_from and not include_reused:
                continue
            total = total + p.usage
        return total


class TournamentStatus(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    STOPPED_BUDGET = "stopped_budget"


class Tournament(Record):
    id: str = Field(default_factory=lambda: new_id("t-"))
    name: str = ""
    created: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    status: TournamentStatus = TournamentStatus.RUNNING
    models: list[str] = Field(default_factory=list)
    dilemmas: list[str] = Field(default_factory=list)
    document: str = ""
    #: the tournament config as given (no keys: only env var names ever live in config)
    config: dict[str, Any] = Field(default_factory=dict)
    total_rounds: int = 0
    note: str = ""
