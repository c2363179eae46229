"""Data out (`ebtui export`): the store's rounds (every one, or one tournament's) as tidy tables with a dataset
card, or as an Inspect AI log; families resolved as the report resolves them. A missing store or extra, an empty
selection or a place that cannot be written: one UsageError line. Never prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.core.safe_text import strip_control
from ebtui.core.usecases.report import families
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.records import Round, Tournament
    from ebtui.core.usecases.context import AppContext

__all__ = ["ExportSelection", "require_inspect", "require_parquet", "select", "write_inspect", "write_tables"]


@dataclass(frozen=True)
class ExportSelection:
    root: Path
    rounds: list[Round]
    tournament: Tournament | None  # None: no tournament asked for, or its file is lost
    tournament_id: str | None

    @property
    def subject(self) -> str:
        t = self.tournament
        return (t.name or t.id) if t else (self.tournament_id or "all rounds")


def require_parquet() -> None:
    """Say at once, before anything is read, when pyarrow is missing."""
    from ebtui.core.export import MissingExtra
    from ebtui.core.export.tidy import require_pyarrow

    try:
        require_pyarrow()
    except MissingExtra as exc:
        raise UsageError(f"{exc} (or give --format csv)") from None


def require_inspect() -> None:
    """Say at once, before anything is read, when inspect_ai is missing."""
    from ebtui.core.export import MissingExtra
    from ebtui.core.export.inspect_log import require_inspect as required

    try:
        required()
    except MissingExtra as exc:
        raise UsageError(str(exc)) from None


def select(ctx: AppContext, tournament_id: str | None) -> ExportSelection:
    """The rounds to export (a missing store or an empty selection: one line)."""
    from ebtui.core.store import StoreError
    from ebtui.core.usecases.report import existing_root

    root = existing_root(ctx)
    results = ctx.store
    tournament = None
    try:
        if tournament_id:
            try:
                tournament = results.load_tournament(tournament_id)
            except StoreError:
                tournament = None  # the rounds may still be there
        rounds = results.load_rounds(tournament=tournament_id)
    except (StoreError, ValueError, TypeError) as exc:
        raise UsageError(f"{root}: {strip_control(str(exc))}") from None
    if not rounds:
        raise UsageError(f"no rounds in {root}" + (f" for tournament {tournament_id!r}" if tournament_id else "")
                         + "; nothing to export")
    return ExportSelection(root, rounds, tournament, tournament_id)


def write_tables(ctx: AppContext, sel: ExportSelection, out: Path, *, title: str | None = None,
                 formats: Sequence[str] = ("parquet", "csv")) -> list[Path]:
    """scores/rounds/phases tables in each format and the dataset card README.md into `out`."""
    from ebtui.core.export import MissingExtra
    from ebtui.core.export.card import write_dataset

    fams = families(ctx, sel.rounds)
    try:
        return write_dataset(sel.rounds, out, title=f"ebtui: {sel.subject}" if title is None else title, formats=formats,
                             families=fams, tournaments=[sel.tournament] if sel.tournament else [])
    except MissingExtra as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write to {out}: {exc.strerror or exc}") from None


def write_inspect(ctx: AppContext, sel: ExportSelection, out: Path) -> Path:
    """An Inspect AI log: one sample per exchange, the phases as messages, the judge's scores."""
    from ebtui.core.export.inspect_log import write_inspect_log

    fams = families(ctx, sel.rounds)
    try:
        return write_inspect_log(sel.rounds, out, tournament=sel.tournament, families=fams)
    except OSError as exc:
        raise UsageError(f"cannot write to {out}: {exc.strerror or exc}") from None

