"""Shared CLI helpers: one-line errors with the right exit code, safe printing of model text."""

from __future__ import annotations

from typing import IO, Any

import click

from ebtui.core.safe_text import strip_control
from ebtui.errors import EXIT_INTERRUPTED, EXIT_USAGE, UsageError

EXIT_OK = 0
EXIT_INCOMPLETE = 1
__all__ = ["EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "CliError", "ctx_option", "echo_untrusted"]


class CliError(click.ClickException, UsageError):
    """A usage or input problem: printed as one line, exit code 2, never a traceback (click shows it
    inside a command; the launcher shows any other UsageError the same way)."""

    exit_code = EXIT_USAGE

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"ebtui: error: {self.format_message()}", err=True)


def echo_untrusted(text: str, *, nl: bool = True, err: bool = False) -> None:
    """Print model output: control sequences removed (click.echo never interprets markup)."""
    click.echo(strip_control(text), nl=nl, err=err)


def ctx_option(ctx: click.Context, name: str, value: Any) -> Any:
    """A subcommand's option, falling back to the same option given before the subcommand."""
    if value is not None:
        return value
    root = ctx.find_root()
    return (root.obj or {}).get(name)
