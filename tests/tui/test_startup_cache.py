"""The built-in dilemmas load from a cache at start-up, so the setup screen's first frame lists them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.usecases import dilemmas as cache
from ebtui.core.usecases.dilemmas import builtin_cache_paths, cached_builtin_dilemmas, write_builtin_cache
from ebtui.locations import builtin_document


def test_the_packaged_cache_is_the_parsed_builtin_document() -> None:
    packaged = builtin_cache_paths()[0]
    # regenerate after changing the document or the Dilemma record:
    # python -c "from ebtui.core.dilemmas import load_dilemmas as l; from ebtui.core.usecases.dilemmas import *;
    #            write_builtin_cache(l(None), builtin_cache_paths()[0])"
    assert packaged.exists()
    data = json.loads(packaged.read_text(encoding="utf-8"))
    assert data["key"] == cache.builtin_key(builtin_document())
    assert cached_builtin_dilemmas() == load_dilemmas(None)


def test_a_stale_or_broken_cache_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "stale.json"
    good = load_dilemmas(None)
    changed = [good[0].model_copy(update={"title": "Not the shipped title"}), *good[1:]]
    write_builtin_cache(changed, stale)
    data = json.loads(stale.read_text(encoding="utf-8"))
    data["key"] = "0" * 64  # as if the document had changed since
    stale.write_text(json.dumps(data), encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(cache, "builtin_cache_paths", lambda: [stale, broken])
    assert cached_builtin_dilemmas() is None
    # loading the built-in document then parses it and writes the user cache for the next start
    user = tmp_path / "user.json"
    monkeypatch.setattr(cache, "builtin_cache_paths", lambda: [stale, user])
    assert cache.app_dilemmas(None) == good
    assert user.exists() and cached_builtin_dilemmas() == good


def test_default_services_have_the_dilemmas_before_the_first_frame(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBTUI_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    from ebtui.tui.services import default_services

    s = default_services()
    assert s.dilemmas == load_dilemmas(None)


async def test_the_collector_is_tuned_after_the_first_frame_only_when_asked(make_app) -> None:
    import gc

    from ebtui.tui.app import GC_THRESHOLDS

    before = gc.get_threshold()
    try:
        app = make_app()  # headless (a test): left alone by default
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
        assert gc.get_threshold() == before
        app = make_app()
        app._gc_tuning = True  # as in a terminal
        gc.disable()  # as the launcher leaves it during start-up
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()  # the warm-up after the first frame: tuned at its end
            await pilot.pause()
            assert gc.get_threshold() == GC_THRESHOLDS and gc.isenabled()
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
        gc.enable()


@pytest.mark.parametrize(("preset", "expected"), [(None, None), ("30", "30")])
def test_the_app_runs_textual_at_ebtuis_frame_rate_unless_the_user_set_one(preset: str | None,
                                                                             expected: str | None) -> None:
    """`ebtui` sets Textual's frame rate before Textual is imported (Textual reads it once, at import); a
    TEXTUAL_FPS the user set wins. Run in a fresh interpreter, through the launcher's own start-up."""
    import os
    import subprocess
    import sys

    from ebtui.launcher import FRAME_RATE

    expected = expected or str(FRAME_RATE)
    assert expected != "60"  # not Textual's default: the launcher's setting is what is seen
    code = (
        "import sys, types\n"
        "import ebtui.launcher as launcher\n"
        "fake = types.ModuleType('ebtui.tui.app')\n"
        "def run_app(**kwargs):\n"
        "    from textual import constants, screen\n"
        "    print(constants.MAX_FPS, round(1 / screen.UPDATE_PERIOD))\n"
        "fake.run_app = run_app\n"
        "sys.modules['ebtui.tui.app'] = fake\n"
        "assert 'textual' not in sys.modules\n"
        "launcher.open_app()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    if preset is not None:
        env["TEXTUAL_FPS"] = preset
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == [expected, expected]
