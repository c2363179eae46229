"""The TUI's view of the joint fit: judge-adjusted model means and judge offsets with their 95% intervals, the
raw mean beside, n, and the same-family preference — the very Table objects the report, the CSVs and
`ebtui report --json` show (ebtui.core.analysis.results), drawn as text with an interval track.

Names come from models.toml or round files: they pass through `strip_control` and are rendered as plain Text.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widgets import Static

from ebtui.core.safe_text import strip_control
from ebtui.core.usecases import report
from ebtui.core.usecases.report import TRANSCRIPTS_UP_TO, AnalysisCancelled
from ebtui.core.views import numbers
from ebtui.core.views.numbers import rounded
from ebtui.tui.services import app_context
from ebtui.tui.widgets.cells import name_cell, number

if TYPE_CHECKING:
    from textual.screen import Screen

    from ebtui.core.usecases.report import Analysis, Table
    from ebtui.tui.widgets.pairwise_view import PairwiseView

__all__ = ["TRANSCRIPTS_UP_TO", "AnalysisCache", "AnalysisCancelled", "AnalysisView", "interval_track", "render_fit",
           "shown"]

TRACK = 30  # cells for the 1-10 scale


def shown(x: float) -> float:
    """A figure as this view shows it: rounded once, to the two decimals printed (a value that rounds to zero
    is 0.0, never -0.0). The chart places this value, never the raw one, so a dot and its printed figure agree
    and floating-point noise between machines (BLAS builds, CPUs) cannot move a dot by a cell."""
    return rounded(x, 2)


def _f(x: object, signed: bool = False) -> str:
    n = number(x)
    if n is None:
        return "  —  "
    v = shown(n)
    return numbers.signed(v) if signed else numbers.fixed(v)


def interval_track(low: float | None, mid: float | None, high: float | None, lo: float, hi: float,
                   width: int = TRACK) -> str:
    """A one-line picture of an interval on the lo..hi scale: ├──●──┤ (no interval: the point alone)."""
    cells = [" "] * width

    def pos(v: float) -> int:
        return max(0, min(width - 1, round((shown(v) - lo) / (hi - lo) * (width - 1))))

    if low is not None and high is not None:
        a, b = pos(low), pos(high)
        for i in range(a, b + 1):
            cells[i] = "─"
        cells[a], cells[b] = "├", "┤"
    if mid is not None:
        cells[pos(mid)] = "●"
    return "".join(cells)


def render_fit(tables: Mapping[str, Table]) -> Text:
    """The models, judges and family-preference tables as text (tables: key -> Table with as_dicts())."""
    out = Text()
    models = tables["models"].as_dicts() if "models" in tables else []
    judges = tables["judges"].as_dicts() if "judges" in tables else []
    if not models:
        return Text("No scores to analyse yet.", style="dim")
    w = max([len(str(m["model"])) for m in models] + [len(str(j["judge"])) for j in judges] + [5])
    w = min(w, 28)
    out.append("Models: judge-adjusted mean (95% interval), raw mean\n", style="bold")
    for m in sorted(models, key=lambda r: -(v if (v := number(r["mean"])) is not None else -1.0)):
        ci = f"[{_f(m['ci_low'])}, {_f(m['ci_high'])}]" if m["ci_low"] is not None else f"({m['interval_note']})"
        out.append(f"  {name_cell(m['model'], w)} ")
        out.append(interval_track(number(m["ci_low"]), number(m["mean"]), number(m["ci_high"]), 1.0, 10.0),
                   style="cyan")
        out.append(f" {_f(m['mean'])} {ci}  raw {_f(m['raw_mean'])}  n={m['n_rounds']} rounds, "
                   f"{m['n_dilemmas']} dilemmas\n")
    if judges:
        out.append("Judges: offset from the average judge (95% interval; negative = harsh)\n", style="bold")
        for j in judges:
            ci = f"[{_f(j['ci_low'], True)}, {_f(j['ci_high'], True)}]" if j["ci_low"] is not None \
                else f"({j['interval_note']})"
            out.append(f"  {name_cell(j['judge'], w)} ")
            out.append(interval_track(number(j["ci_low"]), number(j["offset"]), number(j["ci_high"]), -2.0, 2.0),
                       style="magenta")
            out.append(f" {_f(j['offset'], True)} {ci}  n={j['n']}\n")
    if "family_preference" in tables and tables["family_preference"].rows:
        f = tables["family_preference"].as_dicts()[0]
        ci = f"[{_f(f['ci_low'], True)}, {_f(f['ci_high'], True)}]" if f["ci_low"] is not None \
            else f"({f['interval_note']})"
        out.append("Same-family preference: ", style="bold")
        out.append(f"{_f(f['estimate'], True)} {ci}  n={f['n']} (judge, model) pairs\n")
    return out


class AnalysisCache(report.AnalysisCache):
    """The use case's cache (ebtui.core.usecases.report.AnalysisCache), run in the tournament screen's worker."""

    def publish(self, screen: Screen[None], tournament_id: str, got: report.AnalysisResult,
                *views: type[AnalysisView | PairwiseView]) -> None:
        """From the worker: show the fit on the screen's views of these types (the analysis view, the
        pairwise view); the pairwise view's compare screen shows transcripts, so it gets whole rounds while
        the tournament is small enough to read them (TRANSCRIPTS_UP_TO; above it the analysis view names the
        cap)."""
        rounds = report.tab_rounds(app_context(screen), tournament_id, got)
        for kind in views:
            view = screen.query_one(kind)
            if isinstance(view, AnalysisView):
                screen.app.call_from_thread(view.show, got.fit, got.omitted)
            else:
                screen.app.call_from_thread(view.show, got.fit, rounds)

    def run(self, screen: Screen[None], tournament_id: str, views: tuple[str, ...]) -> report.AnalysisResult | None:
        """`compute` in the screen's analysis worker: the step is shown in #analysis-coverage once the work
        has taken over a second; None when the worker was cancelled (ctrl+k, or a newer analysis)."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        started = time.monotonic()
        coverage = screen.query_one("#analysis-coverage", Static)
        name = strip_control(tournament_id)

        def progress(text: str) -> None:
            if time.monotonic() - started > 1.0:
                screen.app.call_from_thread(coverage.update, Text(f"Analysing {name}: {text}… (ctrl+k cancels)"))

        ctx = app_context(screen)
        try:
            return self.compute(ctx, tournament_id, ctx.models, views=views,
                                cancelled=lambda: worker.is_cancelled, progress=progress)
        except report.AnalysisCancelled:
            screen.app.call_from_thread(coverage.update, Text("Analysis cancelled."))
            return None


class AnalysisView(ScrollableContainer):
    """Shows one `ebtui.core.analysis.Analysis` (call `show`): one line per model and judge, never wrapped,
    in a box of at most a quarter of the screen that scrolls both ways, so the table under it stays on screen."""

    DEFAULT_CSS = """
    AnalysisView { height: auto; max-height: 25vh; padding: 0 1; overflow: auto; }
    AnalysisView > Static { width: auto; height: auto; text-wrap: nowrap; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None,
                 disabled: bool = False) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self.analysis: Analysis | None = None
        #: what the analysis left out, and why (shown under the fit)
        self.omitted: list[dict[str, str]] = []
        self._text = Static("", markup=False)

    def compose(self) -> ComposeResult:
        yield self._text

    def show(self, analysis: Analysis | None, omitted: list[dict[str, str]] | None = None) -> None:
        self.analysis = analysis
        self.omitted = list(omitted or [])
        text = render_fit(analysis.tables) if analysis is not None else Text("")
        for o in self.omitted:
            text.append(f"Not computed: {strip_control(o['section'])} ({strip_control(o['reason'])})\n", style="dim")
        text.rstrip()  # in place: no blank line under the last row
        self._text.update(text)
