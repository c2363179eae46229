"""The Python API: a results store for notebooks and other tools (`ebtui.open_store(path)` → stores,
rounds, tidy score tables, the report's analysis as objects), with the numbers of `ebtui report`.
The DataFrames need the `data` extra; nothing here imports Textual. Usage: docs/EXPORTS.md, "The Python API".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack

from ebtui.core.records import Round, Tournament

if TYPE_CHECKING:
    import pandas

    from ebtui.core.usecases.context import AppContext
    from ebtui.core.usecases.report import ReportData


@dataclass(frozen=True)
class ModelResult:
    """One row of the report's model table: the judge-adjusted mean with its 95% interval, and the raw mean."""

    model: str
    family: str
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    raw_mean: float | None
    n_rounds: int
    n_exchanges: int
    n_dilemmas: int
    n_scores: int
    interval_note: str
    #: why the mean is blank (null: it is not): the design does not identify it, or too few dilemmas
    reason: str | None = None


@dataclass(frozen=True)
class JudgeResult:
    """One row of the report's judge table: the judge's offset from the average judge (negative = harsh)."""

    judge: str
    family: str
    offset: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_scores: int
    raw_mean_given: float | None
    interval_note: str
    #: why the offset is blank (null: it is not)
    reason: str | None = None


_R = TypeVar("_R", ModelResult, JudgeResult)


class Selection(TypedDict, total=False):
    """Which rounds a tidy table holds (`Store.tables`'s keywords)."""

    tournament: str | None
    dilemma: str | None
    model: str | None
    models_file: str | Path | None


def _records(cls: type[_R], rows: Sequence[Mapping[str, object]]) -> list[_R]:
    """The rows of one table of `report --json` as records."""
    names = [f.name for f in dataclasses.fields(cls)]
    out: list[_R] = []
    for row in rows:
        # the table's columns by name, unchecked: the dataclass's fields are those of the report's table
        values: dict[str, Any] = {n: row.get(n) for n in names}
        out.append(cls(**values))
    return out


