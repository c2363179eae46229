"""Is model A better than model B, and how sure (`ebtui compare`, the app's compare view): the judge-adjusted
difference A − B overall and per criterion on the dilemmas both played, and the two models side by side on each
common dilemma. Families resolved as the report resolves them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ebtui.core.analysis.compare import DilemmaSides, Side, dilemma_sides
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.records import Round
    from ebtui.core.usecases.context import AppContext

__all__ = ["DilemmaSides", "Side", "compare", "compare_rounds", "comparison_json", "dilemma_sides"]


def compare_rounds(rounds: Sequence[Round] | Facts, a: str, b: str,
                   families: Mapping[str, str] | None) -> dict[str, Any]:
    """A − B over these rounds or their columns (raises ValueError: the same model twice, say)."""
    from ebtui.core.analysis.compare import compare_models

    return compare_models(rounds, a, b, families=families)


def compare(ctx: AppContext, a: str, b: str, *, tournament_id: str | None = None,
            explicit_models: bool = False) -> dict[str, Any]:
    """`ebtui compare A B` over the context's store (every round, or one tournament's): the selection every
    report reads (ebtui.core.usecases.report.select: the analysis columns, every judgment) and its families;
    a missing store, no rounds, an unreadable asked-for models.toml or a bad pair: one UsageError line."""
    from ebtui.core.analysis.compare import CompareError
    from ebtui.core.usecases.report import families, select

    sel = select(ctx, tournament_id=tournament_id)
    if not len(sel.facts):
        raise UsageError(f"no rounds in {sel.root}" + (f" for tournament {tournament_id!r}" if tournament_id else ""))
    fams = families(ctx, sel.facts, explicit=explicit_models)
    try:
        return compare_rounds(sel.facts, a, b, fams)
    except CompareError as exc:
        raise UsageError(str(exc)) from None


def comparison_json(got: Mapping[str, Any], tournament_id: str | None) -> object:
    """What `ebtui compare --json` prints (no NaN or infinity: null)."""
    from ebtui.core.analysis.compare import finite

    return finite({"filters": {"tournament": tournament_id}, **got})
