"""Importing rounds played by other programs (`ebtui import eb`): the public Ethics Bowl runner's round files
into the store, grouped under a tournament (one, or one per run), with the document's dilemmas where given.
Importing the same rounds again adds nothing. Never prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ebtui.errors import UsageError

if TYPE_CHECKING:  # (`X as X`: the front ends name these types from here)
    from ebtui.core.importers.eb import ImportedRound as ImportedRound
    from ebtui.core.importers.eb import ImportResult as ImportResult
    from ebtui.core.usecases.context import AppContext

__all__ = ["ImportOutcome", "import_eb"]


@dataclass(frozen=True)
class ImportOutcome:
    root: Path
    runner: str  # the program the rounds come from
    result: ImportResult

    @property
    def review(self) -> list[ImportedRound]:
        """Imported rounds whose judgment needs review."""
        return [r for r in self.result.saved if r.needs_review]

    @property
    def defaulted(self) -> int:
        """Scores the runner could not read and filled with 5 (imported as missing)."""
        return sum(r.defaulted for r in self.result.saved)

    @property
    def disagreements(self) -> int:
        """Scores ebtui's parser reads differently from the runner (the runner's value kept)."""
        return sum(r.disagreements for r in self.result.saved)

    def json(self) -> dict[str, object]:
        """What `ebtui import eb --json` prints."""
        result = self.result
        return {
            "store": str(self.root), "runner": self.runner,
            "imported": [{"id": r.id, "source_round_id": r.source_round_id, "source": r.source or None,
                          "needs_review": r.needs_review} for r in result.saved],
            "already": [rid for rid, _ in result.already], "duplicates": len(result.duplicates),
            "superseded": result.superseded, "grouped": result.grouped,
            "tournaments": [t.id for t in result.tournaments], "defaulted_scores": self.defaulted,
            "disagreements": self.disagreements,
            "problems": [{"where": p.where, "message": p.message} for p in result.problems],
        }


def import_eb(ctx: AppContext, paths: Sequence[str], *, tournament: str | None = None, per_run: bool = False,
              document: str | None = None) -> ImportOutcome:
    """Import the runner's rounds (files, folders or all_rounds.jsonl) into the context's store; a bad option,
    document or store is one UsageError line (bad files are the outcome's problems)."""
    from ebtui.core.importers.eb import RUNNER, import_rounds
    from ebtui.core.store import StoreError

    if tournament and per_run:
        raise UsageError("give --tournament NAME or --tournament-per-run, not both")
    root = ctx.store_root
    dilemmas = None
    if document:
        import warnings

        from ebtui.core.dilemmas import DilemmaWarning, DocumentError, load_dilemmas

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DilemmaWarning)
                dilemmas = load_dilemmas(document)
        except DocumentError as exc:
            raise UsageError(str(exc)) from None
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root}: not a folder (give --store DIR)")
    try:
        result = import_rounds(paths, ctx.store, tournament=tournament, dilemmas=dilemmas,
                               document=str(document or ""), per_run=per_run, keep_rounds=False)
    except StoreError as exc:
        raise UsageError(f"{root}: {exc}") from None
    return ImportOutcome(root, RUNNER, result)
