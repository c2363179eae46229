"""Importers: rounds played by other programs, turned into ebtui Round records.

- `ebtui.core.importers.eb`: the public Ethics Bowl runner (moral_reasoning_quality_evaluation) — its round
  JSON files, a folder of them, or its `all_rounds.jsonl`.
"""

from __future__ import annotations

__all__ = ["eb"]
