"""A human's review of a judgment, for both front ends: a score corrected by hand (`correct`, a note
required), accepted as parsed (`accept`), or every open score accepted (`accept_all`), on the round's own
judgment or an added one (by its key). The rules are ebtui.core.overrides'; each change is saved at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ebtui.core.overrides import OverrideError as OverrideError
from ebtui.core.overrides import OverrideRequest as OverrideRequest
from ebtui.core.records import Judgment, Round, Team

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext

__all__ = ["OverrideError", "OverrideRequest", "Reviewed", "accept", "accept_all", "check_correction", "correct",
           "target"]


@dataclass(frozen=True)
class Reviewed:
    """The round after a review action, the judgment it changed, and how many acceptances were recorded."""

    round: Round
    judgment: Judgment
    added: int = 0


def check_correction(team: str, criterion: str, value: int | str | None, note: str, *,
                     clear: bool = False) -> OverrideRequest:
    """A human's correction validated (nothing saved): the value 1-10 and a note, or a clear. Raises
    OverrideError with the one-line message every front end shows."""
    from ebtui.core.overrides import check_override

    return check_override(team, criterion, value, note, clear=clear)


def target(team: str, criterion: str) -> tuple[Team, str]:
    """A team and a criterion as a human names them ("a", "Team B"; "consistency", a label), or OverrideError."""
    from ebtui.core.overrides import parse_criterion, parse_team

    return parse_team(team), parse_criterion(criterion)


def _after(ctx: AppContext, round_id: str, judgment: Judgment, added: int = 0) -> Reviewed:
    return Reviewed(ctx.store.load_round(round_id), judgment, added)


def _primary(round_: Round, added: int = 0) -> Reviewed:
    assert round_.judgment is not None  # the store made one to hold the change
    return Reviewed(round_, round_.judgment, added)


def correct(ctx: AppContext, round_id: str, team: str, criterion: str, value: int | str | None, note: str, *,
            clear: bool = False, judgment_key: str = "") -> Reviewed:
    """Set (or with `clear` remove) a human's score for one team and criterion; the judge's parsed value is
    kept beside it. Raises OverrideError (bad input, nothing to clear) or the store's StoreError."""
    from ebtui.core.judgment_overrides import override_judgment
    from ebtui.core.overrides import apply_override

    if judgment_key:
        j = override_judgment(ctx.store, round_id, judgment_key, team, criterion, value, note, clear=clear)
        return _after(ctx, round_id, j)
    return _primary(apply_override(ctx.store, round_id, team, criterion, value, note, clear=clear))


def accept(ctx: AppContext, round_id: str, team: str, criterion: str, note: str = "", *,
           judgment_key: str = "") -> Reviewed:
    """Record that the parsed score is right as it is (a missing one stays missing)."""
    from ebtui.core.judgment_overrides import accept_judgment
    from ebtui.core.overrides import accept_as_parsed

    if judgment_key:
        j, added = accept_judgment(ctx.store, round_id, judgment_key, team, criterion, note)
        return _after(ctx, round_id, j, added)
    return _primary(accept_as_parsed(ctx.store, round_id, team, criterion, note), 1)


def accept_all(ctx: AppContext, round_id: str, note: str = "", *, judgment_key: str = "") -> Reviewed:
    """Accept every score of the judgment not yet overridden or accepted; `added` says how many."""
    from ebtui.core.judgment_overrides import accept_judgment
    from ebtui.core.overrides import accept_all as accept_every

    if judgment_key:
        j, added = accept_judgment(ctx.store, round_id, judgment_key, note=note, every=True)
        return _after(ctx, round_id, j, added)
    return _primary(*accept_every(ctx.store, round_id, note))
