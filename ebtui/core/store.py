"""The results store — CONTRACT STUB, implemented by the store work (issue 4).

Layout under the store root (default ./saved, or --store / $EBTUI_STORE):
  rounds/<round_id>.json         one human-readable JSON file per round, rewritten atomically after each phase
  tournaments/<id>.json          one file per tournament
  index.json                     a small TinyDB index, one document per round, rebuilt from the files if lost
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ebtui.core.records import Round, Team, Tournament


class StoreError(Exception):
    """A problem with the store (unreadable file, bad id); the message names the file."""


class ResultsStore:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def save_round(self, round_: Round) -> Path:
        raise NotImplementedError

    def load_round(self, round_id: str) -> Round:
        raise NotImplementedError

    def round_path(self, round_id: str) -> Path:
        raise NotImplementedError

    def query(self, **filters: Any) -> list[dict[str, Any]]:
        """Index entries matching filters: model, role, dilemma, judge, tournament, status, needs_review."""
        raise NotImplementedError

    def load_rounds(self, **filters: Any) -> list[Round]:
        raise NotImplementedError

    def save_tournament(self, tournament: Tournament) -> Path:
        raise NotImplementedError

    def load_tournament(self, tournament_id: str) -> Tournament:
        raise NotImplementedError

    def list_tournaments(self) -> list[Tournament]:
        raise NotImplementedError

    def apply_override(self, round_id: str, team: Team, criterion: str, value: int | None, note: str = "") -> Round:
        raise NotImplementedError

    def rebuild_index(self) -> int:
        raise NotImplementedError
