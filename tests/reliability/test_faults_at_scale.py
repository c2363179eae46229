"""Faults at scale: a whole tournament over the three SDK families against llmock, with about one request
in five hit by a fault drawn (with a fixed seed) from every kind llmock can inject."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from llmock.verdict import judge

from ebtui.config import load_models_config
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import PHASE_ORDER, PhaseStatus, RoundStatus, TournamentStatus
from ebtui.core.tournament import TournamentRunner, make_schedule
from ebtui.core.tournament.config import parse_tournament_config
from ebtui.providers.registry import build_clients
from tests.support.factories import open_store
from tests.support.reliability_helpers import (
    FAULT_KINDS,
    LLMOCK_FAMILIES,
    DistinctCallsClient,
    SeededFaultQueue,
    call_tag,
    llmock_models_toml,
    round_files,
)

ATTEMPTS = 3  # the default `attempts` of a model: tries per call, the first included

#: what error text looks like: none of it may ever be a phase's response
ERROR_MARKERS = re.compile(
    r"injected|Internal server error|Service unavailable|Rate limit|Traceback|HTTP/1\.1|status code|"
    r"\b(?:429|500|503)\b|ProviderError|APIError|APIConnectionError|RemoteProtocolError|JSONDecodeError|"
    r"no token for|stream ended|gave up after|ServerError|ClientError",
    re.IGNORECASE,
)


@pytest.fixture
def seeded_faults(llmock: Any) -> Any:
    """Install a seeded fault queue on the llmock server for this test, and put the plain one back."""
    state = llmock._server.state
    original = state.scenarios

    def install(seed: int, rate: float = 0.2) -> SeededFaultQueue:
        queue = SeededFaultQueue(seed, rate)
        state.scenarios = queue
        # Stream at a model's pace (a chunk every 15 ms). Unpaced, the server has sent a whole short answer
        # before the client reads the malformed chunk and hangs up, so llmock records the stream as
        # completed, does not count the client's retry as one, and reports "malformed_chunk_ignored".
        llmock.pace(15)
        return queue

    yield install
    state.scenarios = original


async def play_faulty_tournament(tmp_path: Path, llmock: Any, monkeypatch: pytest.MonkeyPatch, install: Any, *,
                                 seed: int, dilemmas: int, rounds_per_pairing: int, judges: str) -> None:
    monkeypatch.setenv("EBTUI_TEST_KEY", "sk-test-faults-not-a-real-key")
    models_path = tmp_path / "models.toml"
    models_path.write_text(llmock_models_toml(llmock, max_tokens=300))
    models_cfg = load_models_config(models_path)
    docs = load_dilemmas()
    cfg = parse_tournament_config({
        "name": "faults", "models": list(LLMOCK_FAMILIES), "dilemmas": [d.id for d in docs[:dilemmas]],
        "rounds_per_pairing": rounds_per_pairing, "judges": judges, "concurrency": 6, "seed": seed,
    })
    schedule = make_schedule(cfg, docs)
    store = open_store(tmp_path / "store")
    queue = install(seed)
    clients = {n: DistinctCallsClient(c) for n, c in build_clients(models_cfg, cfg.all_model_names()).items()}
    runner = TournamentRunner(cfg, clients, store, dilemmas=docs, models_config=models_cfg,
                              progress_interval_s=0.2)
    try:
        tournament = await runner.run_to_end()
    finally:
        for c in clients.values():
            await c.aclose()
    store.close()

    # it finished
    assert tournament.status in (TournamentStatus.COMPLETE, TournamentStatus.INCOMPLETE)
    # the faults really happened, every kind of them
    assert queue.requests > 0
    assert all(queue.injected[k] > 0 for k in FAULT_KINDS), queue.injected
    assert sum(queue.injected.values()) >= queue.requests * 0.1

    # no round duplicated: one file per schedule key, exactly the schedule
    files = round_files(tmp_path / "store")
    rs = open_store(tmp_path / "store")
    rounds = [rs.load_round(p.stem) for p in files]
    keys = [r.schedule_key for r in rounds]
    assert len(keys) == len(set(keys)) == len(schedule)
    assert set(keys) == {sr.schedule_key for sr in schedule.rounds}
    assert {r.id for r in rounds} == {sr.round_id(runner.tournament_id) for sr in schedule.rounds}
    assert len(rs.query(tournament=runner.tournament_id)) == len(schedule)

    statuses = Counter(r.status for r in rounds)
    for r in rounds:
        assert r.status in (RoundStatus.COMPLETE, RoundStatus.INCOMPLETE, RoundStatus.FAILED), r.id
        assert [p.phase_type for p in r.phases] == list(PHASE_ORDER), r.id
        if r.status == RoundStatus.COMPLETE:
            assert r.error is None
            assert all(p.status == PhaseStatus.COMPLETE for p in r.phases)
        else:  # incomplete with its error recorded
            assert r.error, r.id
            failed = [p for p in r.phases if p.status != PhaseStatus.COMPLETE]
            assert failed
            assert all(p.error for p in failed), r.id
        for p in r.phases:
            if p.status == PhaseStatus.COMPLETE:
                assert p.response.strip()
                assert p.finish_reason not in (None, "length", "error")
                assert not ERROR_MARKERS.search(p.response), (r.id, p.phase_type, p.response[:200])
                if p.error is not None:
                    pytest.fail(f"{r.id} {p.phase_type}: complete phase carries an error {p.error!r}")
            else:  # a failed phase never has a response; the error text is only in `error`
                assert p.response == "", (r.id, p.phase_type)
                assert p.error
                if p.status == PhaseStatus.FAILED:
                    assert p.error_kind
        # no error text leaked into any later prompt either
        for p in r.phases:
            assert not ERROR_MARKERS.search(p.prompt.replace(p.system_prompt, "")), (r.id, p.phase_type)
    # faults at 1 in 5 with 3 attempts a call: most rounds still complete
    assert statuses[RoundStatus.COMPLETE] >= len(schedule) // 2, statuses

    # the client behaved well through all of it
    assert_verdict_clean(llmock, clients)


def describe_calls(verdict: Any, findings: list[Any], records: list[Any], outcomes: dict[str, str]) -> str:
    """Every attempt carrying the same call tag as a finding's call, with timings (for diagnosis)."""
    lines = []
    for f in findings:
        tag = call_tag(verdict.calls[f.call - 1].last)
        lines.append(f"{f.code} call {f.call} tag {tag} -> client outcome {outcomes.get(tag or '')!r}")
        for r in records:
            if tag is not None and call_tag(r) == tag:
                lines.append(f"   #{r.seq} {r.fault} status={r.status} completed={r.completed} "
                             f"chunks={r.chunks_sent} start={r.started_at:.3f} end={r.ended_at:.3f} "
                             f"retry_after={r.retry_after}")
    return "\n".join(lines)


