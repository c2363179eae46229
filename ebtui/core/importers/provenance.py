"""A report's note of imported rounds: one summary per imported run (also importable from ebtui.core.importers.eb)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sized
from typing import TypedDict

from ebtui.core.records import Imported, Round

__all__ = ["ProvenanceSummary", "provenance_lines", "provenance_summary", "summary_lines"]


class ProvenanceSummary(TypedDict):
    """One imported run among some rounds, as a report's JSON holds it."""

    runner: str
    run: str
    n_rounds: int
    source_files: list[str]
    defaulted: int
    disagreements: int


def provenance_summary(rounds: Iterable[Round]) -> list[ProvenanceSummary]:
    """Per imported run among the rounds (for a report's JSON): runner, run, n_rounds, source_files,
    defaulted (scores the runner wrote as 5, now missing), disagreements (with ebtui's parser)."""
    groups: dict[tuple[str, str], list[Imported]] = {}
    for r in rounds:
        if r.imported is not None:
            groups.setdefault((r.imported.runner, r.imported.source_run), []).append(r.imported)
    return [
        {"runner": runner, "run": run, "n_rounds": len(imps),
         "source_files": sorted({i.source_file for i in imps}),
         "defaulted": sum(len(i.defaulted) for i in imps),
         "disagreements": sum(len(i.disagreements) for i in imps)}
        for (runner, run), imps in sorted(groups.items())
    ]


def provenance_lines(rounds: Iterable[Round]) -> list[str]:
    """One line per imported run among the rounds, for reports: "12 round(s) imported from <runner> (run
    <folder>, 12 source file(s)): 3 score(s) the runner defaulted to 5 are missing; 1 disagreement(s)..."."""
    return summary_lines(provenance_summary(rounds))


def summary_lines(summary: Iterable[Mapping[str, object]]) -> list[str]:
    """`provenance_lines` from a summary already made by `provenance_summary`."""
    def count(files: object) -> int:
        if not isinstance(files, Sized):
            raise TypeError(f"source_files is not a list ({files!r})")
        return len(files)

    return [
        f"{g['n_rounds']} round(s) imported from {g['runner']} ({'run ' + str(g['run']) if g['run'] else 'files'}, "
        f"{count(g['source_files'])} source file(s)): {g['defaulted']} score(s) the runner defaulted to 5 are "
        f"missing; {g['disagreements']} disagreement(s) with ebtui's parser (the runner's value kept)"
        for g in summary
    ]
