"""The console script `ebtui` (and `python -m ebtui`): bare `ebtui` opens the Textual app, a subcommand
runs headless. It lives outside both front ends so that neither imports the other, and it imports the
TUI only when the app is opened (`ebtui --help` and every subcommand stay fast and never load Textual).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from ebtui.errors import EXIT_INTERRUPTED, UsageError

#: Textual's frame rate for the app (Textual reads its `TEXTUAL_FPS` once, when it is imported; a value the user
#: set wins). Textual paints only what changed, when something changed, so this caps the rate rather than
#: setting it: while three panes stream, 120 draws about as many frames as 60 (benchmark 4). What it changes is
#: how long a key waits for its frame: after an idle spell Textual paints the first change at once but skips
#: a frame period before the next, so a change made by a key's later handlers (focus moves in messages after
#: the key) waited up to two periods: 33 ms at 60, 17 ms at 120 (tab p95 51 -> 34 ms, same run otherwise).
FRAME_RATE = 120


def tune_frame_rate() -> None:
    """Set Textual's frame rate for the app, unless the user set one; before Textual is imported."""
    os.environ.setdefault("TEXTUAL_FPS", str(FRAME_RATE))


def skip_pydantic_plugins() -> None:
    """No search for pydantic plugins when the app opens, unless the user asked for some: pydantic looks for
    them in every installed distribution's entry points when it builds its first model (≈ 180 distributions
    in the project's venv, 5-12 ms of the first frame), and ebtui uses none."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def open_app(document: str | Path | None = None, models_file: str | Path | None = None,
             store: str | Path | None = None) -> None:
    import gc

    # no cycle collection while the app starts (imports, styles, the first screen: a few hundred thousand
    # objects that live as long as the app); the app freezes them and turns collection back on once its
    # first frame is up (ebtui.tui.app._tune_gc)
    gc.disable()
    tune_frame_rate()
    skip_pydantic_plugins()
    try:
        from ebtui.tui.app import run_app

        run_app(document=document, models_file=models_file, store=store)
    finally:
        gc.enable()  # also when the app never started (a bad --models is a one-line error)


def _open_app_alone() -> None:
    """Bare `ebtui`: the app, without importing click and the command group first (≈ 20 ms of the first
    frame); the same one-line errors and exit codes as through the group."""
    try:
        open_app()
    except UsageError as exc:  # a bad models.toml, an unwritable store: one line, before the screen opens
        print(f"ebtui: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("\nebtui: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except OSError as exc:  # a full disk or a vanished folder where nothing expected it: one line
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"ebtui: error: {exc.strerror or exc}{where}", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


def main(argv: list[str] | None = None) -> None:
    """Click without its standalone handling, so that Ctrl-C anywhere (loading a document, opening the
    store, between rounds) is one line and exit code 130, never a traceback or click's "Aborted!"."""
    from ebtui import redact

    # every configured key's value is kept out of what is printed (ebtui.redact)
    if not isinstance(sys.stdout, redact.RedactingStream):
        sys.stdout = redact.RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, redact.RedactingStream):
        sys.stderr = redact.RedactingStream(sys.stderr)
    if not (sys.argv[1:] if argv is None else argv):
        _open_app_alone()
    import click

    from ebtui.cli import cli

    try:
        code = cli.main(args=argv, prog_name="ebtui", standalone_mode=False, obj={"open_app": open_app})
    except click.ClickException as exc:  # usage errors (CliError: one line) with their exit code
        exc.show()
        sys.exit(exc.exit_code)
    except UsageError as exc:  # raised outside click's own handling (e.g. from the TUI start-up)
        click.echo(f"ebtui: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        click.echo("\nebtui: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:  # `ebtui ... | head`: the reader went away
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - no flush error at exit
        sys.exit(1)
    except OSError as exc:  # a full disk or a vanished folder where no command expected it: one line
        where = f" ({exc.filename})" if exc.filename else ""
        click.echo(f"ebtui: error: {exc.strerror or exc}{where}", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
