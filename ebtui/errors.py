"""Errors both front ends share, in a neutral place so the TUI and the CLI never import each other."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it


class UsageError(Exception):
    """Bad input (a file, a flag, a models.toml): shown as one line `ebtui: error: ...` with exit code 2,
    never a traceback. The TUI raises it before its screen opens; the CLI's CliError is one too."""

    exit_code: ClassVar[int] = EXIT_USAGE


def read_text(path: Path, error: Callable[[str], Exception], *, missing: str) -> str:
    """A file's UTF-8 text, or `error(message)` raised: `missing` when there is no such file, else
    "<path>: cannot read: <why>" (the store's and tournament.toml's one way of saying it)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(missing) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None


def read_bytes(path: Path, error: Callable[[str], Exception], what: str = "") -> bytes:
    """A file's bytes, or `error("<path>: cannot read<what> (<why>)")` raised (models.toml, theme files)."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read{what} ({exc.strerror or exc})") from None
