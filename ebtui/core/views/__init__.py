"""Front-end-neutral views of records: plain data both the CLI and the TUI render (no Rich, no Textual).

The names below load on first use, so that `ebtui.core.views.numbers` (imported by every module that prints
a figure) does not pull the records in with it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KIND_LABELS", "ScoreCell", "ScoreGridView", "score_grid"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ebtui.core.views import scores

        return getattr(scores, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
