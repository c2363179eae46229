"""The first screen from what an earlier start kept (ebtui/tui/first_screen.py): the same list and pickers as
the models and records give, no pydantic before the first frame, and every change of an input a miss (a bad
models file is still the one-line error before the screen opens)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.widgets import OptionList

from ebtui.config import ConfigError
from ebtui.core.dilemmas import load_dilemmas
from ebtui.tui import first_screen
from ebtui.tui.first_screen import Listed
from ebtui.tui.screens.setup import SetupScreen
from ebtui.tui.services import default_services
from tests.support.factories import make_dilemmas
from tests.support.paths import subprocess_env
from tests.support.tui_helpers import wait_until

KEYED = """
[models.alpha]
provider = "openai"
model = "gpt-x"
api_key_env = "FIRST_SCREEN_TEST_KEY"
"""


def _expected_listed() -> list[Listed]:
    return [Listed(d.id, d.title, d.has_consistency_case) for d in load_dilemmas(None)]


def test_the_second_start_lists_what_the_first_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = default_services()
    assert first.dilemmas is not None and first.listed is None  # read and checked before the screen
    assert first_screen.cache_file().is_relative_to(tmp_path)  # the test's own cache dir
    second = default_services()
    assert second.dilemmas is None  # the records come after the first frame
    assert second.listed == _expected_listed()
    assert second.choices == first.choices
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # another folder with no models.toml: the same start
    assert default_services().listed == _expected_listed()


def test_a_changed_models_file_is_read_again_and_a_bad_one_is_still_an_error(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"  # ./models.toml: the tests run in tmp_path
    models.write_text(KEYED, encoding="utf-8")
    a = default_services()
    assert "alpha" in a.choices.names and default_services().listed is not None  # kept
    models.write_text(KEYED.replace("gpt-x", "gpt-y"), encoding="utf-8")
    b = default_services()
    assert b.listed is None and b.choices.details["alpha"] == "openai/gpt-y"  # a miss: read again
    models.write_text(KEYED + "\n[models.beta]\nprovider = \"nope\"\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="beta"):
        default_services()
    models.unlink()
    assert "alpha" not in default_services().choices.names


def test_a_key_set_since_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "models.toml").write_text(KEYED, encoding="utf-8")
    monkeypatch.delenv("FIRST_SCREEN_TEST_KEY", raising=False)
    assert default_services().choices.default == "local"
    assert default_services().listed is not None
    monkeypatch.setenv("FIRST_SCREEN_TEST_KEY", "sk-test-value")
    keyed = default_services()
    assert keyed.listed is None and keyed.choices.default == "alpha" and keyed.choices.seats == ("alpha",) * 3
    assert default_services().choices.default == "alpha"  # both kept, each for its own environment
    monkeypatch.delenv("FIRST_SCREEN_TEST_KEY")
    assert default_services().choices.default == "local"
    assert "sk-test-value" not in first_screen.cache_file().read_text(encoding="utf-8")  # names, never values


def test_a_change_of_the_code_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = tmp_path / "code.py"  # stands for one of first_screen.CODE (an absolute path joins as itself)
    code.write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(first_screen, "CODE", (*first_screen.CODE, str(code)))
    default_services()
    assert default_services().listed is not None
    code.write_text("x = 22\n", encoding="utf-8")  # another size (and mtime): another build of ebtui
    assert default_services().listed is None


@pytest.mark.parametrize("content", ["{not json", '{"format": 1, "entries": [{"key": 3}]}', "[]",
                                     '{"format": 1, "entries": "x"}'])
def test_a_broken_cache_is_a_miss(content: str) -> None:
    default_services()
    path = first_screen.cache_file()
    key = json.loads(path.read_text(encoding="utf-8"))["entries"][0]["key"]
    path.write_text(content.replace('"key": 3', f'"key": "{key}", "choices": 7'), encoding="utf-8")
    s = default_services()
    assert s.dilemmas is not None and s.listed is None
    assert default_services().listed == _expected_listed()  # rewritten by the miss


def test_no_pydantic_before_the_first_frame_on_a_hit(tmp_path: Path) -> None:
    """What the launcher runs before the app's first frame, in a fresh interpreter: no pydantic, no records."""
    default_services()  # the first start: writes the entry (the child has the same environment and cwd)
    code = (
        "import sys\n"
        "from ebtui.tui.app import EbtuiApp\n"
        "from ebtui.core.usecases.context import check_writable, open_context\n"
        "from ebtui.tui.services import default_services\n"
        "ctx = open_context(); check_writable(ctx); s = default_services(context=ctx)\n"
        "assert s.listed and s.dilemmas is None, s\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'ebtui.core.records', 'ebtui.config'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


async def test_the_list_from_the_last_start_then_the_records(make_app) -> None:
    """The list is up before the records are read; when they come the list stays (and the highlight where the
    user moved it), the preview shows the record, and what the screen shows is kept for the next start."""
    release = threading.Event()
    records = make_dilemmas()

    def slow_loader(path: Path | None) -> list:
        assert path is None
        assert release.wait(20)
        return records

    listed = [Listed(d.id, d.title, d.has_consistency_case) for d in records]
    app = make_app(dilemmas=None, listed=listed, load_document=slow_loader)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SetupScreen) and screen.document_loading
        options = screen.query_one("#dilemma-list", OptionList)
        assert [str(o.prompt) for o in options.options][0].startswith(records[0].id)
        assert "2 dilemmas" in str(screen.query_one("#document-label").render())
        await pilot.press("down")
        first_options = list(options.options)
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.document_loading and screen.dilemmas == records
        assert list(options.options) == first_options and options.highlighted == 1
        assert screen.selected_dilemma == records[1]
    kept = first_screen.read(None)
    assert kept is not None and kept.listed == listed


async def test_ctrl_r_on_the_kept_list_starts_the_round_once_the_records_are_in(make_app) -> None:
    """A key pressed as soon as the list shows (its records still on their way) is not lost: the round
    starts when they arrive, with the dilemma the list highlighted."""
    from ebtui.tui.screens.live import LiveRoundScreen

    release = threading.Event()
    records = make_dilemmas()

    def slow_loader(path: Path | None) -> list:
        assert release.wait(20)
        return records

    async def no_events(ctx: object, prepared: object) -> AsyncIterator[object]:  # the round itself is not the point
        return
        yield

    listed = [Listed(d.id, d.title, d.has_consistency_case) for d in records]
    app = make_app(dilemmas=None, listed=listed, load_document=slow_loader, run_round=no_events)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("down", "ctrl+r")
        await pilot.pause(0.2)
        assert isinstance(app.screen, SetupScreen) and app.screen.document_loading
        release.set()
        await wait_until(lambda: isinstance(app.screen, LiveRoundScreen) and app.screen.state != "starting")
        await pilot.pause()
        assert app.screen.request.dilemma == records[1]
        assert not any("still loading" in n.message for n in app._notifications)
