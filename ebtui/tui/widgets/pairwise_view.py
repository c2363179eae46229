"""The Analysis tab's "which model is better" section: rank intervals, the pairwise matrix (A − B, judge-adjusted,
with Holm-significant cells marked) and the robustness sentences — the `ranks`, `pairwise` and `robustness`
tables of ebtui.core.analysis.results, the very numbers `ebtui report --json` prints. Enter on a pair opens the
compare view (ebtui.tui.screens.compare) with the two models' rounds side by side.

Names come from models.toml or round files: they pass through `strip_control` and are rendered as plain Text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from ebtui.core.safe_text import strip_control
from ebtui.core.views import numbers as num
from ebtui.tui.widgets.cells import name_cell, number

if TYPE_CHECKING:
    from ebtui.core.records import Round
    from ebtui.core.usecases.report import Analysis, Table

CELL = 13


def render_ranks_and_matrix(tables: Mapping[str, Table]) -> Text:
    """Rank intervals, then the matrix: row model minus column model (* = Holm-significant at 0.05; · = no
    number: the pair's reason is in the list below it)."""
    if "pairwise" not in tables or not tables["pairwise"].rows:
        return Text("Pairwise comparisons need at least two models with scores.", style="dim")
    ranks = tables["ranks"].as_dicts() if "ranks" in tables else []
    pairs = tables["pairwise"].as_dicts()
    models = sorted({str(p["a"]) for p in pairs} | {str(p["b"]) for p in pairs})
    w = min(max(len(m) for m in models) + 1, 24)
    out = Text()
    out.append("Ranks (1 = best; 95% rank interval from Holm-significant pairs)\n", style="bold")
    for r in sorted(ranks, key=lambda r: (r["rank"] is None, number(r["rank"]) or 0, str(r["model"]))):
        span = (f"{r['rank_low']}–{r['rank_high']}" if r["rank_low"] is not None else "—")
        rank = str(r["rank"]) if r["rank"] is not None else "—"
        out.append(f"  {name_cell(r['model'], w)} rank {rank:>2}  interval {span:<6}")
        if r["reason"]:
            out.append(f"  {strip_control(str(r['reason']))}", style="dim")
        out.append("\n")
    cell: dict[tuple[str, str], Mapping[str, object]] = {}
    for p in pairs:
        cell[(str(p["a"]), str(p["b"]))] = p
        flipped: dict[str, object] = dict(p)
        diff = number(p["diff"])
        if diff is not None:
            flipped["diff"] = -diff
        cell[(str(p["b"]), str(p["a"]))] = flipped
    out.append("Pairwise: row − column, judge-adjusted (* Holm p < 0.05; · not identified or no interval)\n",
               style="bold")
    out.append(" " * (w + 2) + "".join(name_cell(m, CELL - 1).rjust(CELL) for m in models) + "\n")
    for a in models:
        out.append(f"  {name_cell(a, w)}")
        for b in models:
            if a == b:
                out.append("—".rjust(CELL), style="dim")
                continue
            pair = cell[(a, b)]
            diff, p_holm = number(pair["diff"]), number(pair["p_holm"])
            if diff is None:
                out.append("·".rjust(CELL), style="dim")
                continue
            sig = p_holm is not None and p_holm < 0.05
            mark = "*" if sig else ("" if pair["ci_low"] is not None else "·")
            style = ("green" if diff > 0 else "red") if sig else ""
            out.append(f"{num.signed(diff)}{mark}".rjust(CELL), style=style)
        out.append("\n")
    if "robustness" in tables:
        for line in tables["robustness"].notes:
            out.append(strip_control(line) + "\n", style="dim")
    return out


class PairwiseView(VerticalScroll):
    """Call `show(analysis, rounds)`; enter on a row of the pair list opens the compare view of that pair."""

    DEFAULT_CSS = """
    PairwiseView { height: auto; max-height: 35vh; padding: 0 1; overflow: auto; }
    PairwiseView > #pairwise-text { width: auto; height: auto; text-wrap: nowrap; }
    PairwiseView > DataTable { height: auto; max-height: 12; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None,
                 disabled: bool = False) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self.analysis: Analysis | None = None
        self.rounds: Sequence[Round] = ()
        self.families: Mapping[str, str] | None = None
        self.pairs: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="pairwise-text", markup=False)
        yield DataTable(id="pairwise-list", cursor_type="row", zebra_stripes=True)

    def show(self, analysis: Analysis | None, rounds: Sequence[Round] = (),
             families: Mapping[str, str] | None = None) -> None:
        self.analysis, self.rounds, self.families = analysis, list(rounds), families
        tables: Mapping[str, Table] = analysis.tables if analysis is not None else {}
        text = render_ranks_and_matrix(tables)
        text.rstrip()
        self.query_one("#pairwise-text", Static).update(text)
        grid = self.query_one("#pairwise-list", DataTable)
        grid.clear(columns=True)
        grid.add_columns("a", "b", "a − b", "simultaneous 95%", "p (Holm)", "dilemmas", "why blank")
        self.pairs = []
        if "pairwise" not in tables:
            return
        for p in tables["pairwise"].as_dicts():
            self.pairs.append((str(p["a"]), str(p["b"])))
            ci = f"[{num.signed(p['ci_low'])}, {num.signed(p['ci_high'])}]" if p["ci_low"] is not None else "—"
            grid.add_row(Text(strip_control(str(p["a"]))), Text(strip_control(str(p["b"]))),
                         Text(num.signed(p['diff']) if p["diff"] is not None else "—"), Text(ci),
                         Text(num.fixed(p['p_holm'], 3) if p["p_holm"] is not None else "—"), Text(str(p["n_dilemmas"])),
                         Text(strip_control(str(p["reason"] or ""))))

    @on(DataTable.RowSelected, "#pairwise-list")
    def _open_compare(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if not 0 <= event.cursor_row < len(self.pairs) or not self.rounds:
            return
        from ebtui.tui.screens.compare import CompareScreen

        a, b = self.pairs[event.cursor_row]
        families = self.families
        if families is None:  # the families the fit used: models.toml, else recorded in the rounds
            from ebtui.core.usecases.report import families_for
            from ebtui.tui.services import app_context

            families = families_for(self.rounds, app_context(self).models)
        self.app.push_screen(CompareScreen(self.rounds, a, b, families=families))
