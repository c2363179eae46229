"""Every key binding of the app, each with an id a user's keymap can remap.

The defaults are data (keys.toml beside this module, one [scope] table per screen or widget); a screen takes
its own with `BINDINGS = bindings("live")` (every `live.*`). The user's `[keymap]` table maps these ids to
other keys (ebtui/tui/keymap.py; Textual applies it with `App.set_keymap`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.binding import Binding, BindingType

DEFAULTS_FILE = Path(__file__).with_name("keys.toml")


def _read_table(path: Path) -> tuple[Binding, ...]:
    """The bindings of keys.toml, in its order (a broken file is a packaging bug: it raises)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(
        Binding(spec["key"], spec["action"], spec["description"], show=spec.get("show", True),
                priority=spec.get("priority", False), id=f"{scope}.{name}")
        for scope, table in data.items()
        for name, spec in table.items()
    )


KEY_TABLE: tuple[Binding, ...] = _read_table(DEFAULTS_FILE)
#: binding id -> its default binding
BY_ID: dict[str, Binding] = {b.id: b for b in KEY_TABLE if b.id is not None}


def bindings(scope: str) -> list[BindingType]:
    """The default bindings whose id starts with `scope.`, in the table's order."""
    return [b for b in KEY_TABLE if b.id is not None and b.id.startswith(f"{scope}.")]
