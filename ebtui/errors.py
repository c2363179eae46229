"""Errors both front ends share, in a neutral place so the TUI and the CLI never import each other."""

from __future__ import annotations

from typing import ClassVar

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it


class UsageError(Exception):
    """Bad input (a file, a flag, a models.toml): shown as one line `ebtui: error: ...` with exit code 2,
    never a traceback. The TUI raises it before its screen opens; the CLI's CliError is one too."""

    exit_code: ClassVar[int] = EXIT_USAGE
