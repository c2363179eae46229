"""The command line: the headless subcommands (bare `ebtui` opens the app through ebtui.launcher, which
hands this group an `open_app` callable; the CLI never imports the TUI).

Subcommands live in their own modules and are imported only when used, so `ebtui --help` stays fast
and a headless command never imports Textual.
"""

from __future__ import annotations

import importlib

import click

from ebtui import __version__
from ebtui.cli.common import CliError

# name -> (module:attribute, one-line help shown by `ebtui --help` without importing the module), read from
# a line each: name, module:attribute, help
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    name: (target, help_) for name, target, help_ in (line.split(None, 2) for line in """
dilemmas     ebtui.cli.dilemmas:dilemmas       List the dilemmas of a document, or show one in full.
models       ebtui.cli.models:models           List configured models, or check them with one tiny call.
run          ebtui.cli.run:run                 Run one round live and save it.
rounds       ebtui.cli.rounds:rounds           List, show and override saved rounds.
tournament   ebtui.cli.tournament:tournament   Run a tournament from a tournament.toml.
tournaments  ebtui.cli.tournament:tournaments  List saved tournaments.
import       ebtui.cli.imports:import_group    Import rounds played by other programs (eb: the Ethics Bowl runner).
report       ebtui.cli.report:report           Write a Markdown report with tables, charts and CSVs.
export       ebtui.cli.export:export           Export rounds: tidy tables (Parquet/CSV) or an Inspect AI log.
rejudge      ebtui.cli.rejudge:rejudge         Judge saved rounds again (other judges, repeats, order): judge calls only.
store        ebtui.cli.store:store_group       Check the results store (--repair: rebuild the index, clean up).
plan         ebtui.cli.plan:plan               Plan a tournament's size: predicted interval widths, detectable gap, calls, cost.
audit        ebtui.cli.audit:audit             A human audit: draw judgments, score them blind (sheet/import), calibrate the report.
compare      ebtui.cli.compare:compare         Judge-adjusted difference between two models, overall and per criterion.
""".strip().splitlines())
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            target, _ = LAZY_COMMANDS[cmd_name]
            module_name, attr = target.split(":")
            command: click.Command = getattr(importlib.import_module(module_name), attr)
            return command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, LAZY_COMMANDS[name][1]) for name in sorted(LAZY_COMMANDS)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--document", type=click.Path(dir_okay=False), help="Dilemma .docx (default: the built-in set).")
@click.option("--models", "models_file", type=click.Path(dir_okay=False), help="models.toml to use.")
@click.option("--store", type=click.Path(file_okay=False), help="Results store directory (default ./saved).")
@click.version_option(__version__, prog_name="ebtui")
@click.pass_context
def cli(ctx: click.Context, document: str | None, models_file: str | None, store: str | None) -> None:
    """ebtui — an Ethics Bowl for language models, in the terminal.

    Run with no command to open the app.
    """
    ctx.ensure_object(dict)
    ctx.obj.update(document=document, models_file=models_file, store=store)
    if ctx.invoked_subcommand is None:
        open_app = ctx.obj.get("open_app")
        if open_app is None:
            raise CliError("no app to open from here: run `ebtui` or `python -m ebtui` (ebtui.launcher:main); "
                           "an `ebtui` script installed before the launcher moved needs `pip install -e .`")
        open_app(document=document, models_file=models_file, store=store)


def main(argv: list[str] | None = None) -> None:
    """The headless CLI alone (subcommands only); the `ebtui` console script is ebtui.launcher:main."""
    cli.main(args=argv, prog_name="ebtui", standalone_mode=True)
