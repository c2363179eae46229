"""Where ebtui keeps things: one function per location, nothing created at import time."""

from __future__ import annotations

import os
from pathlib import Path

from ebtui.settings import APP_NAME as APP_NAME
from ebtui.settings import load_settings
from ebtui.settings import user_config_dir as user_config_dir


def models_config_candidates(explicit: str | os.PathLike[str] | None = None) -> list[Path]:
    """Where models.toml is looked for, in order: --models, the `models` setting ($EBTUI_MODELS, else
    config.toml's), ./models.toml, user config dir."""
    out: list[Path] = []
    if explicit:
        out.append(Path(explicit))
    setting = load_settings().models
    if setting is not None:
        out.append(setting)
    out.append(Path.cwd() / "models.toml")
    out.append(user_config_dir() / "models.toml")
    return out


def store_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The results store: --store DIR, else the `store` setting ($EBTUI_STORE, else config.toml's), else
    ./saved."""
    if explicit:
        return Path(explicit)
    return load_settings().store or Path.cwd() / "saved"


def package_data_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def builtin_document() -> Path:
    """The embedded default dilemma document shipped inside the package."""
    return package_data_dir() / "builtin_dilemmas.docx"


def user_cache_dir() -> Path:
    """ebtui's user cache dir ($XDG_CACHE_HOME/ebtui, else ~/.cache/ebtui): what can be rebuilt at any time."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / APP_NAME


def builtin_themes_dir() -> Path:
    return Path(__file__).resolve().parent / "tui" / "themes"


def user_themes_dirs() -> list[Path]:
    """User theme files: ./themes (a checkout) and the user config dir's themes/."""
    return [Path.cwd() / "themes", user_config_dir() / "themes"]
