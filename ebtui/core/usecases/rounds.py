"""Browsing the saved rounds: list them by the index's filters, load one, and check (or repair) the store.
The store's errors (`StoreError`, `StoreWriteError`) are named here for the front ends to catch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebtui.core.store import ROLES as ROLES
from ebtui.core.store import StoreError as StoreError
from ebtui.core.store import StoreWriteError as StoreWriteError
from ebtui.errors import UsageError

if TYPE_CHECKING:
    from ebtui.core.records import Round
    from ebtui.core.store.check import CheckReport as CheckReport
    from ebtui.core.usecases.context import AppContext

__all__ = ["ROLES", "CheckReport", "IndexEntry", "RoundList", "StoreError", "StoreWriteError", "check", "list_rounds",
           "load_round", "unreadable_rounds"]

#: one round's index document (ebtui.core.store.entries: JSON values, as the store's query returns them)
IndexEntry = dict[str, Any]


@dataclass(frozen=True)
class RoundList:
    """Index entries of the rounds that match, and the round files the store could not read (skipped)."""

    entries: list[IndexEntry]
    unreadable: list[tuple[str, str]]


def list_rounds(ctx: AppContext, *, model: str | None = None, role: str | None = None,
                dilemma: str | None = None, judge: str | None = None, tournament: str | None = None,
                status: str | None = None, needs_review: bool | None = None, limit: int | None = None,
                newest_first: bool = False, with_unreadable: bool = True) -> RoundList:
    """The saved rounds matching every filter given (the index's one filter engine), oldest first unless
    `newest_first`, and the round files that could not be read (not looked for without `with_unreadable`:
    see `unreadable_rounds`); a bad filter is a UsageError."""
    if role and not model:
        raise UsageError("--role needs --model (it says which seat the model had)")
    store = ctx.store
    try:
        rows = store.query(model=model, role=role, dilemma=dilemma, judge=judge, tournament=tournament,
                           status=status, needs_review=needs_review, limit=limit, newest_first=newest_first)
        return RoundList(rows, store.unreadable() if with_unreadable else [])
    except (TypeError, ValueError, StoreError) as exc:
        raise UsageError(str(exc)) from None


def unreadable_rounds(ctx: AppContext) -> list[tuple[str, str]]:
    """The round files the store cannot read, as (path, reason), looked for afresh (a front end that shows
    the rounds first asks for these after, and may carry on without them)."""
    return ctx.store.unreadable()


def load_round(ctx: AppContext, round_id: str) -> Round:
    """One saved round (raises StoreError naming it when it is missing or unreadable)."""
    return ctx.store.load_round(round_id)


def check(ctx: AppContext, *, repair: bool = False) -> CheckReport:
    """What in the store cannot be read, the index, stale temporary files; with `repair`, the index rebuilt
    and the stale files removed (round files are never touched). Problems opening it are a UsageError."""
    from ebtui.core.store.check import check_store

    root = ctx.store_root
    if not root.is_dir():
        raise UsageError(f"no results store at {root} (give --store DIR)")
    results = ctx.store
    try:
        return check_store(results, repair=repair)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{root}: {exc.strerror or exc}" + (" — the repair was not finished" if repair else "")) \
            from None
    finally:
        try:
            results.close()
        except OSError:
            pass
