"""Researchers' data out of a results store: the tidy tables (tidy.py) and their dataset card (card.py),
Inspect AI logs (inspect_log.py), and the self-contained web report (html.py, svg.py). Heavy libraries
(pyarrow, pandas, inspect_ai) are imported only inside the functions that need them; a missing one is a
`MissingExtra` naming the pip extra. See docs/EXPORTS.md.
"""

from __future__ import annotations


class MissingExtra(RuntimeError):
    """An optional dependency is not installed; the message is one line saying what to install."""

    def __init__(self, package: str, extra: str, what: str) -> None:
        super().__init__(f"{what} needs the {package} package: pip install 'ebtui[{extra}]'")
        self.package = package
        self.extra = extra


__all__ = ["MissingExtra"]