def _frame(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> pandas.DataFrame:
    from ebtui.core.usecases.frames import data_frame

    return data_frame(columns, rows)


class Report:
    """The report's analysis of a set of rounds, computed once (ebtui.core.report.ReportData)."""

    def __init__(self, data: ReportData, rounds: Sequence[Round] | Callable[[], Sequence[Round]],
                 families: Mapping[str, str], title: str = "ebtui report", tournament: Tournament | None = None,
                 unreadable: Sequence[tuple[str, str]] = ()) -> None:
        self.data = data
        #: round files the store could not read (left out, as `report --json` names them)
        self.unreadable = list(unreadable)
        self._rounds: list[Round] | None = None if callable(rounds) else list(rounds)
        self._load = rounds if callable(rounds) else None
        self.families = dict(families)
        self.title = title
        self.tournament = tournament

    @property
    def rounds(self) -> list[Round]:
        """The selected rounds, whole (read from the store on first use: the numbers come from its columns)."""
        if self._rounds is None:
            assert self._load is not None
            self._rounds = list(self._load())
        return self._rounds

    @property
    def models(self) -> list[ModelResult]:
        """The model table as judged (the judges' parsed scores)."""
        return _records(ModelResult, self.data.as_judged.rows("models"))

    @property
    def models_with_overrides(self) -> list[ModelResult] | None:
        """The model table with human overrides applied (None: no override is in force)."""
        w = self.data.with_overrides
        return None if w is None else _records(ModelResult, w.rows("models"))

    @property
    def judges(self) -> list[JudgeResult]:
        return _records(JudgeResult, self.data.as_judged.rows("judges"))

    @property
    def table_keys(self) -> list[str]:
        return list(self.data.tables)

    def table(self, key: str, *, with_overrides: bool = False) -> pandas.DataFrame:
        """A report table (the keys of `report --json`) as a DataFrame; with_overrides: the view with human
        overrides applied, where the report has one."""
        try:
            tables = self.data.tables[key]
        except KeyError:
            raise KeyError(f"no table {key!r}; the report has: {', '.join(self.data.tables)}") from None
        t = tables[1] if with_overrides and len(tables) > 1 else tables[0]
        return _frame(t.columns, t.rows)

    def json(self) -> dict[str, object]:
        """The object `ebtui report --json` prints (without its "filters" member)."""
        return {**self.data.json(), "unreadable": [{"path": p, "reason": r} for p, r in self.unreadable]}

    def write_html(self, path: str | Path) -> Path:
        """The self-contained web report (as `ebtui report --html`)."""
        from ebtui.core.usecases.report import write_html_of

        return write_html_of(self.rounds, self.data, Path(path), self.title, self.tournament)


class Store:
    """A results store opened for reading (ebtui.core.store.ResultsStore underneath: `.results`; the use-case
    layer's context over it: `.context`)."""

    def __init__(self, path: str | Path | None = None) -> None:
        from ebtui.core.usecases.context import open_context

        self.context = open_context(store=path)
        root = self.context.store_root
        if not root.is_dir():
            raise FileNotFoundError(f"no results store at {root}")
        self.root = root
        self.results = self.context.store

    def _with_models(self, models_file: str | Path | None) -> AppContext:
        from ebtui.core.usecases.context import open_context

        return open_context(store_obj=self.results, models_file=models_file)

    def __repr__(self) -> str:
        return f"ebtui.Store({str(self.root)!r})"

    def close(self) -> None:
        self.results.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- records
    def tournaments(self) -> list[Tournament]:
        return self.results.list_tournaments()

    def tournament(self, tournament_id: str) -> Tournament:
        return self.results.load_tournament(tournament_id)

    def rounds(self, *, tournament: str | None = None, dilemma: str | None = None,
               model: str | None = None) -> list[Round]:
        """Rounds, oldest first (the order `ebtui report` reads them in); model: only rounds in which it sat at
        Team A or B (as `report --model`)."""
        from ebtui.core.usecases.report import select_rounds

        return select_rounds(self.context, tournament=tournament, dilemma=dilemma, model=model)

    def round(self, round_id: str) -> Round:
        return self.results.load_round(round_id)

    # ---- tidy tables
    def tables(self, *, tournament: str | None = None, dilemma: str | None = None, model: str | None = None,
               models_file: str | Path | None = None) -> dict[str, pandas.DataFrame]:
        """scores, rounds and phases as DataFrames (the files `ebtui export table` writes)."""
        from ebtui.core.usecases.frames import tidy_frames

        rounds = self.rounds(tournament=tournament, dilemma=dilemma, model=model)
        return tidy_frames(self._with_models(models_file), rounds)

    def scores(self, **selection: Unpack[Selection]) -> pandas.DataFrame:
        return self.tables(**selection)["scores"]

    def rounds_table(self, **selection: Unpack[Selection]) -> pandas.DataFrame:
        return self.tables(**selection)["rounds"]

    def phases(self, **selection: Unpack[Selection]) -> pandas.DataFrame:
        return self.tables(**selection)["phases"]

    # ---- the report
    def report(self, *, tournament: str | None = None, dilemma: str | None = None, model: str | None = None,
               models_file: str | Path | None = None, seed: int | None = None,
               replicates: int | None = None) -> Report:
        """The report's analysis of the selected rounds: the numbers of `ebtui report --json` with the same
        options, from the same function (ebtui.core.usecases.report.report_of: the analysis columns, every
        judgment; families from models.toml as the CLI finds it; models_file to name one). Nothing selected,
        or an unreadable models file named: ValueError."""
        from ebtui.core.usecases.report import api_report

        sel, data, fams = api_report(self._with_models(models_file), tournament_id=tournament, model=model,
                                     dilemma=dilemma, explicit_models=models_file is not None or None, seed=seed,
                                     replicates=replicates)
        t = sel.tournament
        title = f"ebtui report: {(t.name or t.id) if t else (tournament or 'all rounds')}"
        return Report(data, lambda: self.rounds(tournament=tournament, dilemma=dilemma, model=model), fams,
                      title=title, tournament=t, unreadable=sel.unreadable)


def open_store(path: str | Path | None = None) -> Store:
    """Open a results store (default: $EBTUI_STORE, else ./saved) for reading."""
    return Store(path)


__all__ = ["JudgeResult", "ModelResult", "Report", "Store", "open_store"]
