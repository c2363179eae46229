"""Shared CLI helpers: one-line errors with the right exit code, safe printing of model text."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

import click

from ebtui.core.safe_text import strip_control
from ebtui.errors import EXIT_INTERRUPTED, EXIT_USAGE, UsageError

if TYPE_CHECKING:
    from ebtui.core.usecases.dilemmas import DilemmaDocument

EXIT_OK = 0
EXIT_INCOMPLETE = 1
__all__ = ["EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "CliError", "ctx_option", "echo_unreadable", "echo_untrusted",
           "load_document"]


class CliError(click.ClickException, UsageError):
    """A usage or input problem: printed as one line, exit code 2, never a traceback (click shows it
    inside a command; the launcher shows any other UsageError the same way)."""

    exit_code = EXIT_USAGE

    def show(self, file: IO[Any] | None = None) -> None:  # click's signature
        click.echo(f"ebtui: error: {self.format_message()}", err=True)


def echo_untrusted(text: str, *, nl: bool = True, err: bool = False) -> None:
    """Print model output: control sequences removed (click.echo never interprets markup)."""
    click.echo(strip_control(text), nl=nl, err=err)


def echo_unreadable(entries: list[tuple[str, str]], what: str = "round", *, err: bool = True) -> None:
    """Entries of the store that could not be read, named (on stderr unless `err` is False), every time:
    they are skipped, never deleted; `ebtui store check` lists them too."""
    if not entries:
        return
    n = len(entries)
    click.echo(f"ebtui: {n} unreadable {what} entr{'y' if n == 1 else 'ies'} skipped:", err=err)
    for path, reason in entries:
        click.echo(f"  {strip_control(path)}: {strip_control(reason)}", err=err)


def ctx_option(ctx: click.Context, name: str, value: str | None) -> str | None:
    """A subcommand's option, falling back to the same option given before the subcommand."""
    if value is not None:
        return value
    root = ctx.find_root()
    given = (root.obj or {}).get(name)
    return None if given is None else str(given)


def load_document(path: str | None) -> DilemmaDocument:
    """A dilemma document (None: the built-in one) for a command: a bad one is a CliError (one line, exit 2);
    its warnings are printed once each, one line each, on stderr."""
    from ebtui.core.usecases.dilemmas import open_document

    try:
        document = open_document(path)
    except UsageError as exc:
        raise CliError(strip_control(str(exc))) from None
    for message in document.warnings:
        click.echo(f"ebtui: warning: {strip_control(message)}", err=True)
    return document
