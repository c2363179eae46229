"""The user's keymap: a `[keymap]` table in `<config dir>/config.toml` mapping binding ids (the table in
keys.toml: `live.cancel`, `app.new_round`, ...) to keys. The app applies it with Textual's `App.set_keymap`
when it starts. An entry that cannot be used is skipped and reported in one line naming the file, the entry
and what is wrong; the rest of the keymap still applies. A missing file is no keymap."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from textual.keys import REPLACED_KEYS, Keys, key_to_character

from ebtui.settings import config_file
from ebtui.tui.keys import BY_ID
from ebtui.tui.user_files import UserFileError, read_settings_file

CONFIG_FILE_NAME = "config.toml"
MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
_NAMED_KEYS = frozenset(k.value for k in Keys if not k.value.startswith("<"))


def user_config_file() -> Path:
    """`config.toml` in the user config dir (where models.toml and themes/ also live)."""
    return config_file()


@dataclass(frozen=True)
class KeymapLoad:
    keymap: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def is_key(key: str) -> bool:
    """A key Textual can bind: modifiers joined with `+` before one key name (`ctrl+n`, `f5`, `question_mark`)
    or one character."""
    *mods, name = key.split("+")
    if not name or not all(m in MODIFIERS for m in mods):
        return False
    return len(name) == 1 or name in _NAMED_KEYS or name in REPLACED_KEYS or key_to_character(name) is not None


def _keys(value: object) -> str | None:
    """`"f2"`, `"f2,ctrl+n"` or `["f2", "ctrl+n"]` as Textual's comma-separated key string (None: not keys)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = ",".join(value)
    if not isinstance(value, str):
        return None
    keys = [k.strip() for k in value.split(",")]
    return ",".join(keys) if keys and all(is_key(k) for k in keys) else None


def keymap_from_mapping(data: Mapping[str, object], source: str) -> KeymapLoad:
    """The usable entries of a config's `[keymap]` table, and one message per entry that is not."""
    table = data.get("keymap")
    if table is None:
        return KeymapLoad()
    if not isinstance(table, dict):
        return KeymapLoad(errors=[f"{source}: [keymap] must be a table of binding id = \"keys\""])
    out = KeymapLoad()
    for binding_id, value in table.items():
        where = f"{source}: keymap.{binding_id}"
        keys = _keys(value)
        if binding_id not in BY_ID:
            out.errors.append(f"{where}: no binding has this id (the ids are listed in docs/APP.md)")
        elif keys is None:
            out.errors.append(f"{where} = {value!r}: not a key (e.g. \"ctrl+n\"; several: \"f2,ctrl+n\")")
        else:
            out.keymap[binding_id] = keys
    return out


def load_keymap(path: Path | None) -> KeymapLoad:
    """The keymap of a config file (None, or a file that does not exist: no keymap)."""
    if path is None or not path.exists():
        return KeymapLoad()
    try:
        data = read_settings_file(path)
    except UserFileError as exc:
        return KeymapLoad(errors=[f"{exc}; the keymap is not applied"])
    return keymap_from_mapping(data, str(path))
