"""Tournaments: pick a tournament.toml (or set one up), read its plan, run it, watch progress, read the
analysis. The screen only drives the core (planning and the analysis in threads, the runner in an async
worker); progress is shown by a 10 Hz timer. Cancelling saves rounds in flight as they stand; starting the
same file again resumes it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import (
    Button,
    DataTable,
    Header,
    Input,
    ProgressBar,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import Worker, WorkerState

from ebtui.core.safe_text import strip_control
from ebtui.core.usecases import tournament as tuc
from ebtui.core.usecases.report import tournament_report
from ebtui.core.usecases.tournament import (
    AdaptiveMessage,
    DryRunEstimate,
    PlannedTournament,
    Progress,
    RoundCompleted,
    RoundNotRun,
    SavedTournament,
    TournamentConfig,
    TournamentFinished,
    TournamentPlan,
    TournamentRun,
)
from ebtui.errors import UsageError
from ebtui.tui.keys import bindings
from ebtui.tui.screens.tournament_progress import Breakdown, new_breakdown
from ebtui.tui.screens.tournament_setup import SETUP_LABEL, SetupResult, TournamentSetupScreen
from ebtui.tui.screens.tournament_text import (
    SPACE,
    adaptive_text,
    cell_text,
    dilemma_bars,
    plan_rows,
    plan_text,
    progress_text,
    role_bars,
)
from ebtui.tui.services import app_context
from ebtui.tui.widgets.analysis_view import AnalysisCache, AnalysisView
from ebtui.tui.widgets.bar_chart import BarChart
from ebtui.tui.widgets.batch_status import BatchStatus
from ebtui.tui.widgets.footer import Footer
from ebtui.tui.widgets.pairwise_view import PairwiseView

if TYPE_CHECKING:
    from ebtui.core.usecases.context import AppContext
    from ebtui.core.usecases.report import Table
    from ebtui.core.usecases.tournament import ModelClient

__all__ = ["TournamentScreen", "cell_text", "progress_text"]  # (the text functions: tournament_text)

DEFAULT_FILE = "tournament.toml"
VIEWS = [("with overrides", "effective"), ("as judged", "as_judged")]
PLAN_COLUMNS = ("model", "presenting", "responding", "judging", "calls", "in tokens", "out tokens", "est. cost")
SAVED_COLUMNS = (("Name", 22), ("Id", 16), ("Status", 12), ("Rounds", 9), ("Models", 30), ("Created", 16))


class TournamentScreen(Screen[None]):
    CSS_PATH = "tournament.tcss"
    BINDINGS = bindings("tournament")

    @dataclass
    class PlanReady(Message):
        """A plan read (from a file, or from a set-up) and ready to start."""

        planned: PlannedTournament

    @dataclass
    class PlanFailed(Message):
        path: str
        error: str

    @dataclass
    class AnalysisReady(Message):
        tournament_id: str
        rounds: int
        tables: dict[str, list[Table]]

    @dataclass
    class SavedLoaded(Message):
        rows: list[SavedTournament]

    def __init__(self) -> None:
        super().__init__()
        #: idle, planning, planned, running, cancelling, finished, failed
        self.state = "idle"
        self.plan: TournamentPlan | None = None
        self.plan_path: str | None = None
        self.estimate: DryRunEstimate | None = None
        self.runner: TournamentRun | None = None
        self.progress: Progress | None = None
        self.breakdown: Breakdown | None = None
        self.finished: TournamentFinished | None = None  # the event that ended the last run
        self.failures: list[str] = []
        self.analysis: dict[str, list[Table]] | None = None  # view -> tables
        self._analysis_cache = AnalysisCache()  # results until the data change
        self.analysed_id: str | None = None
        self.analysed_rounds = 0
        self.saved: list[SavedTournament] = []
        self._shown_progress: Progress | None = None
        self._from_setup = False  # the plan came from the set-up screen, not from a file

    # -- layout ---------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        default = DEFAULT_FILE if Path(DEFAULT_FILE).is_file() else ""
        yield Header()
        with Horizontal(id="tournament-file"):
            yield Input(default, placeholder="path to a tournament.toml — enter reads its plan",
                        id="tournament-path")
            yield Button("Plan", id="tournament-load")
            yield Button("Start  ctrl+r", variant="primary", id="tournament-start", disabled=True)
            yield Button("Cancel  ctrl+x", variant="error", id="tournament-cancel", disabled=True)
        yield Static("", id="tournament-message", markup=False)
        with TabbedContent(id="tournament-tabs", initial="tab-plan"):
            with TabPane("Plan", id="tab-plan"):
                yield Static("Give a tournament.toml and press enter to see what it would run "
                             "(ctrl+n sets one up without a file).", id="plan-summary", markup=False)
                yield DataTable(id="plan-table", cursor_type="none", zebra_stripes=True)
            with TabPane("Progress", id="tab-progress"):
                yield ProgressBar(id="tournament-progress", show_eta=False)
                yield Static("Not started.", id="progress-stats", markup=False)
                yield Static("", id="adaptive-status", markup=False)  # an adaptive run: half-width vs target
                yield DataTable(id="progress-breakdown", cursor_type="none", zebra_stripes=True)
                yield Static("", id="progress-failures", markup=False)
                yield BatchStatus(id="batch-status")
            with TabPane("Analysis", id="tab-analysis"):
                yield AnalysisView(id="analysis-fit")
                yield PairwiseView(id="analysis-pairwise")
                with Horizontal(id="analysis-pickers"):
                    yield Select([], prompt="table", id="analysis-table-select", allow_blank=True)
                    yield Select(VIEWS, value="effective", allow_blank=False, id="analysis-view-select")
                yield Static("Finish a tournament, or pick a saved one (Saved tab).", id="analysis-coverage",
                             markup=False)
                yield DataTable(id="analysis-table", zebra_stripes=True)
                yield Static("", id="analysis-notes", markup=False)
            with TabPane("Charts", id="tab-charts"):
                with VerticalScroll(id="charts"):
                    yield BarChart("Mean score per model and role", minimum=0.0, maximum=10.0,
                                   empty_text="No analysis yet.", id="chart-model-role")
                    yield BarChart("Mean score per dilemma (hardest first)", minimum=0.0, maximum=10.0,
                                   empty_text="No analysis yet.", id="chart-dilemmas")
            with TabPane("Saved", id="tab-saved"):
                yield Static("Loading…", id="saved-count", markup=False)
                yield DataTable(id="saved-tournaments", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Tournament"
        plan_table = self.query_one("#plan-table", DataTable)
        plan_table.add_columns(*PLAN_COLUMNS)
        saved = self.query_one("#saved-tournaments", DataTable)
        for label, width in SAVED_COLUMNS:
            saved.add_column(label, width=width)
        breakdown = self.query_one("#progress-breakdown", DataTable)
        breakdown.add_columns("pairing / model", "done", "progress", "not complete", "ETA")
        self.query_one("#adaptive-status", Static).display = False
        self.set_interval(0.1, self._show_progress)
        self.action_reload_saved()
        path = self.query_one("#tournament-path", Input)
        path.focus()
        if path.value:
            self.load_plan(path.value)

    def _message(self, text: str, *, error: bool = False) -> None:
        line = self.query_one("#tournament-message", Static)
        line.update(Text(strip_control(text), style="bold red" if error else ""))

    def _set_state(self, state: str) -> None:
        self.state = state
        running = state in ("running", "cancelling")
        self.query_one("#tournament-start", Button).disabled = running or self.plan is None
        self.query_one("#tournament-cancel", Button).disabled = state != "running"
        self.query_one("#tournament-load", Button).disabled = running
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":
            return self.state not in ("running", "cancelling", "planning")
        if action == "cancel_tournament":
            return self.state == "running"
        return True

    # -- the plan -------------------------------------------------------------------------------------
    @on(Input.Submitted, "#tournament-path")
    @on(Button.Pressed, "#tournament-load")
    def _plan_requested(self) -> None:
        if self.state in ("running", "cancelling"):
            return
        self.load_plan(self.query_one("#tournament-path", Input).value)

    def load_plan(self, path: str) -> None:
        self._from_setup = False
        path = path.strip()
        if not path:
            self._message("Give the path of a tournament.toml.", error=True)
            return
        self.plan = None
        self._set_state("planning")
        self._message(f"Reading {path}…")
        self._plan_worker(path)

    @work(thread=True, exclusive=True, group="tournament-plan", exit_on_error=False)
    def _plan_worker(self, path: str) -> None:
        try:
            planned = tuc.plan_file(self.context, path)
        except UsageError as exc:
            self.post_message(self.PlanFailed(path, str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - anything else is still a message, never a crash
            self.post_message(self.PlanFailed(path, f"{path}: {type(exc).__name__}: {exc}"))
            return
        self.post_message(self.PlanReady(planned))

    @on(PlanFailed)
    def _plan_failed(self, event: PlanFailed) -> None:
        self.plan = None
        self.estimate = None
        self._set_state("idle")
        self._message(event.error, error=True)
        self.query_one("#plan-summary", Static).update(Text("No plan: " + strip_control(event.error)))
        self.query_one("#plan-table", DataTable).clear()
        self.notify(strip_control(event.error), title="Cannot read the tournament", severity="error", timeout=10)

    @on(PlanReady)
    def _plan_ready(self, event: PlanReady) -> None:
        got = event.planned
        self.plan, self.plan_path, self.estimate = got.plan, got.path, got.estimate
        self._set_state("planned")
        summary = plan_text(got.plan, got.estimate, self.context.store_root, got.saved)
        self.query_one("#plan-summary", Static).update(Text(summary))
        table = self.query_one("#plan-table", DataTable)
        table.clear()
        table.add_rows(plan_rows(got.estimate))
        self.query_one("#tournament-tabs", TabbedContent).active = "tab-plan"
        self._message(f"Plan of {got.path}: {got.estimate.rounds} rounds. ctrl+r starts it.")
        if got.path == SETUP_LABEL:  # set up in the app and asked to run: run it
            self.action_start()

    # -- running --------------------------------------------------------------------------------------
    @on(Button.Pressed, "#tournament-start")
    def action_start(self) -> None:
        if self.state in ("running", "cancelling", "planning"):
            return
        current = self.query_one("#tournament-path", Input).value.strip()
        from_setup = self.plan_path == SETUP_LABEL and self._from_setup
        if self.plan is None or (current != self.plan_path and not from_setup):
            self.load_plan(current)
            self.notify("Read the plan first, then start.", severity="information")
            return
        try:
            # building the clients checks names and keys: a problem is a message, not a crash
            clients = self.context.clients(self.plan.config.all_model_names())
        except Exception as exc:  # noqa: BLE001
            self._message(str(exc), error=True)
            self.notify(strip_control(str(exc)), title="Cannot start the tournament", severity="error", timeout=10)
            return
        self.progress = None
        self._shown_progress = None
        self.finished = None
        self.failures = []
        self.query_one("#progress-failures", Static).update("")
        rounds = self.estimate.rounds if self.estimate is not None else 0
        self.query_one("#tournament-progress", ProgressBar).update(total=rounds, progress=0)
        self.breakdown = new_breakdown(self.plan, self.context)
        self.query_one("#progress-stats", Static).update("Starting…")
        self.query_one("#tournament-tabs", TabbedContent).active = "tab-progress"
        self._set_state("running")
        self._message(f"Running {self.plan.tournament_id} — ctrl+x cancels (what is done is saved).")
        self._run(self.plan, clients)

    @work(exclusive=True, group="tournament", exit_on_error=False)
    async def _run(self, plan: TournamentPlan, clients: dict[str, ModelClient]) -> None:
        run = tuc.start(self.context, plan, clients, progress_interval_s=0.1)
        self.runner = run
        try:
            async for event in run.events():
                if not isinstance(event, AdaptiveMessage):
                    self.progress = event.progress
                if isinstance(event, RoundCompleted | RoundNotRun) and self.breakdown is not None:
                    ok = isinstance(event, RoundCompleted) and event.round.status.value == "complete"
                    self.breakdown.mark(event.scheduled.schedule_key, ok)
                    self._shown_progress = None  # redraw the rows too
                if isinstance(event, RoundCompleted) and event.round.status.value != "complete":
                    self._failure(f"{event.scheduled.schedule_key}: {event.round.status.value}"
                                  + (f" — {event.round.error}" if event.round.error else ""))
                elif isinstance(event, RoundNotRun):
                    self._failure(f"{event.scheduled.schedule_key}: not run — {event.reason}")
                elif isinstance(event, TournamentFinished):
                    self._tournament_finished(event)
                elif isinstance(event, AdaptiveMessage):  # an adaptive run's waves and stop
                    self._adaptive(event)
        finally:
            await run.aclose()

    def _failure(self, text: str) -> None:
        self.failures.append(SPACE.sub(" ", strip_control(text))[:200])
        shown = self.failures[-5:]
        more = f"… and {len(self.failures) - 5} more\n" if len(self.failures) > 5 else ""
        self.query_one("#progress-failures", Static).update(Text(more + "\n".join(shown)))

    def _show_progress(self) -> None:
        p = self.progress
        if p is None or p is self._shown_progress:
            return
        self._shown_progress = p
        self.query_one("#tournament-progress", ProgressBar).update(total=max(1, p.total), progress=p.finished)
        self.query_one("#progress-stats", Static).update(progress_text(p))
        if self.breakdown is not None:
            self.breakdown.fill(self.query_one("#progress-breakdown", DataTable), p)


    def _tournament_finished(self, event: TournamentFinished) -> None:
        self.finished = event
        self.progress = event.progress
        self._show_progress()
        t = event.tournament
        status = t.status.value
        cancelled = self.runner is not None and self.runner.cancelled
        if status == "complete":
            text = f"Tournament {t.id} complete: {event.progress.done}/{event.progress.total} rounds."
        elif cancelled:
            text = (f"Cancelled: tournament {t.id} saved as {status} ({t.note}). ctrl+r resumes it "
                    "— complete rounds are kept.")
        else:
            text = f"Tournament {t.id} {status}: {t.note}. ctrl+r resumes it."
        self._set_state("finished")
        self._message(text, error=status != "complete")
        self.notify(strip_control(text), severity="information" if status == "complete" else "warning")
        self.action_reload_saved()
        self.show_analysis(t.id)

    def action_cancel_tournament(self) -> None:
        if self.state == "running" and self.runner is not None:
            self.runner.cancel()
            self._set_state("cancelling")
            self._message("Cancelling — rounds in flight are saved as they stand…")

    @on(Button.Pressed, "#tournament-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel_tournament()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "tournament-plan" and event.state == WorkerState.ERROR:
            self._plan_failed(self.PlanFailed("", str(event.worker.error)))
        elif event.worker.group == "tournament-analysis" and event.state == WorkerState.ERROR:
            error = strip_control(str(event.worker.error))
            coverage = self.query_one("#analysis-coverage", Static)
            coverage.add_class("-error")
            coverage.update(Text(f"Analysis failed: {error}"))
            self.notify(error, title="Analysis failed", severity="error", timeout=10)
        elif event.worker.group == "tournament" and event.state == WorkerState.ERROR:
            error = strip_control(str(event.worker.error))
            self._set_state("failed")
            self._message(f"The tournament stopped: {error}", error=True)
            self.notify(error, title="Tournament failed", severity="error", timeout=10)
            self.action_reload_saved()
        elif event.worker.group == "tournament" and event.state == WorkerState.SUCCESS and self.state in (
                "running", "cancelling"):
            self._set_state("finished")  # ended without a finish event (cannot happen with the runner)

    # -- analysis -------------------------------------------------------------------------------------
    def show_analysis(self, tournament_id: str) -> None:
        coverage = self.query_one("#analysis-coverage", Static)
        coverage.remove_class("-error")
        coverage.update(Text(f"Analysing {strip_control(tournament_id)}…"))
        self._analyse(tournament_id)

    @work(thread=True, exclusive=True, group="tournament-analysis", exit_on_error=False)
    def _analyse(self, tournament_id: str) -> None:
        got = self._analysis_cache.run(self, tournament_id, tuple(v for _, v in VIEWS))  # progress, cancel
        if got is not None:
            self._analysis_cache.publish(self, tournament_id, got, AnalysisView, PairwiseView)
            self.post_message(self.AnalysisReady(tournament_id, got[0], got[1]))

    def action_cancel_analysis(self) -> None:
        self.workers.cancel_group(self, "tournament-analysis")

    @on(AnalysisReady)
    def _analysis_ready(self, event: AnalysisReady) -> None:
        self.analysis = event.tables
        self.analysed_id = event.tournament_id
        self.analysed_rounds = event.rounds
        picker = self.query_one("#analysis-table-select", Select)
        keep = picker.value
        options = [(strip_control(t.title), t.key) for t in event.tables["effective"]]
        with self.prevent(Select.Changed):
            picker.set_options(options)
            keys = [k for _, k in options]
            if keys:
                picker.value = keep if keep in keys else keys[0]
        self.render_analysis()

    def current_tables(self) -> list[Table]:
        if self.analysis is None:
            return []
        view = self.query_one("#analysis-view-select", Select).value
        return self.analysis.get(str(view), self.analysis["effective"])

    def current_table(self) -> Table | None:
        key = self.query_one("#analysis-table-select", Select).value
        return next((t for t in self.current_tables() if t.key == key), None)

    def render_analysis(self) -> None:
        tables = self.current_tables()
        if not tables:
            return
        table = self.current_table() or tables[0]
        grid = self.query_one("#analysis-table", DataTable)
        grid.clear(columns=True)
        grid.add_columns(*table.columns)
        grid.add_rows([tuple(cell_text(c, v) for c, v in zip(table.columns, row, strict=True))
                       for row in table.rows])
        view = "with overrides" if table.view == "effective" else "as judged" if table.view == "as_judged" else \
            "reads no scores"
        head = (f"{strip_control(self.analysed_id or '')}: {self.analysed_rounds} rounds · "
                f"{strip_control(table.title)} ({view}) · {len(table.rows)} rows")
        cover = f"\n{table.coverage.describe()}" if table.coverage is not None else ""
        self.query_one("#analysis-coverage", Static).remove_class("-error").update(Text(head + cover))
        notes = table.notes or ([] if table.rows else ["No rows: this tournament has no data for this table."])
        self.query_one("#analysis-notes", Static).update(Text("\n".join(strip_control(n) for n in notes),
                                                              style="dim"))
        self._render_charts(tables)

    def _render_charts(self, tables: Sequence[Table]) -> None:
        by_key = {t.key: t for t in tables}
        view = "with overrides" if tables[0].view == "effective" else "as judged"
        if "model_comparison" in by_key:
            self.query_one("#chart-model-role", BarChart).set_data(role_bars(by_key["model_comparison"]),
                title=f"Mean score per model and role (1-10, mean of the criteria; {view})")
        if "dilemma_difficulty" in by_key:
            self.query_one("#chart-dilemmas", BarChart).set_data(
                dilemma_bars(by_key["dilemma_difficulty"]),
                title=f"Mean score per dilemma, hardest first (every model, both roles; {view})")

    @on(Select.Changed, "#analysis-table-select")
    @on(Select.Changed, "#analysis-view-select")
    def _analysis_picked(self) -> None:
        self.render_analysis()

    # -- saved tournaments ----------------------------------------------------------------------------
    def action_reload_saved(self) -> None:
        self._load_saved()

    @work(thread=True, exclusive=True, group="tournament-saved", exit_on_error=False)
    def _load_saved(self) -> None:
        rows: list[SavedTournament] = []
        try:
            rows = list(reversed(tuc.list_saved(self.context).rows))  # newest first
        except Exception as exc:  # noqa: BLE001 - an unreadable store is a message
            self.app.call_from_thread(self.notify, strip_control(f"Could not list tournaments: {exc}"),
                                      severity="error")
        self.post_message(self.SavedLoaded(rows))

    @on(SavedLoaded)
    def _saved_loaded(self, event: SavedLoaded) -> None:
        self.saved = event.rows
        table = self.query_one("#saved-tournaments", DataTable)
        table.clear()
        for t, done, status in event.rows:
            table.add_row(
                Text(strip_control(t.name)), Text(t.id), Text(status), Text(f"{done}/{t.total_rounds}"),
                Text(strip_control(", ".join(t.models))), Text(t.created.strftime("%Y-%m-%d %H:%M")),
            )
        count = (f"{len(event.rows)} saved tournament(s) — enter shows one's analysis." if event.rows
                 else "No saved tournaments yet.")
        self.query_one("#saved-count", Static).update(count)

    @on(DataTable.RowSelected, "#saved-tournaments")
    def _saved_picked(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self.saved):
            tid = self.saved[event.cursor_row][0].id
            self.query_one("#tournament-tabs", TabbedContent).active = "tab-analysis"
            self.show_analysis(tid)

    # -- set-up without a file (ctrl+n), adaptive runs, export (ctrl+s) -------------------------------------
    @property
    def context(self) -> AppContext:
        return app_context(self)

    def _adaptive(self, event: AdaptiveMessage) -> None:
        status = self.query_one("#adaptive-status", Static)
        status.display = True
        status.update(adaptive_text(event))

    def action_setup_tournament(self) -> None:
        if self.state not in ("running", "cancelling"):
            self.app.push_screen(TournamentSetupScreen(), self._set_up)

    def _set_up(self, result: SetupResult | None) -> None:
        """The set-up's result: a saved file is read back; a config to run is planned, then run."""
        if not result:
            return
        if result[0] == "saved":
            self.query_one("#tournament-path", Input).value = result[1]
            self.notify(f"Saved {strip_control(result[1])}.")
            self.load_plan(result[1])
            return
        self._from_setup = True
        self._set_state("planning")
        self._setup_worker(result[1])

    @work(thread=True, exclusive=True, group="tournament-plan", exit_on_error=False)
    def _setup_worker(self, config: TournamentConfig) -> None:
        self.post_message(self.PlanReady(tuc.planned(self.context, config, SETUP_LABEL)))

    def action_export(self) -> None:
        """Write the report (report.md, charts, one CSV per table) and an SVG screenshot of this screen
        under <store>/reports/<tournament>/ (never ~/Downloads), and say where."""
        tid = self.analysed_id or (self.finished.tournament.id if self.finished is not None else None)
        if tid is None:
            self.notify("Nothing to export yet: finish a tournament, or pick one in Saved.", severity="warning")
            return
        out = self.context.store_root / "reports" / tid
        self._message(f"Exporting {tid} to {out}…")
        self._export(tid, out)

    @work(thread=True, exclusive=True, group="tournament-export", exit_on_error=False)
    def _export(self, tid: str, out: Path) -> None:
        try:
            report, csvs = tournament_report(self.context, tid, out)
            shot = self.app.call_from_thread(self.app.save_screenshot, f"tournament-{tid}.svg", str(out))
        except Exception as exc:  # noqa: BLE001 - one message naming the place, never a crash
            text = f"Export to {out} failed: {strip_control(str(exc)) or type(exc).__name__}"
            self.app.call_from_thread(self._message, text, error=True)
            self.app.call_from_thread(self.notify, text, severity="error", timeout=10)
            return
        text = f"Exported to {out}: {report.name}, {csvs} CSV files, {Path(shot).name}"
        self.app.call_from_thread(self._message, text)
        self.app.call_from_thread(self.notify, text, title="Export", timeout=10)

    # -- leaving --------------------------------------------------------------------------------------
    def action_back(self) -> None:
        running = self.state in ("running", "cancelling")
        if running and not self.app.is_screen_installed(self):
            # a screen that is not installed is removed when left, and its run with it
            self.notify("A tournament is running: cancel it (ctrl+x) first.", severity="warning")
            return
        if running:
            self.notify("The tournament keeps running; come back to it from the command palette or its key.")
        self.dismiss(None)
