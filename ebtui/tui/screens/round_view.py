"""One saved round: its transcript phase by phase and its score card."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header, Markdown, Static, TabbedContent, TabPane

from ebtui.core.records import PHASE_ORDER, PhaseStatus, PhaseType, Round
from ebtui.core.safe_text import strip_control
from ebtui.core.usecases.rounds import load_round
from ebtui.core.views.phases import PHASE_LABELS, speaker_label, speaker_model
from ebtui.tui.keys import bindings
from ebtui.tui.screens.modals import ScoreEditModal
from ebtui.tui.services import app_context
from ebtui.tui.widgets.footer import Footer
from ebtui.tui.widgets.score_card import ScoreCard, ScoreGrid


def phase_heading(round_: Round, index: int, phase_type: PhaseType) -> Text:
    who, model = speaker_label(phase_type), strip_control(speaker_model(round_, phase_type))
    return Text.assemble((f"{index}. {PHASE_LABELS[phase_type]}", "bold"), f" — {who} · {model}")


class RoundScreen(Screen[None]):
    CSS_PATH = "round_view.tcss"
    BINDINGS = bindings("round")

    def __init__(self, round_id: str, round_: Round | None = None) -> None:
        super().__init__()
        self.round_id = round_id
        self.round = round_

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"Loading {self.round_id}…"), id="round-header")
        with TabbedContent(id="round-tabs"):
            with TabPane("Transcript", id="transcript"):
                yield VerticalScroll(id="transcript-body")
            with TabPane("Score card", id="card"):
                yield Static("", id="card-placeholder")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Round"
        if self.round is not None:
            self.call_later(self._show_round, self.round)
        else:
            self._load()

    @work(exclusive=True, group="round-load", exit_on_error=False)
    async def _load(self) -> None:
        try:  # the file is read in a thread: the UI never waits on a disk
            round_ = await asyncio.to_thread(load_round, app_context(self), self.round_id)
        except Exception as exc:
            self.notify(f"Could not open round {self.round_id}: {exc}", severity="error")
            return
        await self._show_round(round_)

    async def _show_round(self, round_: Round) -> None:
        r = self.round = round_
        when = r.timestamp.strftime("%Y-%m-%d %H:%M")
        self.query_one("#round-header", Static).update(Text.assemble(
            (strip_control(r.dilemma_title or r.dilemma_id), "bold"),
            f"  {r.id} · {when} · {r.status.value}",
            (f" · tournament {strip_control(r.tournament_id)}" if r.tournament_id else "", "dim"),
            (f"\nimported from {r.imported.runner}: {strip_control(r.imported.source_file)}"
             if r.imported else "", "dim"),
        ))
        body = self.query_one("#transcript-body", VerticalScroll)
        widgets: list[Widget] = []
        for i, pt in enumerate(PHASE_ORDER, 1):
            widgets.append(Static(phase_heading(r, i, pt), classes="transcript-heading"))
            phase = r.phase(pt)
            if phase is None:
                widgets.append(Static("not run", classes="transcript-note"))
            elif phase.status == PhaseStatus.COMPLETE:
                reused = f" (shared from {phase.reused_from})" if phase.reused_from else ""
                if reused:
                    widgets.append(Static(Text(reused.strip()), classes="transcript-note"))
                widgets.append(Markdown(strip_control(phase.response), open_links=False))
            else:
                note = f"{phase.status.value}: {phase.error}" if phase.error else phase.status.value
                widgets.append(Static(Text(strip_control(note)), classes="transcript-note -failed"))
        await body.remove_children()
        await body.mount_all(widgets)
        placeholder = self.query("#card-placeholder")
        if placeholder:
            await placeholder.remove()
            await self.query_one("#card", TabPane).mount(ScoreCard(r, app_context(self), edit_dialog=ScoreEditModal))
        else:
            self.query_one(ScoreCard).show(r)

    @on(ScoreCard.OverrideSaved)
    def _saved(self, event: ScoreCard.OverrideSaved) -> None:
        self.round = event.round

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "card" and self.query(ScoreGrid):
            self.query_one(ScoreGrid).focus()

    def action_back(self) -> None:
        self.dismiss(None)
