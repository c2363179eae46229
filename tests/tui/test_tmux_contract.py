"""Issue 15's contract, measured in a real terminal: tmux runs `python -m ebtui` at 80x24, the screen is read
back with capture-pane.

- the setup screen's Start button is on screen without scrolling (and stays so after a resize to 160x50);
- the results browser over a store with a few rounds shows its column headers as whole words (not cut to 2-3
  characters) and the rows' model names whole; after a resize to 160x50 the headers are still whole and the
  columns dropped at 80 columns (Review, Tournament) come back.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from ebtui.core.records import RoundStatus
from tests.support.factories import FIXED_TIME, fixed_round, open_store
from tests.support.paths import ROOT
from tests.support.tui_helpers import TmuxApp

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed (apt-get install tmux): the contract is measured in it")

MODELS = "".join(f'[models.{name}]\nprovider = "scripted"\ntokens_per_second = 2000\n\n'
                 for name in ("alpha", "beta", "gamma"))
#: the results browser's headers at 80 columns; Review and Tournament are dropped there and return when wide
NARROW_HEADERS = ("When", "Dilemma", "Team A", "Team B", "Judge", "A : B", "Status")
WIDE_ONLY_HEADERS = ("Review", "Tournament")


def _launch(tmp_path: Path, name: str, size: tuple[int, int]) -> TmuxApp:
    models = tmp_path / "models.toml"
    models.write_text(MODELS)
    env = (f"PYTHONPATH={shlex.quote(str(ROOT))} EBTUI_STORE={shlex.quote(str(tmp_path / 'store'))} "
           f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path / 'cfg'))} TERM=xterm-256color")
    command = (f"env -u COLUMNS -u LINES -u EBTUI_MODELS {env} {shlex.quote(sys.executable)} -m ebtui "
               f"--models {shlex.quote(str(models))}")
    return TmuxApp(name, command, size=size, cwd=str(tmp_path))


def _fits(shown: str, size: tuple[int, int]) -> None:
    lines = shown.splitlines()
    assert len(lines) <= size[1] and all(len(line) <= size[0] for line in lines), shown


def _start_button_row(shown: str) -> int | None:
    """The row of the Start button's label, if it is on screen above the footer (the footer's own
    "^r Start round" binding does not count: it has no "ctrl+r" after the words)."""
    lines = shown.splitlines()
    rows = [i for i, line in enumerate(lines[:-1]) if "Start round  ctrl+r" in line]
    return rows[0] if rows else None


def test_setup_start_is_visible_without_scrolling_at_80x24(tmp_path: Path) -> None:
    app = _launch(tmp_path, "setup", (80, 24))
    try:
        shown = app.wait_for(lambda s: "Start round  ctrl+r" in s and "Team A" in s, timeout=30)
        assert app.size() == (80, 24)
        _fits(shown, (80, 24))
        row = _start_button_row(shown)
        assert row is not None, f"the Start button is not on screen at 80x24:\n{shown}"
        # the whole button: its label row and the row under it (its lower edge) are above the footer
        assert row + 1 < len(shown.splitlines()) - 1, shown
        # every model picker is on screen too (a round cannot be set up without them)
        for label in ("Team A", "Team B", "Judge"):
            assert label in shown, (label, shown)

        app.resize(160, 50)
        shown = app.wait_for(lambda s: len(s.splitlines()) > 24 and _start_button_row(s) is not None, timeout=15)
        assert app.size() == (160, 50)
        _fits(shown, (160, 50))
    finally:
        app.close()


def _write_rounds(store_dir: Path) -> list[str]:
    """Five saved rounds between three models (names of at most 8 letters: a legible column shows them whole),
    one incomplete and one in a tournament."""
    store = open_store(store_dir)
    pairs = [("alpha", "beta", "gamma"), ("beta", "alpha", "gamma"), ("alpha", "gamma", "beta"),
             ("gamma", "alpha", "beta"), ("beta", "gamma", "alpha")]
    ids = []
    for i, (a, b, judge) in enumerate(pairs):
        r = fixed_round(round_id=f"r-contract{i:04d}", dilemma_index=i % 2,
                        status=RoundStatus.INCOMPLETE if i == 3 else RoundStatus.COMPLETE)
        r = r.model_copy(update={"team_a_model": a, "team_b_model": b, "judge_model": judge,
                                 "timestamp": FIXED_TIME + timedelta(hours=i),
                                 "tournament_id": "t-contract01" if i == 4 else None})
        store.save_round(r)
        ids.append(r.id)
    return ids


def _header(shown: str) -> str:
    rows = [line for line in shown.splitlines() if re.search(r"\bWhen\b", line) and "Dilemma" in line]
    assert rows, f"no header row on screen:\n{shown}"
    return rows[0]


def test_results_headers_are_legible_at_80x24_and_after_a_resize(tmp_path: Path) -> None:
    _write_rounds(tmp_path / "store")
    app = _launch(tmp_path, "results", (80, 24))
    try:
        app.wait_for("Start round", timeout=30)
        app.keys("F3")
        shown = app.wait_for("5 of 5 rounds", timeout=20)
        shown = app.wait_for(lambda s: "alpha" in s and "Dilemma" in s, timeout=10)
        assert app.size() == (80, 24)
        _fits(shown, (80, 24))
        header = _header(shown)
        for label in NARROW_HEADERS:
            assert label in header, f"header {label!r} is not whole at 80x24: {header!r}"
        lines = shown.splitlines()
        table = "\n".join(lines[lines.index(header) + 1:])
        for model in ("alpha", "beta", "gamma"):
            assert re.search(rf"\b{model}\b", table), f"{model} is not shown whole at 80x24:\n{shown}"
        assert "incomplete" in table, shown  # the status column is wide enough for its longest word

        app.resize(160, 50)
        shown = app.wait_for(lambda s: "Tournament" in _header(s) if "Dilemma" in s else False, timeout=15)
        assert app.size() == (160, 50)
        _fits(shown, (160, 50))
        header = _header(shown)
        for label in NARROW_HEADERS + WIDE_ONLY_HEADERS:
            assert label in header, f"header {label!r} is not whole at 160x50: {header!r}"
        assert "5 of 5 rounds" in shown and "t-contract01" in shown, shown
    finally:
        app.close()
