"""The setup screen's first frame without pydantic: the built-in dilemmas' list and the model pickers' choices
as an earlier start saw them, kept in the user cache dir under a key made of every input they come from (the
bytes of each place models.toml is looked for, how it was asked for, the built-in document, the code's files,
which key variables are set). A hit means these bytes were read and checked before by this code; a miss is the
start as it was, models checked before the screen opens (docs/BENCHMARKS.md, issue 38's first frame)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ebtui.core.usecases.models import ModelChoices
from ebtui.locations import builtin_document, models_config_candidates, user_cache_dir
from ebtui.settings import load_settings

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ebtui.core.records import Dilemma
    from ebtui.core.usecases.context import AppContext

CACHE_NAME = "first-screen.json"
#: entries kept (one per models file, store's environment and so on that the user starts the app with)
MAX_ENTRIES = 8
FORMAT = 1
#: the code (and the shipped parse of the built-in document) that turns the inputs into what the first screen
#: shows, relative to the ebtui package
CODE = ("config.py", "locations.py", "settings.py", "core/records.py", "core/dilemmas.py", "core/doclists.py",
        "core/usecases/dilemmas.py", "core/usecases/models.py", "tui/first_screen.py",
        "data/builtin_dilemmas.cache.json")


class Listed(NamedTuple):
    """A dilemma as the setup screen's list shows it."""

    id: str
    title: str
    has_consistency_case: bool


@dataclass(frozen=True)
class FirstScreen:
    choices: ModelChoices
    listed: list[Listed]


class _Unknown(Exception):
    """An input that cannot be read now: no entry is used or written."""


def cache_file() -> Path:
    return user_cache_dir() / CACHE_NAME


def _digest(path: Path) -> str | None:
    """The file's bytes, hashed (None: no file there, as models.toml's search sees it)."""
    import hashlib

    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as exc:  # unreadable now: the slow path reads it and says what is wrong
        raise _Unknown(str(exc)) from None
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _stamp(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _key(models_file: str | Path | None) -> str:
    """Every input of the first screen but the key variables, hashed (raises _Unknown when one cannot be read)."""
    import hashlib

    package = Path(__file__).resolve().parents[1]
    inputs: dict[str, Any] = {
        "format": FORMAT,
        "code": {name: _stamp(package / name) for name in CODE},
        # a place with no file is skipped whatever its path (a start in another folder without a models.toml
        # is the same start); a file counts with its path and bytes
        "models": [[str(p), d] if (d := _digest(p)) else None for p in models_config_candidates(models_file)],
        "explicit": bool(models_file),
        "setting": load_settings().origin("models"),
        "document": _digest(builtin_document()),
    }
    text = json.dumps(inputs, sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _env_set(names: Sequence[str]) -> dict[str, bool]:
    return {name: bool(os.environ.get(name)) for name in names}


def _entries(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    entries = data.get("entries") if isinstance(data, dict) and data.get("format") == FORMAT else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _decode(entry: dict[str, Any]) -> FirstScreen:
    c = entry["choices"]
    names = [str(n) for n in c["names"]]
    seats = tuple(str(s) for s in c["seats"])
    if len(seats) != 3 or not names:
        raise ValueError("a malformed entry")
    choices = ModelChoices(names=names, default=str(c["default"]),
                           details={str(k): str(v) for k, v in c["details"].items()},
                           seats=(seats[0], seats[1], seats[2]))
    listed = [Listed(str(i), str(t), bool(h)) for i, t, h in entry["listed"]]
    return FirstScreen(choices=choices, listed=listed)


def read(models_file: str | Path | None) -> FirstScreen | None:
    """What the first screen shows, when an entry for exactly these inputs was written before; else None."""
    try:
        key = _key(models_file)
    except _Unknown:
        return None
    for entry in _entries(cache_file()):
        if entry.get("key") != key:
            continue
        env = entry.get("env")
        if not isinstance(env, dict) or _env_set(list(env)) != env:
            continue
        try:
            return _decode(entry)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
    return None


def of(ctx: AppContext, dilemmas: Sequence[Dilemma]) -> tuple[FirstScreen, list[str]]:
    """What the first screen shows for these records (the models read from ctx), and the key variables."""
    from ebtui.core.usecases.models import load_models, model_choices

    config = load_models(ctx)
    key_envs = sorted({m.key_env for m in config.models.values() if m.key_env})
    listed = [Listed(d.id, d.title, d.has_consistency_case) for d in dilemmas]
    return FirstScreen(choices=model_choices(config), listed=listed), key_envs


def remember(ctx: AppContext, dilemmas: Sequence[Dilemma]) -> FirstScreen | None:
    """Read the models (raises as `ctx.models` does) and keep what the first screen shows for the next start;
    nothing is written when an input changed meanwhile or the cache dir cannot be written. Returns it."""
    try:
        before = _key(ctx.models_file)
    except _Unknown:
        before = None
    shown, key_envs = of(ctx, dilemmas)
    try:
        if before is None or _key(ctx.models_file) != before:
            return shown
    except _Unknown:
        return shown
    c = shown.choices
    entry = {"key": before, "env": _env_set(key_envs),
             "choices": {"names": c.names, "default": c.default, "details": c.details, "seats": list(c.seats)},
             "listed": [list(d) for d in shown.listed]}
    path = cache_file()
    entries = _entries(path)
    if entries and entries[0] == entry:  # the usual start: written as it is by the last one
        return shown
    kept = [e for e in entries if e.get("key") != before or e.get("env") != entry["env"]]
    data = {"format": FORMAT, "entries": [entry, *kept][:MAX_ENTRIES]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # only a slower next start
        pass
    return shown
