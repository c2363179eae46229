"""The user keymap: `[keymap]` in the config file remaps binding ids (Textual's App.set_keymap); a bad entry
is one notification naming the file and the entry, never a crash, and the good entries still apply."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from textual.dom import DOMNode

import ebtui.tui
from ebtui.tui.keymap import is_key, keymap_from_mapping, load_keymap
from ebtui.tui.keys import BY_ID, KEY_TABLE
from ebtui.tui.screens.results import ResultsScreen
from ebtui.tui.screens.setup import SetupScreen


def _notes(app: object) -> list[str]:
    return [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def test_a_remapped_key_triggers_the_action_and_the_old_key_no_longer_does(make_app, tmp_path: Path) -> None:
    app = make_app(keymap_file=_config(tmp_path, '[keymap]\n"app.results" = "ctrl+b"\n'))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("f3")  # the default key of app.results, now taken away
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        assert _notes(app) == []


async def test_a_screen_binding_can_be_remapped_too_and_takes_several_keys(make_app, tmp_path: Path) -> None:
    app = make_app(keymap_file=_config(tmp_path, '[keymap]\n"results.back" = ["q", "ctrl+g"]\n'))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("f3")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        await pilot.press("escape")  # no longer Back on the results screen
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert isinstance(app.screen, SetupScreen)


async def test_bad_entries_are_one_notification_each_and_the_good_ones_still_apply(make_app, tmp_path: Path) -> None:
    path = _config(tmp_path, '[keymap]\n"app.nosuch" = "f9"\n"app.help" = "ctrl+fnord"\n"app.theme" = 7\n'
                             '"app.results" = "ctrl+b"\n')
    app = make_app(keymap_file=path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        notes = _notes(app)
        assert len(notes) == 3, notes
        assert all(str(path) in n and "\n" not in n for n in notes)
        assert any("keymap.app.nosuch" in n and "no binding" in n for n in notes)
        assert any("keymap.app.help" in n and "ctrl+fnord" in n for n in notes)
        assert any("keymap.app.theme" in n and "not a key" in n for n in notes)
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)


async def test_a_config_that_is_not_toml_is_one_notification_and_the_default_keys(make_app, tmp_path: Path) -> None:
    path = _config(tmp_path, "[keymap\napp.results = ")
    app = make_app(keymap_file=path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        notes = _notes(app)
        assert len(notes) == 1 and str(path) in notes[0] and "not valid TOML" in notes[0], notes
        await pilot.press("f3")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)


def test_no_file_or_no_table_is_no_keymap(tmp_path: Path) -> None:
    assert load_keymap(None).keymap == {} and load_keymap(None).errors == []
    assert load_keymap(tmp_path / "absent.toml").errors == []
    assert load_keymap(_config(tmp_path, 'theme = "x"\n')).keymap == {}
    bad = keymap_from_mapping({"keymap": "f2"}, "cfg.toml")
    assert bad.keymap == {} and bad.errors == ['cfg.toml: [keymap] must be a table of binding id = "keys"']


@pytest.mark.parametrize(("key", "ok"), [
    ("f2", True), ("ctrl+n", True), ("ctrl+shift+left", True), ("question_mark", True), ("?", True),
    ("space", True), ("escape", True), ("x", True),
    ("ctrl+fnord", False), ("fnord", False), ("", False), ("ctrl+", False), ("hyperdrive+x", False),
])
def test_which_keys_are_keys(key: str, ok: bool) -> None:
    assert is_key(key) is ok


def test_several_keys_join_with_commas() -> None:
    loaded = keymap_from_mapping({"keymap": {"app.help": "f1, ctrl+h", "app.results": ["f3", "ctrl+b"]}}, "c")
    assert loaded.keymap == {"app.help": "f1,ctrl+h", "app.results": "f3,ctrl+b"} and loaded.errors == []


def test_every_binding_of_the_app_has_an_id_from_the_one_table() -> None:
    """Each screen's and widget's bindings come from keys.toml, so each can be remapped by id."""
    for module in pkgutil.walk_packages(ebtui.tui.__path__, "ebtui.tui."):
        importlib.import_module(module.name)
    seen: set[str] = set()
    for name, module in list(__import__("sys").modules.items()):
        if not name.startswith("ebtui.tui"):
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not (issubclass(cls, DOMNode) and cls.__module__ == name):
                continue
            for binding in cls.__dict__.get("BINDINGS", []):
                assert binding.id in BY_ID and BY_ID[binding.id] is binding, f"{cls.__name__}: {binding}"
                seen.add(binding.id)
    assert seen == {b.id for b in KEY_TABLE}  # and every entry of the table is used
