"""A whole round through each SDK family (openai, anthropic, google-genai) over real HTTP against llmock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llmock.scenarios import Match, Reply

from ebtui.config import parse_model
from ebtui.core.records import CRITERIA, PHASE_ORDER, PhaseStatus, RoundStatus
from ebtui.core.round import RoundSpec, play_round
from ebtui.core.store import ResultsStore
from ebtui.providers.registry import build_client
from tests.support.factories import memory_trust

# family -> (ebtui provider, llmock route, model name)
FAMILIES: dict[str, tuple[str, str, str]] = {
    "openai": ("openai", "openai", "gpt-4o-mini"),
    "anthropic": ("anthropic", "anthropic", "claude-sonnet-4-6"),
    "google": ("google", "gemini", "gemini-2.5-flash"),
}

DILEMMA = memory_trust()

SCORED = {
    "team_a": {"scores": {c: 7 for c in CRITERIA}, "justification": "Clear principle, honest update."},
    "team_b": {"scores": {c: 6 for c in CRITERIA}, "justification": "Useful probing, some overreach."},
    "overall_analysis": "A careful exchange.",
}


@pytest.mark.parametrize("family", list(FAMILIES))
async def test_round_through_each_sdk_family(family: str, llmock: Any, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-not-a-real-key")
    provider, route, model = FAMILIES[family]
    names = [f"{family}-a", f"{family}-b", f"{family}-judge"]
    judge_model = f"{model}-judge"
    clients = {
        name: build_client(parse_model(name, {
            "provider": provider, "model": judge_model if name.endswith("judge") else model,
            "base_url": llmock.base_url(route), "api_key_env": "EBTUI_TEST_KEY", "backoff_s": 0.05,
            "timeout_s": 10.0,
        }, None))
        for name in names
    }
    if family == "anthropic":
        # llmock 0.2.2 fills a schema only from Anthropic's older `output_format` field, not from the
        # current `output_config.format` the client sends: script the judge's answer (as JSON text) instead
        llmock.add(Reply(text=json.dumps(SCORED), times=1, match=Match(model=judge_model)))
    store = ResultsStore(tmp_path / "store")
    spec = RoundSpec(dilemma=DILEMMA, team_a=names[0], team_b=names[1], judge=names[2])
    try:
        r = await play_round(spec, clients, store)
    finally:
        for c in clients.values():
            await c.aclose()
    assert r.status == RoundStatus.COMPLETE, r.error
    assert [p.phase_type for p in r.phases] == list(PHASE_ORDER)
    for ph in r.phases:
        assert ph.status == PhaseStatus.COMPLETE and ph.response.strip()
        assert ph.usage.output_tokens > 0 and ph.finish_reason == "stop"
    # five calls reached the server; the judge's asked for output matching the judgment schema
    requests = llmock.requests
    assert len(requests) == 5
    judge_body = json.dumps([q.body for q in requests if (q.model or "").endswith("-judge")])
    assert "principle_articulation" in judge_body and "overall_analysis" in judge_body
    assert "Principle articulation" in judge_body  # the prompt's own format instructions went too
    # the judge was asked for structured output, and its answer was read as scores
    assert r.judgment is not None and r.judgment.raw_response == r.phase("judgment").response
    for team in ("a", "b"):
        scores = r.judgment.parsed_scores(team).as_dict()
        assert set(scores) == set(CRITERIA) and all(v is not None for v in scores.values()), scores
    assert store.load_round(r.id).status == RoundStatus.COMPLETE
