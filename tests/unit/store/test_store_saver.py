"""The background saver works on snapshots the engine cannot reach: nothing is changed across threads."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ebtui.core.records import Override, Round
from ebtui.core.store.saver import frozen_copy
from tests.support.factories import make_round, open_store

IMMUTABLE = (str, int, float, bool, bytes, type(None), datetime, date, timedelta, Enum)


def _mutables(value: Any, out: list[Any]) -> list[Any]:
    """Every mutable object (model, list, dict, set) reachable from `value`."""
    if isinstance(value, IMMUTABLE):
        return out
    out.append(value)
    if isinstance(value, BaseModel):
        for item in value.__dict__.values():
            _mutables(item, out)
        for item in (value.__pydantic_extra__ or {}).values():
            _mutables(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _mutables(item, out)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            _mutables(item, out)
    return out


def _live_round() -> Round:
    r = make_round(3, text_size=200)
    r.settings.dilemma = {"id": "d1", "sections": {"facts": ["a", "b"]}}
    r.settings.writer = ["host", 1, 2]
    assert r.judgment is not None
    r.judgment.overrides.append(Override(team="a", criterion="consistency", parsed_value=8, value=3, note="n"))
    return r


def test_a_snapshot_equals_the_round_and_shares_no_mutable_object_with_it() -> None:
    r = _live_round()
    snap = frozen_copy(r)
    assert snap.model_dump(mode="json") == r.model_dump(mode="json")
    original = {id(o) for o in _mutables(r, [])}
    shared = [type(o).__name__ for o in _mutables(snap, []) if id(o) in original]
    assert shared == [], f"the snapshot shares {shared} with the engine's round"
    # and changing the copy leaves the original as it was
    assert snap.judgment is not None and r.judgment is not None
    snap.judgment.overrides.clear()
    snap.phases[0].usage.input_tokens = 1
    assert len(r.judgment.overrides) == 1 and r.phases[0].usage.input_tokens == 900


def test_the_file_holds_the_round_as_handed_over_not_as_changed_after(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    bg = store.background_saver()
    r = _live_round()
    with store.lock.mutex:  # the writer thread waits for this lock: the engine changes the round meanwhile
        bg.save_round(r)
        assert r.judgment is not None
        r.judgment.overrides.clear()
        r.judgment.team_a_justification = "changed after the hand-off"
        r.phases[0].usage.input_tokens = 5
    bg.landed(r.id).result(30)
    on_disk = json.loads(store.round_path(r.id).read_text())
    assert len(on_disk["judgment"]["overrides"]) == 1
    assert on_disk["judgment"]["team_a_justification"] == "clear principle"
    assert on_disk["phases"][0]["usage"]["input_tokens"] == 900
    store.close()


def test_another_writers_override_is_merged_on_the_copy_then_on_the_engines_thread(tmp_path: Path) -> None:
    engine_store = open_store(tmp_path)
    bg = engine_store.background_saver()
    r = make_round(4, text_size=100)
    bg.save_round(r)
    bg.landed(r.id).result(30)
    human = open_store(tmp_path)  # the TUI or `ebtui rounds override`, another writer
    human.apply_override(r.id, "b", "consistency", 2, "too generous")
    human.close()

    assert r.judgment is not None
    live_overrides = r.judgment.overrides
    bg.save_round(r)  # the writer finds the file changed and keeps the human's override ...
    bg.landed(r.id).result(30)
    on_disk = json.loads(engine_store.round_path(r.id).read_text())
    assert [o["value"] for o in on_disk["judgment"]["overrides"]] == [2]
    assert r.judgment.overrides is live_overrides and live_overrides == []  # ... on its own copy only

    bg.save_round(r)  # the next hand-off adds what the store now knows, on this (the engine's) thread
    assert [o.value for o in r.judgment.overrides] == [2]
    bg.landed(r.id).result(30)
    assert [o["value"] for o in json.loads(engine_store.round_path(r.id).read_text())["judgment"]["overrides"]] == [2]
    engine_store.close()
