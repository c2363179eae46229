"""An audit's record: its draw (which judgments, from which population, with which seed) and the human
ratings given to them, saved as `<store>/audits/<id>.json` (ebtui.core.store.audit_files)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from ebtui.core.records import CRITERIA, SCHEMA_VERSION, Criterion, Team, new_id, utcnow

PRIMARY = "primary"  # the judgment id of a round's own judgment (a re-judgment's id is its key)


def judgment_ref(round_id: str, judgment_id: str) -> str:
    """One judgment's id in a population list: "<round id>#<judgment id>"."""
    return f"{round_id}#{judgment_id}"


class DrawnJudgment(BaseModel):
    round_id: str
    judgment_id: str  # PRIMARY or the re-judgment's key (Round.judgment_by_key)

    @property
    def ref(self) -> str:
        return judgment_ref(self.round_id, self.judgment_id)


class HumanRating(BaseModel):
    """A person's score of one team on one criterion of one drawn judgment. Later ratings of the same cell
    replace earlier ones (the file keeps every one given)."""

    round_id: str
    judgment_id: str
    team: Team
    criterion: Criterion
    score: int
    rater: str = ""
    time: datetime = Field(default_factory=utcnow)
    source: str = "app"  # "app" (the audit screen) or "sheet" (`ebtui audit import`)

    @field_validator("score")
    @classmethod
    def _range(cls, v: int) -> int:
        if not 1 <= v <= 10:
            raise ValueError(f"score {v} outside 1-10")
        return v


Cell = tuple[str, str, str, str]  # round id, judgment id, team, criterion


class Audit(BaseModel):
    schema_version: int = SCHEMA_VERSION
    id: str = Field(default_factory=lambda: new_id("a-"))
    created: datetime = Field(default_factory=utcnow)
    seed: int
    tournament: str | None = None  # the draw's scope (None: every round of the store)
    #: every judgment the draw chose from (sorted refs): an audit calibrates a report only when the report's
    #: judgments are all among them (then the audited ones are a uniform sample of the report's)
    population: list[str] = Field(default_factory=list)
    judgments: list[DrawnJudgment] = Field(default_factory=list)  # in the order drawn (the scoring order)
    ratings: list[HumanRating] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # refs the person skipped in the app (may come back)

    def latest(self) -> dict[Cell, HumanRating]:
        """The rating in force per cell (the last one given)."""
        out: dict[Cell, HumanRating] = {}
        for r in self.ratings:
            out[(r.round_id, r.judgment_id, r.team, r.criterion)] = r
        return out

    def cells_scored(self, j: DrawnJudgment, latest: dict[Cell, HumanRating] | None = None) -> int:
        latest = self.latest() if latest is None else latest
        return sum((j.round_id, j.judgment_id, t, c) in latest for t in ("a", "b") for c in CRITERIA)

    def done(self) -> int:
        """How many drawn judgments have all 14 scores (2 teams x 7 criteria)."""
        latest = self.latest()
        return sum(self.cells_scored(j, latest) == 2 * len(CRITERIA) for j in self.judgments)

    def drawn(self, round_id: str, judgment_id: str) -> bool:
        return any(j.round_id == round_id and j.judgment_id == judgment_id for j in self.judgments)

    def to_bytes(self) -> bytes:
        return self.model_dump_json(indent=2).encode("utf-8")
