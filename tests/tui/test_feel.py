"""Themes (built-in and user files), the command palette and the help screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from ebtui.tui.screens.modals import HelpModal
from ebtui.tui.screens.results import ResultsScreen
from ebtui.tui.themes import ThemeFileError, builtin_themes, load_theme_dirs, load_theme_file
from tests.support.paths import ROOT as REPO


def test_builtin_and_example_themes_load() -> None:
    assert {t.name for t in builtin_themes()} >= {"ebtui-dark", "ebtui-light"}
    example = load_theme_file(REPO / "themes" / "parchment.toml")
    assert example.name == "parchment" and not example.dark


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("name = 'x'\nprimary = 'notacolour'", "not a colour"),
        ("primary = '#123456'", "missing 'name'"),
        ("name = 'x'\nprimary = '#123456'\nsparkle = true", "unknown key"),
        ("name = 'x' primary", "not valid TOML"),
    ],
)
def test_a_bad_theme_file_names_the_file_and_the_problem(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(content)
    with pytest.raises(ThemeFileError, match=problem) as info:
        load_theme_file(path)
    assert str(path) in str(info.value)


async def test_user_themes_load_and_a_bad_one_is_a_notification(make_app, tmp_path: Path) -> None:
    themes = tmp_path / "themes"  # the tests run in tmp_path: this is ./themes
    themes.mkdir()
    (themes / "mine.json").write_text('{"name": "mine", "primary": "#ff8800", "dark": true}')
    (themes / "oops.toml").write_text("name = 'oops'\nprimary = 12")
    assert [t.name for t in load_theme_dirs([themes]).themes] == ["mine"]
    app = make_app()
    app._load_user_themes = True
    app._register_themes()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "mine" in app.available_themes
        assert app.theme == "ebtui-dark"
        messages = [n.message for n in app._notifications]
        assert any("oops.toml" in m for m in messages), messages
        app.theme = "mine"
        await pilot.pause()
        assert app.current_theme.primary == "#ff8800"


async def test_palette_opens_the_results_browser(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"browse results")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, ResultsScreen)


async def test_help_opens_with_f1_and_closes(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpModal)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpModal)