#: findings llmock makes from the last attempt of a call alone: it cannot tell "accepted a broken stream"
#: from "retried it up to the limit and then failed the call"
LAST_ATTEMPT_CODES = {"truncated_stream_accepted", "malformed_chunk_ignored"}


def assert_verdict_clean(llmock: Any, clients: dict[str, DistinctCallsClient]) -> None:
    """llmock's verdict, strict (warnings fail too). The one exception is checked rather than trusted: a
    call whose every allowed attempt (3) met a fault ends with a faulty last attempt, which llmock reads as
    accepted; such a call passes only if the client really failed it (no answer reached the round)."""
    verdict = judge(llmock.requests)
    outcomes = {tag: out for c in clients.values() for tag, out in c.outcomes.items()}
    unexplained = []
    exhausted = 0
    for f in verdict.findings:
        call = verdict.calls[f.call - 1]
        tag = call_tag(call.last)
        if (f.code in LAST_ATTEMPT_CODES and len(call.attempts) == ATTEMPTS
                and not any(a.completed and a.status < 400 for a in call.attempts) and tag is not None
                and outcomes.get(tag) not in (None, "ok")):
            exhausted += 1
            continue
        unexplained.append(f)
    assert not unexplained, "\n" + verdict.render() + describe_calls(verdict, unexplained, llmock.requests, outcomes)
    assert verdict.faults > 0
    # every call tagged by the client reached llmock, and every one ended for the caller
    assert len(outcomes) == sum(c.calls for c in clients.values())


async def test_tournament_under_random_faults(tmp_path: Path, llmock: Any, monkeypatch: pytest.MonkeyPatch,
                                              seeded_faults: Any) -> None:
    await play_faulty_tournament(tmp_path, llmock, monkeypatch, seeded_faults, seed=9, dilemmas=2,
                                 rounds_per_pairing=1, judges="rotate")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_long_tournament_under_random_faults(tmp_path: Path, llmock: Any, monkeypatch: pytest.MonkeyPatch,
                                                   seeded_faults: Any, seed: int) -> None:
    await play_faulty_tournament(tmp_path, llmock, monkeypatch, seeded_faults, seed=seed, dilemmas=6,
                                 rounds_per_pairing=1, judges="panel")
