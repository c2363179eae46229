"""The Tournament screen: plan a tournament.toml, run it with scripted models, cancel and resume it, read
the analysis tables and charts; a bad file is a message. One snapshot from a fixed, pre-built tournament."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, ProgressBar, Select, TabbedContent

from ebtui.core.analysis import analyse
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import (
    RoundStatus,
    TournamentStatus,
)
from ebtui.core.store import ResultsStore
from ebtui.tui.screens.tournament import TournamentScreen, cell_text, progress_text
from ebtui.tui.widgets.bar_chart import Bar, BarChart, bar_cells
from tests.support.tui_helpers import open_tournament_screen, plan_tournament, tournament_toml, wait_long

SIZE = (120, 40)


async def test_run_a_tournament_and_read_its_analysis(tournament_app, store: ResultsStore, tmp_path: Path) -> None:
    ids = [d.id for d in load_dilemmas()[:2]]
    toml = tournament_toml(tmp_path / "tournament.toml", ids, rounds_per_pairing=2)
    app = tournament_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tournament_screen(app, pilot)
        await plan_tournament(pilot, screen, toml)
        assert screen.state == "planned"
        est = screen.estimate
        assert est.rounds == 8  # 2 dilemmas x 2 orderings x 2 repeats, one judge each
        plan_table = screen.query_one("#plan-table", DataTable)
        assert plan_table.row_count == 3  # alpha, beta, gamma
        summary = str(screen.query_one("#plan-summary").render())
        assert "8 rounds" in summary and f"{est.total_calls} model calls" in summary

        await pilot.press("ctrl+r")
        assert screen.query_one(TabbedContent).active == "tab-progress"
        await wait_long(lambda: screen.state == "finished")
        bar = screen.query_one("#tournament-progress", ProgressBar)
        assert bar.total == 8 and bar.progress == 8
        assert screen.progress.done == 8 and screen.progress.finished == screen.progress.total
        assert "8/8 rounds" in str(screen.query_one("#progress-stats").render())
        tid = screen.plan.tournament_id
        assert store.load_tournament(tid).status == TournamentStatus.COMPLETE

        # the analysis is computed from the store and shown; compare with analysis.analyse
        await wait_long(lambda: screen.analysed_id == tid)
        await pilot.pause()
        rounds = store.load_rounds(tournament=tid)
        assert len(rounds) == 8
        assert screen.query_one(TabbedContent).active == "tab-progress"  # the user stays where they are
        grid = screen.query_one("#analysis-table", DataTable)
        for view, effective in (("effective", True), ("as_judged", False)):
            screen.query_one("#analysis-view-select", Select).value = view
            for expected in analyse(rounds, effective=effective):
                screen.query_one("#analysis-table-select", Select).value = expected.key
                await pilot.pause()
                assert grid.row_count == len(expected.rows), expected.key
                assert [str(c.label) for c in grid.columns.values()] == expected.columns
        # the first rows of the model comparison, as numbers formatted from analyse's own values
        screen.query_one("#analysis-table-select", Select).value = "model_comparison"
        await pilot.pause()
        first = analyse(rounds)[0].rows[0]
        assert [str(c) for c in grid.get_row_at(0)] == [str(cell_text(c, v)) for c, v in
                                                         zip(analyse(rounds)[0].columns, first, strict=True)]
        chart = screen.query_one("#chart-model-role", BarChart)
        assert len(chart.bars) == 4  # two models x two roles
        assert {(b.label, b.series) for b in chart.bars} == {(m, r) for m in ("alpha", "beta")
                                                             for r in ("presenting", "responding")}
        assert len(screen.query_one("#chart-dilemmas", BarChart).bars) == 2
        assert [t.id for t, _, _ in screen.saved] == [tid]


async def test_a_bad_file_is_a_message_naming_file_and_field(tournament_app, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('models = ["alpha", "beta"]\njudges = ["gamma"]\nconcurrency = "lots"\n')
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('models = ["alpha", "nobody"]\njudges = ["gamma"]\n')
    app = tournament_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tournament_screen(app, pilot)
        for path, words in ((bad, ("bad.toml", "field concurrency")),
                            (unknown, ("unknown.toml", "field models", "nobody")),
                            (tmp_path / "missing.toml", ("missing.toml", "no such file"))):
            await plan_tournament(pilot, screen, path)
            assert screen.state == "idle" and screen.plan is None
            message = str(screen.query_one("#tournament-message").render())
            assert all(w in message for w in words), message
            assert any(all(w in n.message for w in words) for n in app._notifications)
            # nothing can start without a plan
            assert screen.query_one("#tournament-start").disabled
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert screen.state in ("idle", "planning") and screen.runner is None


async def test_cancel_saves_incomplete_and_start_resumes(tournament_app, store: ResultsStore,
                                                          tmp_path: Path) -> None:
    ids = [d.id for d in load_dilemmas()[:3]]
    toml = tournament_toml(tmp_path / "tournament.toml", ids, concurrency=1)
    app = tournament_app(latency=0.05)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tournament_screen(app, pilot)
        await plan_tournament(pilot, screen, toml)
        tid = screen.plan.tournament_id
        await pilot.press("ctrl+r")
        await wait_long(lambda: screen.progress is not None and screen.progress.done >= 1)
        await pilot.press("ctrl+x")
        await wait_long(lambda: screen.state == "finished")
        saved = store.load_tournament(tid)
        assert saved.status == TournamentStatus.INCOMPLETE and "cancelled" in saved.note
        done_before = screen.finished.progress.done
        assert 1 <= done_before < 6
        assert "resumes" in str(screen.query_one("#tournament-message").render())

        await pilot.press("ctrl+r")  # the same file again: resumes, keeping the complete rounds
        await wait_long(lambda: screen.state == "finished" and screen.finished.progress.total == 6
                          and screen.finished.tournament.status == TournamentStatus.COMPLETE)
        assert screen.finished.progress.already_done == done_before
        rounds = store.load_rounds(tournament=tid)
        assert len(rounds) == 6 and all(r.status == RoundStatus.COMPLETE for r in rounds)


async def test_f4_and_the_palette_open_it_and_a_run_survives_leaving(tournament_app, store: ResultsStore,
                                                                      tmp_path: Path) -> None:
    ids = [d.id for d in load_dilemmas()[:2]]
    toml = tournament_toml(tmp_path / "tournament.toml", ids, concurrency=1)  # ./tournament.toml: filled in
    app = tournament_app(latency=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f4")
        screen = app.screen
        assert isinstance(screen, TournamentScreen)
        assert screen.query_one("#tournament-path", Input).value == "tournament.toml"
        await wait_long(lambda: screen.state == "planned")  # the default file's plan is read at once
        assert screen.plan.config.source.resolve() == toml.resolve()
        await pilot.press("ctrl+r")
        await wait_long(lambda: screen.progress is not None)
        await pilot.press("escape")  # leave while it runs: it goes on
        assert not isinstance(app.screen, TournamentScreen) and screen.state == "running"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"tournament")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_long(lambda: app.screen is screen)
        await wait_long(lambda: screen.state == "finished")
        assert store.load_tournament(screen.plan.tournament_id).status == TournamentStatus.COMPLETE
        assert screen.finished.progress.already_done == 0  # one uninterrupted run


def test_bar_chart_draws_eighths_and_missing_values() -> None:
    assert bar_cells(5.0, 0.0, 10.0, 10) == "█████"
    assert bar_cells(10.0, 0.0, 10.0, 4) == "████"
    assert bar_cells(0.5625, 0.0, 10.0, 16) == "▉"  # 0.9 of a cell
    assert bar_cells(-3, 0.0, 10.0, 8) == ""
    chart = BarChart("t", maximum=10.0)
    chart.set_data([Bar("alpha\x1b[31m", 7.5, "presenting"), Bar("alpha\x1b[31m", None, "responding"),
                    Bar("[bold]beta[/]", 2.0, "presenting")])
    lines = [line.plain for line in chart.chart_lines(60)]
    assert lines[0] == "t"
    label_w = len("[bold]beta[/]")  # the longest label
    assert lines[1].startswith("alpha".ljust(label_w) + " presenting █") and lines[1].endswith(" 7.50")
    assert "\x1b" not in "".join(lines)
    # the label is printed once per group; a missing value is said, never drawn as a zero bar
    assert lines[2].startswith(" " * label_w + " responding missing") and lines[2].endswith("—")
    assert lines[3].startswith("[bold]beta[/] presenting ███")  # markup in a label stays text
    assert all(len(line) <= 60 for line in lines)
    assert lines[-1].strip().startswith("0") and lines[-1].endswith("10")


def test_progress_line_and_cells() -> None:
    from ebtui.core.tournament import Progress

    p = Progress(total=16, done=10, incomplete=1, already_done=2, rounds_in_flight=3, calls_in_flight=4,
                 input_tokens=12_345, output_tokens=678, cost_usd=0.0123, elapsed_s=75.0, eta_s=30.0,
                 budget_usd=1.0, budget_stopped=False)
    line = progress_text(p)
    assert line.startswith("11/16 rounds · 10 complete (2 from before) · 1 not complete · 4 calls in flight")
    assert "12k in / 678 out tokens" in line and "$0.0123 of $1.00" in line and "1m15s elapsed · ETA 30s" in line
    assert str(cell_text("mean", 7.125)) == "7.13" == str(cell_text("mean", 7.125 - 1e-12)) and str(cell_text("pearson_p", 0.000123)) == "0.000123"
    assert str(cell_text("n", None)) == "—"
    long = cell_text("evidence", "[red]x[/red]\x1b[2J " + "word " * 40)
    assert str(long).startswith("[red]x[/red] word") and len(str(long)) == 80 and "\x1b" not in str(long)
