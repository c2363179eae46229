"""The human audit's scoring screen, driven through tmux (`python -m ebtui` in a real terminal, keys sent with
send-keys, the screen read back with capture-pane): scores typed on the keyboard are stored as human ratings in
the audit's own file, nothing of the judge (scores, reasons, overrides, the judge's or the teams' model names)
is ever on the screen, and the round files — judgments and overrides — are unchanged afterwards."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from ebtui.core.records import CRITERIA
from ebtui.core.usecases.audit import draw_audit
from ebtui.core.usecases.context import open_context
from tests.support.factories import open_store, scored_round
from tests.support.paths import ROOT
from tests.support.tui_helpers import TmuxApp

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")

MODELS = "".join(f'[models.{n}]\nprovider = "scripted"\n\n' for n in ("alpha", "beta", "zeta-judge"))
SECRET = "JUDGE-REASON-XYZZY"


def _store(root: Path) -> list[str]:
    store = open_store(root)
    ids = []
    for i in range(3):
        a = {c: 3 for c in CRITERIA}
        b = {c: 4 for c in CRITERIA}
        r = scored_round(f"r-audit{i}", "d1", "alpha", "beta", "zeta-judge", a, b,
                         text=lambda pt, who, i=i: f"{pt.value} words of round {i} [bold]not markup[/bold]")
        assert r.judgment is not None
        r.judgment.team_a_justification = SECRET
        r.judgment.team_b_justification = SECRET
        r.judgment.overall_analysis = SECRET
        store.save_round(r)
        ids.append(r.id)
    store.apply_override(ids[0], "a", "consistency", 1, "OVERRIDE-NOTE-PLUGH")
    store.close()
    return ids


def _launch(tmp_path: Path, store: Path) -> TmuxApp:
    models = tmp_path / "models.toml"
    models.write_text(MODELS)
    env = (f"PYTHONPATH={shlex.quote(str(ROOT))} EBTUI_STORE={shlex.quote(str(store))} USER=ann "
           f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path / 'cfg'))} TERM=xterm-256color")
    command = (f"env -u COLUMNS -u LINES -u EBTUI_MODELS {env} {shlex.quote(sys.executable)} -m ebtui "
               f"--models {shlex.quote(str(models))}")
    return TmuxApp("audit", command, size=(160, 50), cwd=str(tmp_path))


def test_keyboard_scores_are_stored_blind_and_leave_the_rounds_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = _store(root)
    audit = draw_audit(open_context(store=root), 2, seed=4)
    rounds_before = {p.name: p.read_bytes() for p in (root / "rounds").glob("*.json")}
    first = audit.judgments[0].round_id
    app = _launch(tmp_path, root)
    try:
        app.wait_for("Team A", timeout=40)
        app.keys("f5")
        shown = app.wait_for("0 of 2 scored · judgment 1 of 2", timeout=20)
        for secret in (SECRET, "OVERRIDE-NOTE-PLUGH", "zeta-judge", "alpha", "beta"):
            assert secret not in shown, (secret, shown)
        index = int(first.removeprefix("r-audit"))
        assert f"words of round {index} [bold]not markup[/bold]" in shown  # the transcript, shown as text
        rubric = [line for line in shown.splitlines() if any(line.strip().startswith(lbl) or lbl in line
                                                               for lbl in ("Principle articulation", "Consistency"))]
        assert rubric and all(not re.search(r"\b(3|4|1)\b", line) for line in rubric), rubric
        # all 14 cells of the first judgment: Team A 1..7 (digits), then Team B, 0 = 10
        app.keys(*"1234567", "8", "9", "0", "1", "2", "3", "4", pause=0.25)
        shown = app.wait_for("1 of 2 scored · judgment 2 of 2", timeout=20)
        assert SECRET not in shown and "zeta-judge" not in shown
        app.keys("5")  # one score of the second judgment, then leave: the app resumes there next time
        app.wait_for(lambda s: re.search(r"Principle articulation\s+5", s) is not None, timeout=10)
        app.keys("escape", "ctrl+q")
    finally:
        app.close()
    saved = json.loads((root / "audits" / f"{audit.id}.json").read_text())
    given = {(r["round_id"], r["team"], r["criterion"]): r["score"] for r in saved["ratings"]}
    expected = dict(zip([(first, t, c) for t in ("a", "b") for c in CRITERIA],
                        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4], strict=True))
    assert {k: v for k, v in given.items() if k[0] == first} == expected
    assert given[(audit.judgments[1].round_id, "a", "principle_articulation")] == 5 and len(given) == 15
    assert {r["rater"] for r in saved["ratings"]} == {"ann"} and {r["source"] for r in saved["ratings"]} == {"app"}
    assert {p.name: p.read_bytes() for p in (root / "rounds").glob("*.json")} == rounds_before
    assert ids[0] in {p.stem for p in (root / "rounds").glob("*.json")}
