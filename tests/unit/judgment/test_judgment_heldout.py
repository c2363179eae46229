"""Held-out judge replies (tests/data/judgments_heldout): styles the reader's rules were not written against.

The one hard rule holds on every one of them: no value that differs from the truth goes unflagged. The rates
(wrong with a flag, cells lost on clean layouts, clean replies flagged) are measured and printed, not
required: they estimate how the reader does on the next judge's style (see docs/JUDGMENT.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebtui.core.judgment import parse_judgment
from ebtui.core.records import CRITERIA
from tests.support.paths import DATA

HELD_OUT = DATA / "judgments_heldout"
#: issue #37's set, in the styles that then passed wrong numbers unflagged (measured before the rules changed)
HELD_OUT_37 = DATA / "judgments_heldout37"
#: issue #37's second round: written against the rules of 29 Nov 2026, before they changed (see its README)
HELD_OUT_37B = DATA / "judgments_heldout37b"


def measure(folder: Path = HELD_OUT) -> dict[str, object]:
    cells = wrong_unflagged = wrong_flagged = clean_cells = clean_lost = clean_flagged = replies = 0
    details: list[str] = []
    for path in sorted(folder.glob("*.txt")):
        want = json.loads(path.with_suffix(".expected.json").read_text())
        j = parse_judgment(path.read_text(), team_a_id=want.get("team_a_id"), team_b_id=want.get("team_b_id"),
                           finish_reason=want.get("finish_reason"))
        replies += 1
        for team in ("a", "b"):
            got = j.parsed_scores(team).as_dict()  # type: ignore[arg-type]
            for crit, truth in zip(CRITERIA, want[f"team_{team}"], strict=True):
                cells += 1
                value = got[crit]
                flagged = any(i.team == team and i.criterion == crit for i in j.review_items) or any(
                    i.team is None and i.criterion is None for i in j.review_items)
                if value is not None and value != truth:
                    if flagged:
                        wrong_flagged += 1
                    else:
                        wrong_unflagged += 1
                        details.append(f"{path.stem}: team {team} {crit} read {value}, truth {truth}, no flag")
                if want["clean"] and truth is not None:
                    clean_cells += 1
                    if value is None:
                        clean_lost += 1
                        details.append(f"{path.stem}: team {team} {crit} lost")
        if want["clean"] and j.needs_review:
            clean_flagged += 1
            details.append(f"{path.stem}: clean reply flagged: {j.review_reasons[:2]}")
    return {"replies": replies, "cells": cells, "wrong_unflagged": wrong_unflagged, "wrong_flagged": wrong_flagged,
            "clean_cells": clean_cells, "clean_lost": clean_lost, "clean_flagged": clean_flagged, "details": details}


def test_held_out_replies_never_hold_a_wrong_value_without_a_flag() -> None:
    m = measure()
    print(json.dumps(m, indent=2))
    assert m["replies"] >= 20
    assert m["wrong_unflagged"] == 0, m["details"]


def test_issue_37_replies_never_hold_a_wrong_value_without_a_flag() -> None:
    m = measure(HELD_OUT_37)
    print(json.dumps(m, indent=2))
    assert m["replies"] >= 12
    assert m["wrong_unflagged"] == 0, m["details"]


def test_issue_37_second_round_replies_never_hold_a_wrong_value_without_a_flag() -> None:
    m = measure(HELD_OUT_37B)
    print(json.dumps(m, indent=2))
    assert m["replies"] >= 30
    assert m["wrong_unflagged"] == 0, m["details"]


@pytest.mark.parametrize("folder,replies", [("judgments_heldout37c", 30), ("judgments_heldout37d", 30),
                                            ("judgments_heldout37e", 30), ("judgments_heldout37f", 15)])
def test_the_later_held_out_sets_hold_no_wrong_value_without_a_flag(folder: str, replies: int) -> None:
    """Each set measured once before any rule changed (its README); since then, at least no wrong value passes
    unflagged, and wrong-but-flagged stays within the issue's 1% of cells."""
    m = measure(HELD_OUT.parent / folder)
    assert m["replies"] == replies
    assert m["wrong_unflagged"] == 0, m["details"]
    assert m["wrong_flagged"] <= 0.01 * m["cells"], m["details"]  # type: ignore[operator]


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
