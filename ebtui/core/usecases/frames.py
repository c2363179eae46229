"""The store's rounds as pandas DataFrames, for the Python API: the tidy tables (`ebtui export table`'s
files) and any report table. pandas and pyarrow are imported only here, inside the functions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ebtui.errors import UsageError

if TYPE_CHECKING:
    import pandas

    from ebtui.core.records import Round
    from ebtui.core.usecases.context import AppContext

__all__ = ["data_frame", "tidy_frames"]


def tidy_frames(ctx: AppContext, rounds: Sequence[Round]) -> dict[str, pandas.DataFrame]:
    """scores, rounds and phases as DataFrames (the files `ebtui export table` writes); families as the report
    resolves them (an explicit models file that cannot be read: ValueError)."""
    from ebtui.core.export.tidy import tidy_tables, to_pandas
    from ebtui.core.usecases.report import families

    try:
        fams = families(ctx, rounds)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    frames: dict[str, pandas.DataFrame] = {name: to_pandas(t) for name, t in tidy_tables(rounds, fams).items()}
    return frames


def data_frame(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> pandas.DataFrame:
    """A table as a DataFrame (pandas missing: MissingExtra, naming the extra to install)."""
    try:
        import pandas as pd
    except ImportError:
        from ebtui.core.export import MissingExtra

        raise MissingExtra("pandas", "data", "a DataFrame") from None
    return pd.DataFrame([list(r) for r in rows], columns=list(columns))
