"""Issue 7's acceptance, headless: with no key, the embedded `local` model plays a whole round to the end.

SmolLM2-135M rambles; the local provider's grammars bound every answer so that no phase is cut off at
max_tokens (a cut-off is a failed phase). Smaller bounds than the built-in defaults keep this fast; the
mechanism is the same. Needs the extra: pip install '.[local]'.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ebtui.config import load_models_config
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.events import PhaseFailed, TextDelta
from ebtui.core.records import CRITERIA, PHASE_ORDER, PhaseStatus, RoundStatus
from ebtui.core.round import RoundSpec, play_round
from ebtui.core.store import ResultsStore
from ebtui.providers.local import cpu_lacks
from ebtui.providers.registry import build_clients
from tests.support.local import llama_skip_reason

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None or bool(cpu_lacks()), reason=llama_skip_reason()),
]

ANSWER_WORDS = 30  # short, still a couple of sentences of the model's own reasoning


async def test_local_model_plays_a_whole_round(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(
        f"[models.local]\nprovider = \"local\"\nseed = 7\n"
        f"answer_words = {ANSWER_WORDS}\njson_string_chars = 60\n"
    )
    config = load_models_config(models)
    clients = build_clients(config, ["local"])
    dilemma = load_dilemmas()[0]  # the built-in document
    store = ResultsStore(tmp_path / "store")
    spec = RoundSpec(dilemma=dilemma, team_a="local", team_b="local", judge="local")
    failures: list[str] = []
    streamed: dict[str, str] = {}

    def on_event(event: object) -> None:
        if isinstance(event, PhaseFailed):
            failures.append(f"{event.phase.phase_type.value}: {event.phase.error}")
        elif isinstance(event, TextDelta):
            key = event.phase_type.value
            streamed[key] = streamed.get(key, "") + event.text

    round_ = await play_round(spec, clients, store, on_event=on_event)

    assert failures == []
    assert round_.status == RoundStatus.COMPLETE
    assert sorted(p.phase_type.value for p in round_.phases) == sorted(pt.value for pt in PHASE_ORDER)
    for phase in round_.phases:
        assert phase.status == PhaseStatus.COMPLETE, phase.phase_type
        assert phase.response.strip() and phase.finish_reason == "stop"
        assert streamed[phase.phase_type.value] == phase.response  # what the panes showed is what was kept
        if phase.phase_type.value != "judgment":
            assert len(phase.response.split()) <= ANSWER_WORDS
    judgment = round_.judgment
    assert judgment is not None and judgment.judge_model == "local"
    scores = [getattr(s, c) for s in (judgment.team_a_scores, judgment.team_b_scores) for c in CRITERIA]
    assert all(v is None or 1 <= v <= 10 for v in scores)
    assert any(v is not None for v in scores), judgment.raw_response
    assert store.load_round(round_.id).status == RoundStatus.COMPLETE
