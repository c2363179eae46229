"""The console script `ebtui` (and `python -m ebtui`): bare `ebtui` opens the Textual app, a subcommand
runs headless. It lives outside both front ends so that neither imports the other, and it imports the
TUI only when the app is opened (`ebtui --help` and every subcommand stay fast and never load Textual).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ebtui.errors import UsageError


def open_app(document: str | Path | None = None, models_file: str | Path | None = None,
             store: str | Path | None = None) -> None:
    from ebtui.tui.app import run_app

    run_app(document=document, models_file=models_file, store=store)


def main(argv: list[str] | None = None) -> None:
    import click

    from ebtui.cli import cli

    try:
        cli.main(args=argv, prog_name="ebtui", standalone_mode=True, obj={"open_app": open_app})
    except UsageError as exc:  # raised outside click's own handling (e.g. from the TUI start-up)
        click.echo(f"ebtui: error: {exc}", err=True)
        sys.exit(exc.exit_code)
