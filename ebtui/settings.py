"""The app's settings in one record (`Settings`, `load_settings`): the user's `config.toml` (in the user
config dir: `models`, `store`, `store_fsync`) and the `EBTUI_*` environment, the environment winning over
the file and a command-line option over both. Other tables of the file (the TUI's `[keymap]`) belong to
their readers; a known key with a wrong value is a `SettingsError` naming the file and the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebtui.errors import UsageError

APP_NAME = "ebtui"
CONFIG_FILE_NAME = "config.toml"

#: setting -> the environment variable that sets it
ENVIRONMENT = {"models": "EBTUI_MODELS", "store": "EBTUI_STORE", "store_fsync": "EBTUI_STORE_FSYNC"}
_OFF = ("0", "false", "no", "off")


class SettingsError(UsageError):
    """A setting with a value that cannot be used; the message names the file (or variable) and the key."""


def user_config_dir() -> Path:
    from platformdirs import user_config_path

    return user_config_path(APP_NAME)


def config_file() -> Path:
    """`config.toml` in the user config dir (where models.toml and themes/ also live)."""
    return user_config_dir() / CONFIG_FILE_NAME


@dataclass(frozen=True)
class Settings:
    """What `load_settings` read (a frozen dataclass, not a pydantic model: `_file_values` and the environment
    check every value, and the app's first frame does not wait for pydantic's validators to be built)."""

    models: Path | None = None  # models.toml to read before ./models.toml and the user config dir's
    store: Path | None = None  # the results store (else ./saved)
    store_fsync: bool = True  # fsync every saved file and its folder (off: atomic, not power-loss safe)
    #: setting -> where its value came from ("EBTUI_STORE", or the file's path); unset settings are absent
    origins: dict[str, str] = field(default_factory=dict)

    def origin(self, setting: str) -> str | None:
        return self.origins.get(setting)


def _file_values(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError:  # no config file (the usual case): nothing to parse
        return {}
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    values: dict[str, Any] = {}
    for key in ("models", "store", "store_fsync"):
        if key not in data:
            continue
        value = data[key]
        if key == "store_fsync":
            if not isinstance(value, bool):
                raise SettingsError(f"{path}: {key} must be true or false (got {value!r})")
        elif not isinstance(value, str) or not value.strip():
            raise SettingsError(f"{path}: {key} must be a path (got {value!r})")
        else:
            value = Path(value).expanduser()
        values[key] = value
    return values


def load_settings(file: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """The settings now: the file's values (default: the user's config.toml), then the environment's."""
    path = config_file() if file is None else file
    env = os.environ if environ is None else environ
    values = _file_values(path)
    origins = dict.fromkeys(values, str(path))
    for key, var in ENVIRONMENT.items():
        raw = env.get(var)
        if not raw:
            continue
        values[key] = raw.strip().lower() not in _OFF if key == "store_fsync" else Path(raw)
        origins[key] = var
    return Settings(**values, origins=origins)
