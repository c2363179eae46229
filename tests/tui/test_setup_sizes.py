"""The setup screen at a laptop's 80x24 and a large 160x50: Start is on screen without scrolling, every
model picker is reachable, and a dilemma without a consistency case says so. Snapshots of both sizes, and
the real app in tmux at 80x24."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import Button, Select, Static

from tests.support.factories import make_dilemmas
from tests.support.paths import ROOT
from tests.support.tui_helpers import wait_until

KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY", "DASHSCOPE_API_KEY",
            "OPENROUTER_API_KEY", "TOGETHER_API_KEY")


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_start_and_every_picker_are_on_screen(make_app, size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await wait_until(lambda: app.screen.options_ready)  # the options come after the list's first frame
        screen = app.screen
        region = screen.region
        for widget in [screen.query_one("#start", Button), *screen.query(Select)]:
            r = widget.region
            assert r.height >= 1 and region.contains_region(r), (widget, r, region)
        await pilot.press("ctrl+r")  # and it starts
        await pilot.pause()
        assert type(app.screen).__name__ != "SetupScreen"


async def test_a_dilemma_without_a_consistency_case_is_marked(make_app) -> None:
    dilemmas = make_dilemmas()
    dilemmas[1].consistency_case = ""
    app = make_app(dilemmas=dilemmas)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await wait_until(lambda: app.screen.options_ready)
        note = app.screen.query_one("#consistency-note", Static)
        assert not note.display
        await pilot.press("down")
        await pilot.pause()
        assert note.display and "skips the consistency test" in str(note.render())


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_start_is_visible_at_80x24_in_a_real_terminal(tmp_path: Path) -> None:
    sock = f"ebtui-80x24-{os.getpid()}"
    env = (f"PYTHONPATH={shlex.quote(str(ROOT))} EBTUI_STORE={shlex.quote(str(tmp_path / 'st'))} "
           f"XDG_CONFIG_HOME={shlex.quote(str(tmp_path / 'cfg'))}")
    no_keys = " ".join(f"-u {k}" for k in KEY_VARS)  # a new user: no key set, no models.toml
    command = (f"env -u COLUMNS -u LINES -u EBTUI_MODELS {no_keys} {env} TERM=xterm-256color "
               f"{shlex.quote(sys.executable)} -m ebtui")
    tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "s", "-x", "80", "-y", "24", "-c", str(tmp_path), command],
                   check=True)
    try:
        deadline = time.monotonic() + 30
        shown = ""
        while time.monotonic() < deadline:
            shown = subprocess.run([*tmux, "capture-pane", "-p", "-t", "s"], capture_output=True, text=True).stdout
            if "Start round" in shown and "demo-judge" in shown:
                break
            time.sleep(0.25)
        lines = shown.splitlines()
        assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
        start = [line for line in lines[:-1] if "Start round  ctrl+r" in line]  # the button, not the footer
        assert start, shown
        # with no key set, the demo set is offered: three models that stream like real ones
        assert "demo-a" in shown and "demo-b" in shown and "demo-judge" in shown, shown
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


async def test_a_round_without_a_consistency_case_shows_the_phase_skipped(make_app, store) -> None:
    import asyncio

    from ebtui.core.records import NO_CONSISTENCY_CASE, PhaseStatus, PhaseType
    from ebtui.tui.widgets.role_pane import PhaseView

    dilemmas = make_dilemmas()
    dilemmas[0].consistency_case = ""
    app = make_app(dilemmas=dilemmas)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        screen = app.screen
        for _ in range(400):
            if getattr(screen, "state", "") != "running":
                break
            await asyncio.sleep(0.05)
        assert screen.state == "finished"
        views = {v.phase_type: v for v in screen.query(PhaseView)}
        assert views[PhaseType.CONSISTENCY_TEST].status == PhaseStatus.SKIPPED
        saved = store.load_round(screen.round.id)
        cons = saved.phase(PhaseType.CONSISTENCY_TEST)
        assert cons.error_kind == NO_CONSISTENCY_CASE and cons.prompt == ""
        assert saved.status.value == "complete" and saved.judgment is not None
