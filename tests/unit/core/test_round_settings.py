"""Round.settings is a typed model; round files written when it was a plain dict still load and save."""

from __future__ import annotations

import json

from ebtui.core.records import Round, RoundSettings


def _old_file(settings: dict) -> str:
    return json.dumps({
        "id": "r-old", "dilemma_id": "d1", "team_a_model": "a", "team_b_model": "b", "judge_model": "j",
        "status": "complete", "settings": settings,
    })


def test_an_old_file_with_every_setting_loads_typed() -> None:
    r = Round.model_validate_json(_old_file(
        {"max_tokens": 300, "dilemma": {"id": "d1", "title": "T"}, "writer": ["host", 42, 7]}
    ))
    assert isinstance(r.settings, RoundSettings)
    assert r.settings.max_tokens == 300
    assert r.settings.dilemma == {"id": "d1", "title": "T"}
    assert r.settings.writer == ["host", 42, 7]
    assert r.settings.get("max_tokens") == 300


def test_an_old_file_without_settings_or_with_unknown_keys_round_trips() -> None:
    r = Round.model_validate_json(_old_file({"custom": {"x": 1}}))
    assert r.settings.max_tokens is None and r.settings.dilemma is None and r.settings.writer is None
    assert r.settings.get("custom") == {"x": 1}
    again = Round.model_validate_json(r.model_dump_json())
    assert again.settings.get("custom") == {"x": 1}
    assert json.loads(again.model_dump_json())["settings"]["custom"] == {"x": 1}
    empty = Round.model_validate_json(_old_file({}))
    assert empty.settings == RoundSettings()
