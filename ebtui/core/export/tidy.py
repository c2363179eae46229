"""The tidy tables: every saved score, round and phase as one row of a long table (`scores`, `rounds`,
`phases`), as plain data (`TidyTable`: typed, described columns); `write_csv` needs nothing more,
`to_arrow`/`write_parquet` pyarrow and `to_pandas` pandas. The columns are the dataset card's too.
See docs/EXPORTS.md, "Tidy tables".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ebtui.core.export import MissingExtra
from ebtui.core.facts import exchange_key, team_models
from ebtui.core.families import family_function, round_families
from ebtui.core.records import CRITERIA, PHASE_ORDER, PHASE_SPEAKER, Judgment, Phase, PhaseType, Round, Team
from ebtui.core.safe_text import strip_control
from ebtui.core.views.scores import score_grid
from ebtui.providers.base import Usage

#: column types: str, int, float, bool, datetime (UTC); every column may be empty (None)
ColumnType = str
Value = str | int | float | bool | datetime | None


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    description: str


@dataclass
class TidyTable:
    name: str
    description: str
    columns: list[Column]
    rows: list[tuple[Value, ...]] = field(default_factory=list)

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def as_dicts(self) -> list[dict[str, Value]]:
        names = self.column_names
        return [dict(zip(names, r, strict=True)) for r in self.rows]


def round_judgments(r: Round) -> list[Judgment]:
    """The round's judgments in judgment-index order: the round's own (primary) judgment (`Round.judgment`) is
    index 0, then the judgments added afterwards (`ebtui rejudge`: `Round.extra_judgments`, oldest first).
    This is the one place the exports learn how a round holds its judgments."""
    out: list[Judgment] = [r.judgment] if r.judgment is not None else []
    extra = getattr(r, "extra_judgments", None)
    if isinstance(extra, list):
        for item in extra:
            if isinstance(item, Judgment):
                out.append(item)
            elif isinstance(item, dict):  # a file written by a newer version, read by this one
                out.append(Judgment.model_validate(item))
    return out


def judgment_usage(r: Round, j: Judgment) -> Usage | None:
    """The judge call's usage: a round's own judgment keeps it in its judgment phase, a judgment added
    afterwards on itself (None: not recorded)."""
    if j is r.judgment:
        phase = r.phase(PhaseType.JUDGMENT)
        return phase.usage if phase is not None else None
    usage = getattr(j, "usage", None)
    if isinstance(usage, dict):
        usage = Usage.model_validate(usage)
    return usage if isinstance(usage, Usage) else None


def _team_phases(r: Round, team: Team) -> list[Phase]:
    return [p for p in r.phases if PHASE_SPEAKER[p.phase_type] == team]


def _usage(phases: Iterable[Phase]) -> Usage:
    total = Usage()
    for p in phases:
        total = total + p.usage
    return total


def _text(value: str | None) -> str | None:
    return None if value is None else strip_control(value)


def _columns(spec: str) -> list[Column]:
    """Columns from a text table: a line per column, `name  type  description`; a line that starts with a
    space goes on with the description above it."""
    out: list[Column] = []
    for line in spec.strip("\n").splitlines():
        if line[:1].isspace():
            last = out[-1]
            out[-1] = Column(last.name, last.type, f"{last.description} {line.strip()}")
        else:
            name, type_, description = line.split(None, 2)
            out.append(Column(name, type_, description))
    return out


# ---- the three tables ------------------------------------------------------------------------------------

SCORE_COLUMNS = _columns("""
round_id                str       the round's id (`ebtui rounds show ROUND_ID`)
exchange_id             str       rounds sharing phases 1-4 (a judge panel) share it; else the round id
tournament_id           str       the tournament the round belongs to (empty: a single round)
dilemma_id              str       the dilemma played
dilemma_title           str       its title
judgment_index          int       0: the round's primary judgment; 1, 2, ...: later judgments of the same
                                  round (`ebtui rejudge`)
judgment_key            str       a later judgment's key (empty: the round's own judgment)
judgment_order          str       the order the judge read the teams' material in: ab or ba
judge                   str       the judge model of this judgment
judge_family            str       the judge's family (models.toml family, else provider, else a name rule)
team                    str       the team seat scored: a (presents, rebuts, consistency test) or b
                                  (responds)
model                   str       the model in that seat
family                  str       that model's family
criterion               str       one of the seven criteria
parsed                  int       the judge's score as parsed, 1-10; empty: the judge gave none (never
                                  defaulted)
effective               int       the score in force: a human's override if any, else parsed
overridden              bool      a human's override is in force
override_note           str       the note given with the override in force
accepted                bool      a human reviewed the parsed value and accepted it as it is
review_state            str       open: still to review; addressed: reviewed; empty: nothing to review
review_reasons          str       why the score was flagged for review ('; ' between reasons)
provenance_kind         str       how the score was read from the reply: json, json_repaired, table, line,
                                  prose, correction, imported, missing, unknown
