"""The TUI's batch status: each batch's state from the ledger on disk, the same after quitting and
reopening, untrusted ids shown as text; and its place on the tournament screen."""

from __future__ import annotations

import time
from pathlib import Path

from textual.app import App, ComposeResult

from ebtui.core.batch import BatchLedger
from ebtui.core.batch.ledger import BatchRecord, ItemRecord
from ebtui.tui.widgets.batch_status import BatchStatus, render_batches
from tests.support.factories import open_store


def _ledger(root: Path) -> BatchLedger:
    led = BatchLedger.open(root, "T9")
    now = time.time()
    led.batches["batch_a"] = BatchRecord(id="batch_a", model="gpt", provider="openai", label="w1", wave=1,
                                         submitted_at=now - 30, items=["k-0", "k2-0"], total=2,
                                         phases={"presentation": 2})
    led.batches["[red]boom\x1b[2J"] = BatchRecord(id="[red]boom\x1b[2J", model="claude", provider="anthropic",
                                                 label="w1", wave=1, submitted_at=now - 20, items=["k3-0"],
                                                 total=1, status="in_progress", phases={"presentation": 1})
    for cid in ("k-0", "k2-0", "k3-0"):
        led.items[cid] = ItemRecord(key=cid[:-2], model="gpt", batch="batch_a", phase="presentation")
    led.save()
    return led


class Host(App[None]):
    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        yield BatchStatus(interval_s=0.1, id="bs")

    def on_mount(self) -> None:
        self.query_one(BatchStatus).show(self.root, "T9")


async def test_batch_states_follow_the_ledger_and_survive_reopening(tmp_path: Path) -> None:
    led = _ledger(tmp_path)
    async with Host(tmp_path).run_test() as pilot:
        w = pilot.app.query_one(BatchStatus)
        await pilot.pause()
        text = str(w.render())
        assert w.display and "2 (2 pending)" in text
        assert "submitted" in text and "in progress" in text and "0/2 done" in text
        assert "\x1b" not in text and "[red]boom" in text  # escaped, shown as text
        # the batch ends with one failed item: the widget follows the file
        led.batches["batch_a"].status = "done"
        led.batches["batch_a"].completed, led.batches["batch_a"].failed = 1, 1
        led.batches["batch_a"].ended_at = time.time()
        led.save()
        await pilot.pause(0.4)
        text = str(w.render())
        assert "1/2 done, 1 failed" in text and "(1 pending)" in text
    # quit, reopen: the same states, read from the store
    async with Host(tmp_path).run_test() as pilot:
        await pilot.pause()
        text = str(pilot.app.query_one(BatchStatus).render())
        assert "1/2 done, 1 failed" in text and "in progress" in text


async def test_hidden_without_batches(tmp_path: Path) -> None:
    async with Host(tmp_path).run_test() as pilot:
        await pilot.pause()
        assert not pilot.app.query_one(BatchStatus).display
    assert render_batches([]).plain == ""


async def test_the_tournament_screen_shows_a_planned_tournaments_batches(tmp_path: Path) -> None:
    import asyncio

    from textual.widgets import Input

    from ebtui.config import load_models_config
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.tournament.config import load_tournament_config
    from ebtui.providers.registry import build_clients
    from ebtui.tui.app import EbtuiApp
    from ebtui.tui.screens.tournament import TournamentScreen
    from tests.support.tui_helpers import services_for

    models_toml = tmp_path / "models.toml"
    models_toml.write_text("".join(f'[models.{n}]\nprovider = "scripted"\n\n' for n in ("alpha", "beta", "gamma")))
    ids = [d.id for d in load_dilemmas()[:1]]
    toml = tmp_path / "tournament.toml"
    toml.write_text(f'name = "b"\nmodels = ["alpha", "beta"]\njudges = ["gamma"]\ndilemmas = ["{ids[0]}"]\n')
    store = open_store(tmp_path / "store")
    tid = load_tournament_config(toml).tournament_id()
    led = BatchLedger.open(store.root, tid)
    led.batches["batch_x"] = BatchRecord(id="batch_x", model="alpha", provider="openai", label="w", wave=2,
                                         submitted_at=time.time(), items=["a-0"], total=1, status="in_progress",
                                         phases={"response": 1})
    led.save()
    models = load_models_config(models_toml)
    services = services_for(store, lambda names: build_clients(models, names), ["alpha", "beta", "gamma"],
                            dilemmas=load_dilemmas(), models=models)
    app = EbtuiApp(services, load_user_themes=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = TournamentScreen()
        app.push_screen(screen)
        await pilot.pause()
        field = screen.query_one("#tournament-path", Input)
        field.value = str(toml)
        field.focus()
        await pilot.press("enter")
        for _ in range(200):
            if screen.state in ("planned", "idle"):
                break
            await asyncio.sleep(0.05)
        w = screen.query_one("#batch-status", BatchStatus)
        for _ in range(100):  # it follows the screen's plan on its own timer
            if w.display:
                break
            await asyncio.sleep(0.05)
        assert w.display and w.tournament_id == tid
        text = str(w.render())
        assert "alpha" in text and "wave 2" in text and "in progress" in text and "response" in text
