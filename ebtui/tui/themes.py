"""Themes: the ones shipped inside the package plus user theme files, read at start-up.

A theme file is TOML or JSON whose keys are those of `textual.theme.Theme` (name, primary, secondary,
accent, foreground, background, surface, panel, warning, error, success, dark, variables). A file that
cannot be read or does not describe a theme is reported by name and skipped — never a crash.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from ebtui.locations import builtin_themes_dir, user_themes_dirs
from ebtui.tui.user_files import UserFileError, read_settings_file

THEME_SUFFIXES = (".toml", ".json")
DEFAULT_THEME = "ebtui-dark"
_COLOR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background",
                 "surface", "panel", "boost")
_ALLOWED = {f.name for f in fields(Theme)}


class ThemeFileError(Exception):
    """A theme file that could not be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class ThemeLoad:
    themes: list[Theme]
    errors: list[str]


def theme_from_mapping(data: object, source: str) -> Theme:
    """The theme a settings table describes (anything else, or a table that is not a theme: ThemeFileError)."""
    if not isinstance(data, dict):
        raise ThemeFileError(f"{source}: expected a table of theme settings")
    unknown = sorted(set(data) - _ALLOWED)
    if unknown:
        raise ThemeFileError(f"{source}: unknown key(s) {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{source}: missing 'name'")
    if not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{source}: missing 'primary' colour")
    for key in _COLOR_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        try:
            Color.parse(value)
        except (ColorParseError, TypeError, ValueError):
            raise ThemeFileError(f"{source}: {key} = {value!r} is not a colour") from None
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeFileError(f"{source}: 'variables' must map names to strings")
    try:
        return Theme(**data)
    except (TypeError, ValueError) as exc:
        raise ThemeFileError(f"{source}: {exc}") from None


def load_theme_file(path: Path) -> Theme:
    try:
        data = read_settings_file(path)
    except UserFileError as exc:
        raise ThemeFileError(str(exc)) from None
    return theme_from_mapping(data, str(path))


def load_theme_dirs(dirs: Iterable[Path]) -> ThemeLoad:
    themes: list[Theme] = []
    errors: list[str] = []
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if path.suffix.lower() not in THEME_SUFFIXES or not path.is_file():
                continue
            try:
                themes.append(load_theme_file(path))
            except ThemeFileError as exc:
                errors.append(str(exc))
    return ThemeLoad(themes, errors)


def builtin_themes() -> list[Theme]:
    """The themes shipped with ebtui; a broken built-in is a packaging bug, so it raises."""
    load = load_theme_dirs([builtin_themes_dir()])
    if load.errors:
        raise ThemeFileError("; ".join(load.errors))
    return load.themes


def user_themes() -> ThemeLoad:
    return load_theme_dirs(user_themes_dirs())
