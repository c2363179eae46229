"""The judgment parser — CONTRACT STUB, implemented by the judgment work (issue 4)."""

from __future__ import annotations

from typing import Any

from ebtui.core.records import Judgment

JUDGMENT_SCHEMA: dict[str, Any] = {}


def parse_judgment(text: str, *, team_a_id: str | None = None, team_b_id: str | None = None) -> Judgment:
    raise NotImplementedError
