"""A guard beside the behaviour tests (tests/unit/core/test_concepts.py, tests/unit/usecases/test_families.py):
the rules the domain owns are written out only in their owner, so a new copy fails here and is pointed at it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "ebtui").rglob("*.py"))

#: (what, a pattern that writes the rule out, the only modules that may)
OWNED = [
    ("a round's exchange: facts.exchange_key", r"exchange_id\s+or\s", {"ebtui/core/facts.py"}),
    ("scores by view: facts.scores", r"effective_scores\([^)]*\)\)?\s+if\s+effective|if\s+effective\s+else\s+\S*"
     r"(parsed_scores|team_a_scores|team_b_scores)", {"ebtui/core/facts.py"}),
    ("a configured family: families.configured_family", r"\.family\s+or\s", {"ebtui/core/families.py"}),
    ("the family name heuristic: families.model_family", r"\(\"claude\",\s*\"anthropic\"\)",
     {"ebtui/core/families.py"}),
    ("recorded families: families.newest_recorded", r"def\s+\w*recorded_families", set()),
    ("the phases a team speaks in: facts.seat_phases", r"PhaseType\.PRESENTATION,\s*PhaseType\.REBUTTAL", set()),
    ("a team's model: facts.team_models / round_seats", r"team_a_model\s+if\s+\w+\s*==\s*\"a\"", set()),
    ("a saved round's resumability: facts.may_resume",
     r"\.dilemma_id,\s*\w+\.team_a_model,\s*\w+\.team_b_model\)\s*==", {"ebtui/core/facts.py"}),
]


@pytest.mark.parametrize(("what", "pattern", "owners"), OWNED, ids=[w for w, _, _ in OWNED])
def test_a_rule_is_written_only_in_its_owner(what: str, pattern: str, owners: set[str]) -> None:
    rule = re.compile(pattern)
    found = {p.relative_to(ROOT).as_posix() for p in SOURCES if rule.search(p.read_text(encoding="utf-8"))}
    assert found <= owners, f"{what}, written again in {sorted(found - owners)}"
    assert found or not owners, f"the pattern for {what} no longer matches its owner: update the guard"
