"""A task's families, resolved once (ebtui.core.usecases.report.families_for): the analysis columns and the
whole rounds give the same answer, by the one rule of ebtui.core.families."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ebtui.config import ModelsConfig, load_models_config
from tests.support.factories import make_round, recording_round


def _models(tmp_path: Path) -> ModelsConfig:
    path = tmp_path / "models.toml"
    path.write_text('[models.house]\nprovider = "openai_compatible"\nbase_url = "http://x/v1"\nmodel = "m"\n'
                    'family = "Mistral"\n', encoding="utf-8")
    return load_models_config(path)


@pytest.mark.parametrize("minutes", [0, 90])
def test_recorded_families_from_columns_and_from_rounds_agree(minutes: int, tmp_path: Path) -> None:
    from ebtui.core.analysis.frame import Facts
    from ebtui.core.usecases.report import families_for

    a = recording_round(0, {"alpha": "Early", "gamma": "jury"})
    b = recording_round(1, {"alpha": "Late"})
    b.timestamp = a.timestamp + timedelta(minutes=minutes - 45)  # before a, then after it
    rounds = [a, b, make_round(3, team_a="house", team_b="qwen-7b")]
    config = _models(tmp_path)
    for models in (None, config):
        whole = families_for(rounds, models)
        assert families_for(Facts.from_rounds(rounds), models) == whole
        assert whole["alpha"] == ("late" if minutes else "early")
        assert whole["qwen-7b"] == "alibaba" and whole["gamma"] == "jury"
    assert families_for(rounds, config)["house"] == "mistral"
    assert families_for(rounds, None)["house"] == "house"
