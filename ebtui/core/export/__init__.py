"""Researchers' data out of a results store.

* tidy.py — the tidy (long) tables: one row per score (judgment x team x criterion), one per round, one per
  phase; written as CSV (always) and Parquet (pyarrow), or handed over as pandas DataFrames;
* card.py — the dataset card (README.md with the YAML metadata block the Hugging Face hub reads);
* inspect_log.py — an Inspect AI `.eval` log written through inspect_ai's own log API (optional extra);
* html.py, svg.py — the self-contained web report of `ebtui report --html`.

Heavy libraries (pyarrow, pandas, inspect_ai) are imported only inside the functions that need them, and a
missing one is a `MissingExtra` naming the pip extra to install.
"""

from __future__ import annotations


class MissingExtra(RuntimeError):
    """An optional dependency is not installed; the message is one line saying what to install."""

    def __init__(self, package: str, extra: str, what: str) -> None:
        super().__init__(f"{what} needs the {package} package: pip install 'ebtui[{extra}]'")
        self.package = package
        self.extra = extra


__all__ = ["MissingExtra"]
