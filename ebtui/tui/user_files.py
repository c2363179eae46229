"""Reading the small settings files a user writes for the app (theme files, config.toml): one function, so
every such file fails the same way — one line naming the file and what is wrong, never a traceback."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path


class UserFileError(Exception):
    """A user's settings file that could not be used; the message names the file and what is wrong."""


def read_settings_file(path: Path) -> dict[str, object]:
    """The table a TOML file (or, for a .json name, a JSON object) holds."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise UserFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UserFileError(f"{path}: not UTF-8 text") from None
    kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
    try:
        data = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserFileError(f"{path}: not valid {kind} ({exc})") from None
    if not isinstance(data, dict):
        raise UserFileError(f"{path}: expected a table of settings")
    return data
