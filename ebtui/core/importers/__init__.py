"""Importers: rounds played by other programs, turned into ebtui Round records.

- `ebtui.core.importers.eb`: the public Ethics Bowl runner (moral_reasoning_quality_evaluation) — its round
  JSON files, a folder of them, or its `all_rounds.jsonl`; `eb_source` reads those files, `provenance` sums
  up imported runs for reports.
"""

from __future__ import annotations

__all__ = ["eb"]
