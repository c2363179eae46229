"""tournament.toml: what a tournament plays, how fast, and how much it may spend (`TournamentConfig`,
`load_tournament_config`). Relative paths (document, store) are relative to the file's folder; every error
names the file and the field. The keys: docs/TOURNAMENTS.md and tournament.example.toml.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ebtui.errors import read_text

__all__ = [
    "Limits",
    "TournamentConfig",
    "TournamentConfigError",
    "load_tournament_config",
    "parse_tournament_config",
]


class TournamentConfigError(Exception):
    """A tournament.toml problem; the message names the file and the field."""


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: most calls in flight per provider (e.g. openai = 4)
    providers: dict[str, int] = Field(default_factory=dict)
    #: most calls in flight per model name (as in models.toml)
    models: dict[str, int] = Field(default_factory=dict)

    @field_validator("providers", "models")
    @classmethod
    def _positive(cls, v: dict[str, int]) -> dict[str, int]:
        for k, n in v.items():
            if n < 1:
                raise ValueError(f"limit for {k!r} must be at least 1, got {n}")
        return v


JudgeMode = Literal["rotate", "panel"]


def _no_repeats(names: list[str]) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"listed more than once: {', '.join(dup)}")


_Listed = TypeVar("_Listed", bound=str | list[str])


def _nonempty_list(v: _Listed, empty: str) -> _Listed:
    """A list given for a field that also takes a word ("all", "rotate"): not empty, no name twice."""
    if isinstance(v, list):
        if not v:
            raise ValueError(empty)
        _no_repeats(v)
    return v


class TournamentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = ""
    models: list[str] = Field(min_length=1)
    #: "all" (default) or a list of dilemma ids
    dilemmas: Literal["all"] | list[str] = "all"
    #: dilemma .docx; None = the built-in document
    document: str | None = None
    self_debates: bool = False
    rounds_per_pairing: int = Field(default=1, ge=1, le=1000)
    #: "rotate" (one judge per round, balanced), "panel" (every model not playing judges each exchange)
    #: or an explicit list of judges to rotate among (may name models that do not play)
    judges: JudgeMode | list[str] = "rotate"
    blind_judge: bool = False
    #: the order each judge reads the teams' material in: "ab" (as it happened), "ba" (Team B's first) or
    #: "balanced" (each judge alternates, round by round of the schedule; see ebtui.core.tournament.runner)
    judge_order: Literal["ab", "ba", "balanced"] = "ab"
    #: exchanges (rounds, or a round and its panel) in flight at once
    concurrency: int = Field(default=8, ge=1, le=1024)
    limits: Limits = Field(default_factory=Limits)
    budget_usd: float | None = Field(default=None, gt=0)
    seed: int = 0
    store: str | None = None
    #: max output tokens per call (None: each model's own setting)
    max_tokens: int | None = Field(default=None, ge=1)
    #: expected output tokens per call, for the dry run and budget estimates (None: max_tokens)
    expected_output_tokens: int | None = Field(default=None, ge=1)
    #: adaptive: after the first pass, add waves of work until every pairwise interval's half-width is at most
    #: this (score points), the budget is reached, or nothing can narrow it (ebtui.core.tournament.adaptive).
    #: A runtime setting: not part of the tournament's identity.
    target_half_width: float | None = Field(default=None, gt=0)

    #: where it was read from (not part of the file)
    source: Path | None = Field(default=None, exclude=True)

    @field_validator("models")
    @classmethod
    def _unique_models(cls, v: list[str]) -> list[str]:
        _no_repeats(v)
        if any(not m.strip() for m in v):
            raise ValueError("a model name is empty")
        return v

    @field_validator("dilemmas")
    @classmethod
    def _dilemmas(cls, v: Literal["all"] | list[str]) -> Literal["all"] | list[str]:
        return _nonempty_list(v, 'empty list (omit it or use "all" for every dilemma)')

    @field_validator("judges", mode="before")
    @classmethod
    def _judges_shape(cls, v: object) -> object:
        if isinstance(v, str) and v not in ("rotate", "panel"):
            raise ValueError(f'must be "rotate", "panel" or a list of model names, not {v!r}')
        return v

    @field_validator("judges")
    @classmethod
    def _judges(cls, v: JudgeMode | list[str]) -> JudgeMode | list[str]:
        _nonempty_list(v, 'empty list (use "rotate" or "panel", or name the judges)')
        return v

    @model_validator(mode="after")
    def _self_debate_needs_nothing_more(self) -> TournamentConfig:
        if len(self.models) == 1 and not self.self_debates:
            raise ValueError("models: one model makes no pairing (add models, or set self_debates = true)")
        return self

    # -- derived -------------------------------------------------------------------------------
    @property
    def base_dir(self) -> Path:
        return self.source.parent if self.source else Path.cwd()

    def document_path(self) -> Path | None:
        if self.document is None:
            return None
        p = Path(self.document).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    def store_path(self) -> Path | None:
        if self.store is None:
            return None
        p = Path(self.store).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    def all_judges(self) -> list[str]:
        """Every model that may judge: listed judges, else the playing models."""
        return list(self.judges) if isinstance(self.judges, list) else list(self.models)

    def all_model_names(self) -> list[str]:
        """Players first, then judge-only models."""
        return self.models + [j for j in self.all_judges() if j not in self.models]

    def schedule_fields(self) -> dict[str, object]:
        """What decides the schedule and the rounds' content — the tournament's identity.

        Runtime settings (concurrency, limits, budget, store) are left out, so changing them keeps
        the same tournament (resume with a larger budget or more concurrency).
        """
        return {
            "name": self.name,
            "models": self.models,
            "dilemmas": self.dilemmas,
            "document": self.document,
            "self_debates": self.self_debates,
            "rounds_per_pairing": self.rounds_per_pairing,
            "judges": self.judges,
            "blind_judge": self.blind_judge,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            # only when set, so every tournament configured before the option keeps its id
            **({"judge_order": self.judge_order} if self.judge_order != "ab" else {}),
        }

    def tournament_id(self) -> str:
        """Deterministic: the same schedule fields give the same id, so a re-run resumes."""
        blob = json.dumps(self.schedule_fields(), sort_keys=True, separators=(",", ":"))
        return "t-" + hashlib.sha256(blob.encode()).hexdigest()[:12]

    def display_name(self) -> str:
        if self.name:
            return self.name
        return self.source.stem if self.source else "tournament"


def _field_of(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc if not str(p).startswith(("list[", "literal[", "function-"))]
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "(top level)"


def parse_tournament_config(data: Mapping[str, object], source: Path | str | None = None) -> TournamentConfig:
    where = str(source) if source else "tournament config"
    try:
        cfg = TournamentConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = _field_of(tuple(err.get("loc", ())))
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unknown field"
        elif err.get("type") == "missing":
            msg = "required field is missing"
        msg = msg.removeprefix("Value error, ")
        more = f" (and {len(exc.errors()) - 1} more problem(s))" if len(exc.errors()) > 1 else ""
        raise TournamentConfigError(f"{where}: field {field}: {msg}{more}") from None
    cfg.source = Path(source) if source else None
    return cfg


def load_tournament_config(path: str | Path) -> TournamentConfig:
    p = Path(path)
    text = read_text(p, TournamentConfigError, missing=f"{p}: no such file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TournamentConfigError(f"{p}: not valid TOML: {exc}") from None
    return parse_tournament_config(data, p)
