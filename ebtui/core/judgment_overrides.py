"""Human overrides and acceptances on any judgment of a round, chosen by its key (Judgment.key; "" or
"primary": the round's own judgment). The rules are those of ebtui.core.overrides; a round's own judgment
goes through them unchanged, an added judgment (`ebtui rejudge`) is changed in its round file under the store
lock (ResultsStore.modify_round), so concurrent writers lose nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ebtui.core.overrides import (
    TEAMS,
    OverrideError,
    OverrideStore,
    accept_all,
    accept_as_parsed,
    acceptance,
    apply_override,
    check_override,
    parse_criterion,
    parse_team,
    score_action,
    writable,
)
from ebtui.core.records import CRITERIA, Judgment, Override, Round

PRIMARY = ("", "primary")


class JudgmentStore(OverrideStore, Protocol):
    """What corrections to any judgment need of a store (ebtui.core.store.ResultsStore provides it)."""

    def modify_round(self, round_id: str, change: Callable[[Round], bool]) -> Round: ...


def _target(r: Round, key: str) -> Judgment:
    j = r.judgment_by_key(key)
    if j is None:
        keys = ", ".join(j.key for j in r.extra_judgments) or "none"
        raise OverrideError(f"round {r.id}: no judgment with key {key!r} (added judgments: {keys})")
    return j


def override_judgment(store: JudgmentStore | None, round_id: str, key: str, team: object, criterion: object,
                      value: object, note: object, *, clear: bool = False, author: str = "") -> Judgment:
    """Set (or clear) a human's score on one judgment of the round; returns that judgment as saved."""
    if key in PRIMARY:
        r = apply_override(store, round_id, team, criterion, value, note, clear=clear, author=author)
        assert r.judgment is not None
        return r.judgment
    req = check_override(team, criterion, value, note, clear=clear)
    out: list[Judgment] = []

    def change(r: Round) -> bool:
        j = _target(r, key)
        if req.value is None and (req.team, req.criterion) not in j.active_overrides():
            raise OverrideError(f"round {round_id}: team {req.team.upper()} {req.criterion} has no override to clear")
        parsed = getattr(j.parsed_scores(req.team), req.criterion)
        j.overrides.append(Override(team=req.team, criterion=req.criterion, parsed_value=parsed, value=req.value,
                                    note=req.note, author=author))
        out.append(j)
        return True

    writable(store).modify_round(round_id, change)
    return out[0]


def accept_judgment(store: JudgmentStore | None, round_id: str, key: str, team: object = None,
                    criterion: object = None, note: object = "", *, every: bool = False,
                    author: str = "") -> tuple[Judgment, int]:
    """Accept one parsed score (or with every=True each one not yet addressed) of one judgment of the round."""
    if key in PRIMARY:
        if every:
            r, n = accept_all(store, round_id, note, author=author)
        else:
            r, n = accept_as_parsed(store, round_id, team, criterion, note, author=author), 1
        assert r.judgment is not None
        return r.judgment, n
    text = "" if note is None else str(note)
    out: list[tuple[Judgment, int]] = []

    def change(r: Round) -> bool:
        j = _target(r, key)
        if every:
            added = [acceptance(j, t, c, text, author) for t in TEAMS for c in CRITERIA if not score_action(j, t, c)]
        else:
            added = [acceptance(j, parse_team(team), parse_criterion(criterion), text, author)]
        j.overrides.extend(added)
        out.append((j, len(added)))
        return bool(added)

    writable(store).modify_round(round_id, change)
    return out[0]
