"""`ebtui dilemmas`: list the dilemmas of a document, or show one in full."""

from __future__ import annotations

import json

import click

from ebtui.cli.common import CliError, ctx_option, echo_untrusted, load_document
from ebtui.core.records import Dilemma
from ebtui.core.safe_text import strip_control

_DOCUMENT_HELP = "Dilemma .docx (default: the built-in set)."


def _document_option(ctx: click.Context, value: str | None) -> str | None:
    """--document on the subcommand, else on `dilemmas`, else before `dilemmas` (`ebtui --document X`)."""
    if value is not None:
        return value
    c: click.Context | None = ctx.parent if ctx.command.name != "dilemmas" else None
    while c is not None:
        if c.command.name == "dilemmas" and c.params.get("document") is not None:
            return str(c.params["document"])
        c = c.parent
    outer = ctx_option(ctx, "document", None)
    return None if outer is None else str(outer)


def _one_line(text: str) -> str:
    return " ".join(strip_control(text).split())


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()

    return [fmt(header), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)]


@click.group(invoke_without_command=True)
@click.option("--document", type=click.Path(dir_okay=False), default=None, help=_DOCUMENT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of Dilemma records.")
@click.pass_context
def dilemmas(ctx: click.Context, document: str | None, as_json: bool) -> None:
    """List the dilemmas of a document (default: the built-in set), or `show ID` for one in full."""
    if ctx.invoked_subcommand is not None:
        return
    doc = load_document(_document_option(ctx, document))
    if as_json:
        records = [{**d.model_dump(mode="json"), "has_consistency_case": d.has_consistency_case} for d in doc.dilemmas]
        click.echo(json.dumps(records, indent=2, ensure_ascii=False))
        return
    rows = [
        [
            _one_line(d.id),
            _one_line(d.title),
            _one_line(d.category) or "-",
            _one_line(d.metadata.get("structure", "")) or "-",
            str(len(d.complications)),
            str(len(d.questions)),
            str(len(d.asymmetric_features)),
            "yes" if d.has_consistency_case else "NONE",
        ]
        for d in doc.dilemmas
    ]
    for line in _table(rows, ["ID", "TITLE", "CATEGORY", "STRUCTURE", "COMPL", "QUEST", "ASYM", "CONSIST"]):
        click.echo(line)
    click.echo(f"\n{len(doc.dilemmas)} dilemmas from {strip_control(doc.path)}")
    missing = [d.id for d in doc.dilemmas if not d.has_consistency_case]
    if missing:
        click.echo(f"No consistency case (their rounds skip the consistency test): {', '.join(missing)}")


def _format(d: Dilemma) -> str:
    def section(name: str, body: str) -> list[str]:
        return [name, "-" * len(name), body or "(none)", ""]

    def items(values: list[str]) -> str:
        return "\n".join(f"{i}. {v}" for i, v in enumerate(values, 1))

    meta = [f"Category: {d.category or '(none)'}"]
    meta += [f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in d.metadata.items()]
    lines = [d.title, "=" * len(d.title), f"id: {d.id}", *meta, ""]
    lines += section("Core Scenario", d.core_scenario)
    lines += section("Complications (shown to Team A)", items(d.complications))
    lines += section("Questions", items(d.questions))
    lines += section("Asymmetric Features (shown to Team B)", items(d.asymmetric_features))
    lines += section("Consistency Case", d.consistency_case or "(none: rounds skip the consistency test)")
    return "\n".join(lines).rstrip() + "\n"


@dilemmas.command("show")
@click.argument("dilemma_id", metavar="ID")
@click.option("--document", type=click.Path(dir_okay=False), default=None, help=_DOCUMENT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the Dilemma record as JSON.")
@click.pass_context
def show(ctx: click.Context, dilemma_id: str, document: str | None, as_json: bool) -> None:
    """Print one dilemma in full."""
    doc = load_document(_document_option(ctx, document))
    found = doc.get(dilemma_id)
    if found is None:
        valid = ", ".join(d.id for d in doc.dilemmas)
        raise CliError(f"{strip_control(doc.path)}: no dilemma with id {_one_line(dilemma_id)!r}; valid ids: {valid}")
    if as_json:
        click.echo(json.dumps(found.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        echo_untrusted(_format(found), nl=False)
