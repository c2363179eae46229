"""The Tournament screen's progress per pairing and per model (with an ETA), and its export: the report,
CSVs and an SVG screenshot under the store's reports folder (never ~/Downloads), and a message saying where."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.widgets import DataTable, Static

from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.store import ResultsStore
from ebtui.core.tournament.schedule import ScheduledRound
from ebtui.tui.screens.tournament_progress import Breakdown
from tests.support.tui_helpers import open_tournament_screen, plan_tournament, tournament_toml, wait_long


@dataclass
class P:
    finished: int
    already_done: int
    elapsed_s: float
    rounds_in_flight: int = 1


def test_breakdown_counts_pairings_and_models_and_estimates_from_the_pace() -> None:
    sched = [ScheduledRound("d1", "a", "b", 0, "c"), ScheduledRound("d1", "b", "a", 0, "c"),
             ScheduledRound("d2", "a", "b", 0, "c"), ScheduledRound("d2", "b", "a", 0, "c")]
    bd = Breakdown(sched)
    rows = {r[0]: r for r in bd.table(None)}
    assert set(rows) == {"a vs b", "b vs a", "model a", "model b", "model c"}
    assert rows["a vs b"][1] == "0/2" and rows["model c"][1] == "0/4" and rows["model a"][4] == "?"
    bd.mark(sched[0].schedule_key, True)
    bd.mark(sched[1].schedule_key, False)  # ended incomplete
    rows = {r[0]: r for r in bd.table(P(finished=2, already_done=0, elapsed_s=20.0))}
    # 10 s a round; the remaining rounds in schedule order: d2 a-b (1st), d2 b-a (2nd)
    assert rows["a vs b"][1:] == ("1/2", "██████░░░░░░", "", "10s")
    assert rows["b vs a"][1:] == ("0/2", "██████░░░░░░", "1", "20s")
    assert rows["model c"][1] == "1/4" and rows["model c"][4] == "20s"
    for k in (sched[2].schedule_key, sched[3].schedule_key):
        bd.mark(k, True)
    assert {r[0]: r[4] for r in bd.table(P(4, 0, 40.0))}["a vs b"] == "done"


async def test_progress_rows_and_export_under_the_store(tournament_app, store: ResultsStore, tmp_path: Path,
                                                        monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/Downloads: export must not need it
    ids = [d.id for d in load_dilemmas()[:2]]
    toml = tournament_toml(tmp_path / "tournament.toml", ids)
    app = tournament_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_tournament_screen(app, pilot)
        await plan_tournament(pilot, screen, toml)
        await pilot.press("ctrl+r")
        await wait_long(lambda: screen.state == "finished")
        await pilot.pause(0.3)
        table = screen.query_one("#progress-breakdown", DataTable)
        rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
        assert rows["alpha vs beta"][1] == "2/2" and rows["beta vs alpha"][1] == "2/2"
        assert rows["model gamma"][1] == "4/4" and rows["model alpha"][4] == "done"
        tid = screen.plan.tournament_id
        await wait_long(lambda: screen.analysed_id == tid)
        await pilot.press("ctrl+s")
        out = Path(store.root) / "reports" / tid
        await wait_long(lambda: (out / f"tournament-{tid}.svg").exists(), timeout=60)
        await pilot.pause(0.3)
        assert (out / "report.md").is_file() and list(out.glob("*.csv"))
        assert (out / f"tournament-{tid}.svg").read_text().lstrip().startswith("<svg")
        message = str(screen.query_one("#tournament-message", Static).render())
        assert str(out) in message and "Exported" in message
        assert not (tmp_path / "home" / "Downloads").exists()
