"""Front-end-neutral views of records: plain data both the CLI and the TUI render (no Rich, no Textual)."""

from ebtui.core.views.scores import KIND_LABELS, ScoreCell, ScoreGridView, score_grid

__all__ = ["KIND_LABELS", "ScoreCell", "ScoreGridView", "score_grid"]
