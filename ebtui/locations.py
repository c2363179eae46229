"""Where ebtui keeps things: one function per location, nothing created at import time."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "ebtui"


def user_config_dir() -> Path:
    from platformdirs import user_config_path

    return user_config_path(APP_NAME)


def models_config_candidates(explicit: str | os.PathLike[str] | None = None) -> list[Path]:
    """Where models.toml is looked for, in order: --models, $EBTUI_MODELS, ./models.toml, user config dir."""
    out: list[Path] = []
    if explicit:
        out.append(Path(explicit))
    env = os.environ.get("EBTUI_MODELS")
    if env:
        out.append(Path(env))
    out.append(Path.cwd() / "models.toml")
    out.append(user_config_dir() / "models.toml")
    return out


def store_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The results store: --store DIR, else $EBTUI_STORE, else ./saved."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("EBTUI_STORE")
    if env:
        return Path(env)
    return Path.cwd() / "saved"


def package_data_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def builtin_document() -> Path:
    """The embedded default dilemma document shipped inside the package."""
    return package_data_dir() / "builtin_dilemmas.docx"


def builtin_themes_dir() -> Path:
    return Path(__file__).resolve().parent / "tui" / "themes"


def user_themes_dirs() -> list[Path]:
    """User theme files: ./themes (a checkout) and the user config dir's themes/."""
    return [Path.cwd() / "themes", user_config_dir() / "themes"]