provenance_text         str       the exact text of the reply the score was read from
judgment_needs_review   bool      the judgment as a whole still has review items open
judge_input_tokens      int       input tokens of the judge's call for this judgment
judge_output_tokens     int       output tokens of the judge's call for this judgment
judge_cost_usd          float     cost of the judge's call in USD (empty: no price configured, or not
                                  recorded)
team_input_tokens       int       input tokens of the team's own phases in this round (phases shared by a
                                  judge panel count in each of its rounds)
team_output_tokens      int       output tokens of the team's own phases in this round
team_cost_usd           float     cost of the team's phases in this round in USD (empty: no price)
round_status            str       complete, incomplete, failed or running
""")

ROUND_COLUMNS = _columns("""
round_id                str       the round's id
exchange_id             str       rounds sharing phases 1-4 (a judge panel) share it
tournament_id           str       the tournament (empty: a single round)
schedule_key            str       the round's place in its tournament's schedule
dilemma_id              str       the dilemma played
dilemma_title           str       its title
team_a_model            str       Team A's model (presentation, rebuttal, consistency test)
team_b_model            str       Team B's model (response)
judge_model             str       the judge
team_a_family           str       Team A's model family
team_b_family           str       Team B's model family
judge_family            str       the judge's family
blind_judge             bool      the judge was not told the models' names
status                  str       complete, incomplete, failed or running
error                   str       what went wrong, when the round did not complete
started_at              datetime  when the round started (UTC)
finished_at             datetime  when it ended (UTC)
n_judgments             int       judgments the round holds
parse_method            str       how the primary judgment's scores were read
needs_review            bool      the primary judgment still has review items open
n_overrides             int       human overrides in force in the primary judgment
total_a_parsed          int       Team A's total of the seven parsed scores (empty when any is missing)
total_b_parsed          int       Team B's total of the seven parsed scores
total_a_effective       int       Team A's total with overrides applied
total_b_effective       int       Team B's total with overrides applied
input_tokens            int       input tokens of the phases this round ran itself (not shared copies)
output_tokens           int       output tokens of the phases this round ran itself
cost_usd                float     their cost in USD (empty: no price configured)
imported_from           str       the program that played the round, when it was imported
""")

PHASE_COLUMNS = _columns("""
round_id                str       the round's id
exchange_id             str       the exchange (judge panel) id
tournament_id           str       the tournament (empty: a single round)
dilemma_id              str       the dilemma played
phase_index             int       order in the round: 0 presentation ... 4 judgment
phase                   str       presentation, response, rebuttal, consistency_test or judgment
speaker                 str       a, b or judge
model                   str       the model that answered
status                  str       complete, failed, skipped, cancelled, running or pending
error_kind              str       the kind of failure (or no_consistency_case)
error                   str       what went wrong
attempts                int       calls made (retries included)
finish_reason           str       why the model stopped
input_tokens            int       input tokens
output_tokens           int       output tokens
cached_tokens           int       input tokens served from the provider's prompt cache
cost_usd                float     cost in USD (empty: no price configured)
latency_s               float     seconds the successful call took
started_at              datetime  when the phase started (UTC)
finished_at             datetime  when it ended (UTC)
reused_from             str       the round this phase was copied from (a judge panel shares phases 1-4)
system_prompt           str       the system prompt sent
prompt                  str       the prompt sent
response                str       the model's answer (only ever a successful answer; never error text)
""")


def scores_table(rounds: Sequence[Round], families: Mapping[str, str] | None = None) -> TidyTable:
    fam = family_function(round_families(rounds) if families is None else families)
    rows: list[tuple[Value, ...]] = []
    for r in rounds:
        team_usage = {t: _usage(_team_phases(r, t)) for t in ("a", "b")}
        for index, j in enumerate(round_judgments(r)):
            judge = j.judge_model or r.judge_model
            grid = score_grid(j)
            ju = judgment_usage(r, j)
            key, order = str(getattr(j, "key", "") or ""), str(getattr(j, "order", "") or "ab")
            for team, model in team_models(r).items():
                tu = team_usage[team]
                for crit in CRITERIA:
                    c = grid.cell(team, crit)
                    rows.append((
                        r.id, exchange_key(r), r.tournament_id, r.dilemma_id, _text(r.dilemma_title), index,
                        key, order, judge, fam(judge), team, model, fam(model), crit, c.parsed, c.value,
                        c.override is not None, _text(c.override.note) if c.override else None,
                        c.action == "accept", c.review or None, _text("; ".join(c.reasons)) or None,
                        c.kind, _text(c.source) or None, grid.needs_review,
                        ju.input_tokens if ju else None, ju.output_tokens if ju else None,
                        ju.cost_usd if ju else None,
                        tu.input_tokens, tu.output_tokens, tu.cost_usd, str(r.status),
                    ))
    return TidyTable("scores", "one row per score: round x judgment x team x criterion", SCORE_COLUMNS, rows)


def rounds_table(rounds: Sequence[Round], families: Mapping[str, str] | None = None) -> TidyTable:
    fam = family_function(round_families(rounds) if families is None else families)
    rows: list[tuple[Value, ...]] = []
    for r in rounds:
        js = round_judgments(r)
        j = r.judgment
        grid = score_grid(j) if j is not None else None
        own = r.total_usage()
        rows.append((
            r.id, exchange_key(r), r.tournament_id, r.schedule_key, r.dilemma_id, _text(r.dilemma_title),
            r.team_a_model, r.team_b_model, r.judge_model, fam(r.team_a_model), fam(r.team_b_model),
            fam(r.judge_model), r.blind_judge, str(r.status), _text(r.error), r.timestamp, r.finished_at, len(js),
            j.parse_method if j else None, grid.needs_review if grid else None,
            len(j.active_overrides()) if j else None,
            grid.parsed_totals["a"] if grid else None, grid.parsed_totals["b"] if grid else None,
            grid.totals["a"] if grid else None, grid.totals["b"] if grid else None,
            own.input_tokens, own.output_tokens, own.cost_usd,
            r.imported.runner if r.imported else None,
        ))
    return TidyTable("rounds", "one row per round", ROUND_COLUMNS, rows)


def phases_table(rounds: Sequence[Round]) -> TidyTable:
    order = {pt: i for i, pt in enumerate(PHASE_ORDER)}
    rows: list[tuple[Value, ...]] = []
    for r in rounds:
        for p in sorted(r.phases, key=lambda p: order[p.phase_type]):
            u = p.usage
            rows.append((
                r.id, exchange_key(r), r.tournament_id, r.dilemma_id, order[p.phase_type], str(p.phase_type),
                PHASE_SPEAKER[p.phase_type], p.model_id, str(p.status), p.error_kind, _text(p.error), p.attempts,
                p.finish_reason, u.input_tokens, u.output_tokens, u.cached_tokens, u.cost_usd, p.latency,
                p.timestamp, p.finished_at, p.reused_from, _text(p.system_prompt), _text(p.prompt),
                _text(p.response),
            ))
    return TidyTable("phases", "one row per phase of every round", PHASE_COLUMNS, rows)


def tidy_tables(rounds: Sequence[Round], families: Mapping[str, str] | None = None) -> dict[str, TidyTable]:
    """name -> table: scores, rounds, phases (rounds in id order, so two exports of one store are equal)."""
    ordered = sorted(rounds, key=lambda r: r.id)
    return {"scores": scores_table(ordered, families), "rounds": rounds_table(ordered, families),
            "phases": phases_table(ordered)}


# ---- writing ---------------------------------------------------------------------------------------------


def _csv_value(value: Value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def write_csv(table: TidyTable, path: Path) -> Path:
    from ebtui.core.report import write_rows_csv

    return write_rows_csv(path, table.column_names, table.rows, _csv_value)


def require_pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise MissingExtra("pyarrow", "data", "writing Parquet") from None
    return pyarrow


def arrow_schema(table: TidyTable) -> Any:
    pa = require_pyarrow()
    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
             "datetime": pa.timestamp("us", tz="UTC")}
    return pa.schema([pa.field(c.name, types[c.type], nullable=True, metadata={"description": c.description})
                      for c in table.columns],
                     metadata={"table": table.name, "description": table.description})


def to_arrow(table: TidyTable) -> Any:
    """The table as a pyarrow.Table with its typed schema (column descriptions in the field metadata)."""
    pa = require_pyarrow()
    schema = arrow_schema(table)
    columns = list(zip(*table.rows, strict=True)) if table.rows else [() for _ in table.columns]
    arrays = [pa.array(list(col), type=f.type) for col, f in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


def write_parquet(table: TidyTable, path: Path) -> Path:
    import pyarrow.parquet as pq  # require_pyarrow() below has checked it is there

    pq.write_table(to_arrow(table), path)
    return path


def to_pandas(table: TidyTable) -> Any:
    """A pandas DataFrame with nullable dtypes (Int64, boolean, string): a missing score stays <NA>."""
    try:
        import pandas as pd
    except ImportError:
        raise MissingExtra("pandas", "data", "a DataFrame") from None
    pa = require_pyarrow()
    mapping = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype(), pa.string(): pd.StringDtype(),
               pa.float64(): pd.Float64Dtype()}
    return to_arrow(table).to_pandas(types_mapper=mapping.get)


__all__ = ["Column", "TidyTable", "PHASE_COLUMNS", "ROUND_COLUMNS", "SCORE_COLUMNS", "phases_table",
           "round_judgments", "rounds_table", "scores_table", "tidy_tables", "to_arrow", "to_pandas",
           "write_csv", "write_parquet"]
