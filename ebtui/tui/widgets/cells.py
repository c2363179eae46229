"""Cells of the analysis tables as the widgets draw them: a number (or none), a name cut to a width."""

from __future__ import annotations

from ebtui.core.safe_text import strip_control


def number(cell: object) -> float | None:
    """A table cell as a number; None when it holds none (empty, or text)."""
    if isinstance(cell, bool) or not isinstance(cell, int | float):
        return None
    return float(cell)


def name_cell(cell: object, width: int) -> str:
    """A name on one line in `width` cells: control characters stripped, cut with … when longer, padded."""
    text = strip_control(str(cell)).replace("\n", " ")
    return (text[: width - 1] + "…" if len(text) > width else text).ljust(width)
