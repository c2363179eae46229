"""A small tournament played by the real runner with scripted models, for the export tests: three
dilemmas (so intervals exist), a judge panel on every exchange, one judge that answers in prose (its
scores are missing), a hostile model text, priced models, one human override and one acceptance."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import Round
from ebtui.core.tournament import TournamentFinished, TournamentRunner
from ebtui.core.tournament.config import parse_tournament_config
from ebtui.providers.scripted import ScriptedClient
from tests.support.factories import open_store

#: model text that must stay inert everywhere it is shown
HOSTILE = ("\n<script>console.error('xss')</script><img src=\"http://127.0.0.1:9/x.png\"> "
           "\x1b[31m[bold red]red[/] & </pre></details>")

MODELS = ["claude-a", "gpt-b", "gemini-c", "qwen-d"]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="ebtui")


def play(root: Path) -> dict[str, Any]:
    dilemmas = load_dilemmas()
    cfg = parse_tournament_config(
        {"name": "Export cup <b>&", "models": MODELS, "dilemmas": [d.id for d in dilemmas[:3]],
         "judges": "panel"},
        "t.toml",
    )
    clients = {n: ScriptedClient(n, price_in=1.0, price_out=2.0) for n in cfg.models}
    clients["qwen-d"] = ScriptedClient("qwen-d", judge_mode="prose")
    store = open_store(root)
    runner = TournamentRunner(cfg, clients, store, dilemmas=dilemmas)

    async def go() -> Any:
        return [ev async for ev in runner.run()][-1]

    assert isinstance(asyncio.run(go()), TournamentFinished)
    rounds = store.load_rounds(tournament=runner.tournament_id)
    judged = [r for r in rounds if r.judgment and r.judgment.parsed_scores("a").consistency is not None]
    old = judged[0].judgment.parsed_scores("a").consistency
    store.apply_override(judged[0].id, "a", "consistency", 1 if old != 1 else 2, "checked <by> hand")
    prose = next(r for r in rounds if r.judge_model == "qwen-d" and r.judgment is not None)
    store.apply_override(prose.id, "b", "intellectual_honesty", 6, "scored by hand")
    victim = rounds[0]
    phase = victim.phase("presentation")
    assert phase is not None
    phase.response += HOSTILE
    store.save_round(victim)
    store.close()
    return {"root": root, "tid": runner.tournament_id, "n": len(rounds)}


_SHARED: dict[str, Any] = {}


def shared_tournament() -> dict[str, Any]:
    """The tournament of `play`, played once per test session into a temporary directory (the export tests
    only read it and write beside it, under exports/ and reports/)."""
    if not _SHARED:
        import atexit
        import shutil
        import tempfile

        base = Path(tempfile.mkdtemp(prefix="ebtui-export-tests-"))
        atexit.register(shutil.rmtree, base, True)
        _SHARED.update(play(base / "store"))
    return dict(_SHARED)


def rounds_show(root: Path, round_id: str) -> Round:
    """`ebtui rounds show ID --json`, parsed back into a Round."""
    res = invoke("rounds", "show", round_id, "--json", "--store", str(root))
    assert res.exit_code == 0, res.output
    return Round.model_validate(json.loads(res.stdout))


def report_json(root: Path, tid: str) -> dict[str, Any]:
    res = invoke("--store", str(root), "report", "--tournament", tid, "--json")
    assert res.exit_code == 0, res.output
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def export_shared(kind: str, out: Path) -> tuple[dict[str, Any], Result]:
    """`ebtui export KIND` of the shared tournament into `out`, which must succeed: (tournament info, result)."""
    info = shared_tournament()
    res = invoke("--store", str(info["root"]), "export", kind, "--tournament", info["tid"], "--out", str(out))
    assert res.exit_code == 0, res.output
    return info, res
