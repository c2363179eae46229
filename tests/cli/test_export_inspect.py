"""`ebtui export inspect`: an Inspect AI log written through inspect_ai's own API, read back by it, listed by
the log server `inspect view` runs, one sample per exchange, every score equal to `rounds show --json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ebtui.core.analysis.common import exchanges
from ebtui.core.records import CRITERIA, PhaseType
from ebtui.core.store import ResultsStore
from tests.support.export_support import export_shared, invoke, rounds_show

inspect_log = pytest.importorskip("inspect_ai.log", reason="the Inspect export needs inspect_ai: "
                                                             "pip install -e '.[inspect]'")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("export-inspect") / "logs"
    info, res = export_shared("inspect", out)
    path = Path(res.stdout.strip())
    assert path.parent == out and path.suffix == ".eval"
    return {**info, "out": out, "path": path, "log": inspect_log.read_eval_log(str(path))}


def test_one_sample_per_exchange_with_the_phases_as_messages(exported: dict[str, Any]) -> None:
    log = exported["log"]
    rounds = ResultsStore(exported["root"]).load_rounds(tournament=exported["tid"])
    exs = exchanges(rounds)
    assert log.status == "success"
    assert len(log.samples) == len(exs) == log.results.total_samples
    assert {s.id for s in log.samples} == {ex.id for ex in exs}
    by_id = {ex.id: ex for ex in exs}
    for s in log.samples:
        ex = by_id[s.id]
        first = ex.rounds[0]
        said = [m for m in s.messages if m.role == "assistant"]
        # phases 1-4 once, then one judge reply per round of the panel that has one
        speakers = [(m.metadata["phase"], m.model) for m in said]
        want = [(str(pt), (first.team_a_model if pt != PhaseType.RESPONSE else first.team_b_model))
                for pt in (PhaseType.PRESENTATION, PhaseType.RESPONSE, PhaseType.REBUTTAL,
                           PhaseType.CONSISTENCY_TEST) if first.phase(pt) and first.phase(pt).response]
        assert speakers[: len(want)] == want
        judges = sorted(m for ph, m in speakers[len(want):])
        assert judges == sorted(r.judge_model for r in ex.rounds if r.phase(PhaseType.JUDGMENT)
                                and r.phase(PhaseType.JUDGMENT).response)
        for m in said:
            r = next(r for r in ex.rounds if r.id == m.metadata["round_id"])
            assert m.text == r.phase(m.metadata["phase"]).response.replace("\x1b", "") or "\x1b" in \
                r.phase(m.metadata["phase"]).response
        assert s.metadata["team_a_model"] == first.team_a_model
        assert set(s.metadata["round_ids"]) == {r.id for r in ex.rounds}


def test_every_score_equals_rounds_show_json(exported: dict[str, Any]) -> None:
    n_scores = n_missing = n_overridden = 0
    shown: dict[str, Any] = {}
    for s in exported["log"].samples:
        for name, score in (s.scores or {}).items():
            meta = score.metadata
            rid = meta["round_id"]
            if rid not in shown:
                shown[rid] = rounds_show(exported["root"], rid)
            r = shown[rid]
            team = meta["team"]
            assert name.startswith(f"team_{team}/{r.judge_model}")
            effective = r.judgment.effective_scores(team).as_dict()
            parsed = r.judgment.parsed_scores(team).as_dict()
            assert score.value == effective
            assert meta["effective"] == effective and meta["parsed"] == parsed
            n_scores += len(CRITERIA)
            n_missing += sum(v is None for v in parsed.values())
            n_overridden += len(meta["overrides"])
            for crit, ov in meta["overrides"].items():
                assert ov["value"] == effective[crit] and ov["parsed"] == parsed[crit]
    rounds = ResultsStore(exported["root"]).load_rounds(tournament=exported["tid"])
    assert n_scores == sum(2 * len(CRITERIA) for r in rounds if r.judgment is not None)
    assert n_missing > 0 and n_overridden == 2


def test_models_tokens_and_cost_in_the_stats(exported: dict[str, Any]) -> None:
    rounds = ResultsStore(exported["root"]).load_rounds(tournament=exported["tid"])
    usage = exported["log"].stats.model_usage
    for model in {p.model_id for r in rounds for p in r.phases}:
        own = [p for r in rounds for p in r.phases if p.model_id == model and not p.reused_from]
        assert usage[model].output_tokens == sum(p.usage.output_tokens for p in own)
        costs = [p.usage.cost_usd for p in own if p.usage.cost_usd is not None]
        assert usage[model].total_cost == (pytest.approx(sum(costs)) if costs else None)
    assert set(exported["log"].stats.role_usage) == {"team_a", "team_b", "judge"}


def test_inspect_view_lists_and_serves_it(exported: dict[str, Any]) -> None:
    listed = inspect_log.list_eval_logs(str(exported["out"]))
    assert [Path(i.name.removeprefix("file://")) for i in listed] == [exported["path"]]
    assert listed[0].task == "ebtui" and listed[0].task_id == exported["tid"].replace("-", "")
    server = pytest.importorskip("inspect_ai._view.fastapi_server", reason="inspect_ai's view server")
    from starlette.testclient import TestClient

    client = TestClient(server.view_server_app(default_dir=str(exported["out"])))
    res = client.get("/logs")
    assert res.status_code == 200
    names = [f["name"] for f in res.json()["files"]]
    assert [Path(n.removeprefix("file://")) for n in names] == [exported["path"]]
    res = client.get(f"/logs/{names[0]}")
    assert res.status_code == 200 and res.json()["eval"]["task_id"] == exported["tid"]
    assert len(res.json()["samples"]) == len(exported["log"].samples)


def test_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import builtins

    real = builtins.__import__

    def no_inspect(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("inspect_ai"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    res = invoke("export", "inspect", "--store", str(tmp_path))
    assert res.exit_code == 2
    assert res.output.strip() == "ebtui: error: an Inspect AI log needs the inspect_ai package: " \
                                 "pip install 'ebtui[inspect]'"


def test_the_viewer_is_told_the_content_is_untrusted(exported: dict[str, Any]) -> None:
    viewer = exported["log"].eval.viewer
    if viewer is None:
        pytest.skip("this inspect_ai has no ViewerConfig (older than the trust_content option)")
    assert viewer.trust_content is False


def test_a_whole_store_is_one_log(exported: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "all.eval"
    res = invoke("export", "inspect", "--store", str(exported["root"]), "--out", str(out))
    assert res.exit_code == 0, res.output
    log = inspect_log.read_eval_log(str(out))
    rounds = ResultsStore(exported["root"]).load_rounds()
    assert len(log.samples) == len(exchanges(rounds))
    assert log.eval.task == "ebtui/rounds"


@pytest.mark.slow
def test_the_inspect_view_command_lists_it(exported: dict[str, Any]) -> None:
    """`inspect view` itself, as a user runs it: its log list names the file."""
    import json
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = Path(sys.executable).with_name("inspect")
    proc = subprocess.Popen([str(exe), "view", "--log-dir", str(exported["out"]), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/logs", timeout=2) as resp:
                    listing = json.loads(resp.read())
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "inspect view did not start"
                time.sleep(0.3)
        names = [Path(f["name"].removeprefix("file://")) for f in listing["files"]]
        assert names == [exported["path"]]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
