"""Pick a dilemma and three models, set the options, start a round."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Header, Label, OptionList, Static
from textual.widgets.option_list import Option

from ebtui.core.safe_text import strip_control
from ebtui.tui.keys import bindings
from ebtui.tui.services import app_services
from ebtui.tui.widgets.footer import Footer

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from ebtui.core.records import Dilemma
    from ebtui.core.usecases.play import RoundRequest
    from ebtui.tui.first_screen import Listed
    from ebtui.tui.widgets.dilemma_card import DilemmaCard

ROLES = (("team-a", "Team A"), ("team-b", "Team B"), ("judge", "Judge"))


class SetupScreen(Screen[None]):
    # styles: setup.tcss, read with the app's (EbtuiApp.CSS_PATH)
    BINDINGS = bindings("setup")

    @dataclass
    class RoundRequested(Message):
        request: RoundRequest

    @dataclass
    class DocumentLoaded(Message):
        path: Path | None
        dilemmas: list[Dilemma]
        initial: bool = False  # the app's own document, loaded after the first paint

    def __init__(self) -> None:
        super().__init__()
        self.dilemmas: list[Dilemma] = []
        self.document: Path | None = None
        self.document_loading = False  # the app's document is still being read
        #: the preview is made and filled once the list is on screen: its Markdown (Textual's Markdown,
        #: markdown-it and pygments: ~0.1 s of imports, then a widget per block) would otherwise hold up the
        #: first frame (benchmarks 5 and 7 time the list's first frame)
        self._preview_ready = False
        self._card_mounting = False
        #: the options column is filled after the first frame (`_mount_options`)
        self.options_ready = False
        self._options_mount: AwaitMount | None = None
        #: a ctrl+r came while the list the last start kept was on screen and its records were on their way
        self._start_when_loaded = False

    def compose(self) -> ComposeResult:
        services = app_services(self)
        yield Header()
        with Horizontal(id="setup-body"):
            with Vertical(id="dilemma-column"):
                yield Label("", id="document-label")
                yield OptionList(id="dilemma-list")
            with VerticalScroll(id="preview"):  # the preview's card comes after the first frame
                yield Static("" if services.dilemmas is not None else "Loading the dilemmas…",
                             id="preview-loading", markup=False)
            # the options (model pickers, checkbox, max tokens, Start) come in the frame after the list's first
            # one: their widgets (three Selects, each a list of its own) and their modules were a third of the
            # first frame's cost (benchmark 7); `options_ready` says when they are in
            yield Vertical(id="options")
        yield Footer()

    def _option_widgets(self) -> list[Widget]:
        from textual.validation import Integer
        from textual.widgets import Checkbox, Input, Select

        choices = app_services(self).choices
        widgets: list[Widget] = []
        for (role_id, role_label), preset in zip(ROLES, choices.seats, strict=True):
            widgets.append(Label(role_label, classes="option-label"))
            widgets.append(Select(
                [(self._model_label(n), n) for n in choices.names],
                value=preset if preset in choices.names else Select.NULL,
                allow_blank=False,
                compact=True,
                id=role_id,
            ))
        widgets += [
            Checkbox("Blind judge (hide names)", id="blind-judge", compact=True),
            Label("Max tokens per reply", classes="option-label"),
            Input(placeholder="model default", id="max-tokens", type="integer", compact=True,
                  validators=[Integer(minimum=1, maximum=1_000_000)], valid_empty=True),
            Static("", id="consistency-note", markup=False),
            Static("", id="setup-hint", markup=False),
            # docked at the bottom of its column: visible without scrolling, at 80x24 too
            Button("Start round  ctrl+r", variant="primary", id="start"),
        ]
        return widgets

    async def _mount_options(self) -> None:
        """The options column's widgets, once the list's first frame is up, or at once when a key needs them
        before (once)."""
        if self._options_mount is None:
            if not self.is_attached:
                return
            self._options_mount = self.query_one("#options").mount_all(self._option_widgets())
            await self._options_mount
            self.options_ready = True
            self._show_consistency_note()
        else:
            await self._options_mount  # done, or under way (a key came while the frame mounted them)

    @staticmethod
    def _new_card() -> DilemmaCard:
        from ebtui.tui.widgets.dilemma_card import DilemmaCard

        return DilemmaCard(id="dilemma-preview")

    def _card(self) -> DilemmaCard | None:
        cards = self.query("#dilemma-preview")
        return cast("DilemmaCard | None", cards.first() if cards else None)

    def _model_label(self, name: str) -> Text:
        """The name, then provider/model dimmed (once, and only what the name does not already say)."""
        detail = app_services(self).choices.details.get(name)
        label = Text(strip_control(name))
        if detail:
            label.append(f"  {strip_control(detail)}", style="dim")
        return label

    def on_mount(self) -> None:
        services = app_services(self)
        self.sub_title = "New round"
        self.query_one("#dilemma-list", OptionList).focus()
        # two refreshes, as for the preview: the first lays the list out, the second paints it
        self.call_after_refresh(self.call_after_refresh, self._mount_options)
        if services.dilemmas is None:  # paint first, read the document in a thread
            self.document_loading = True
            if services.listed:  # as the last start saw them: listed now, their records read after the frame
                self._show_listed(services.document, services.listed)
            else:
                self.query_one("#document-label", Label).update(Text("Loading dilemmas…", style="bold"))
            # after the first frame: the reading thread would otherwise compete with the first paint
            self.call_after_refresh(self.load_document, services.document, True)
        else:
            self._show_document(services.document, services.dilemmas)

    def _show_listed(self, path: Path | None, listed: Sequence[Listed | Dilemma]) -> None:
        """The document's label and its dilemmas in the list (the first highlighted), unless the list shows
        these already (the records of what the first frame listed: the highlight stays where the user put it)."""
        name = path.name if path else "built-in dilemmas"
        self.query_one("#document-label", Label).update(
            Text(f"{strip_control(name)} · {len(listed)} dilemmas", style="bold"))
        labels = [self._dilemma_label(d) for d in listed]
        options = self.query_one("#dilemma-list", OptionList)
        if [o.prompt for o in options.options] == labels:
            return
        options.clear_options()
        options.add_options(Option(label, id=f"d{i}") for i, label in enumerate(labels))
        if labels:
            options.highlighted = 0

    def _show_document(self, path: Path | None, dilemmas: list[Dilemma]) -> None:
        self.document = path
        self.dilemmas = dilemmas
        self._show_listed(path, dilemmas)
        self._show_preview()
        self._show_consistency_note()

    def _show_preview(self) -> None:
        """The highlighted dilemma in the preview; before the first frame, once it is up."""
        if not self._preview_ready:  # two refreshes: the first lays the list out, the second paints it
            self.call_after_refresh(self.call_after_refresh, self._first_preview)
            return
        card = self._card()
        if card is not None:
            card.show(self.selected_dilemma)

    async def _first_preview(self) -> None:
        if not self._preview_ready:
            self._preview_ready = True
            await self._ensure_card()
            self._show_preview()

    async def _ensure_card(self) -> None:
        """The preview's card in place of its placeholder (once, whoever asks first)."""
        if self._card() is not None or self._card_mounting:
            return
        self._card_mounting = True
        try:
            await self.query("#preview-loading").remove()
            await self.query_one("#preview").mount(self._new_card())
        finally:
            self._card_mounting = False

    @staticmethod
    def _dilemma_label(d: Listed | Dilemma) -> Text:
        label = Text(f"{strip_control(d.id)}  {strip_control(d.title)}")
        if not d.has_consistency_case:
            label.append("  (no consistency case)", style="italic dim")
        return label

    @property
    def selected_dilemma(self) -> Dilemma | None:
        index = self.query_one("#dilemma-list", OptionList).highlighted
        if index is None or not 0 <= index < len(self.dilemmas):
            return None
        return self.dilemmas[index]

    def _show_consistency_note(self) -> None:
        if not self.options_ready:  # shown when the options come in (_mount_options)
            return
        d = self.selected_dilemma
        note = "" if d is None or d.has_consistency_case else \
            "No consistency case: this round skips the consistency test."
        widget = self.query_one("#consistency-note", Static)
        widget.update(note)
        widget.display = bool(note)

    @on(OptionList.OptionHighlighted, "#dilemma-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_preview()
        self._show_consistency_note()
        self.query_one("#preview").scroll_home(animate=False)

    @on(OptionList.OptionSelected, "#dilemma-list")
    async def _selected(self) -> None:
        await self._mount_options()  # at once, if a key came before the options' frame
        self.query_one("#team-a").focus()

    @on(Button.Pressed, "#start")
    async def action_start(self) -> None:
        from textual.widgets import Checkbox, Input, Select

        await self._mount_options()  # at once, if ctrl+r came before the options' frame
        if self.document_loading and app_services(self).listed:
            # the list the last start kept is on screen, its records on their way (a fraction of a second):
            # the key starts the round once they are in (_document_loaded), rather than asking for a second press
            self._start_when_loaded = True
            return
        dilemma = self.selected_dilemma
        if dilemma is None:
            self.notify("The dilemmas are still loading." if self.document_loading else "Pick a dilemma first.",
                        severity="warning")
            return
        models = {}
        for role_id, role_label in ROLES:
            value = self.query_one(f"#{role_id}", Select).value
            if value is Select.NULL:
                self.notify(f"Pick a model for {role_label}.", severity="warning")
                return
            models[role_id] = str(value)
        max_field = self.query_one("#max-tokens", Input)
        raw = max_field.value.strip()
        check = max_field.validate(raw)
        if check is not None and not check.is_valid:
            self.notify("Max tokens: a whole number of 1 or more, or empty for the model's default.",
                        severity="error")
            return
        from ebtui.core.usecases.play import RoundRequest

        request = RoundRequest(
            dilemma=dilemma,
            team_a=models["team-a"],
            team_b=models["team-b"],
            judge=models["judge"],
            blind_judge=self.query_one("#blind-judge", Checkbox).value,
            max_tokens=int(raw) if raw else None,
            document=str(self.document or ""),
        )
        self.post_message(self.RoundRequested(request))

    def action_open_document(self) -> None:
        from ebtui.tui.screens.modals import OpenDocumentModal

        def opened(path: Path | None) -> None:
            if path is not None:
                self.load_document(None if str(path) in ("", ".") else path)

        self.app.push_screen(OpenDocumentModal(self.document), opened)

    @work(thread=True, exclusive=True, group="document", exit_on_error=False)
    def load_document(self, path: Path | None, initial: bool = False) -> None:
        """Read a .docx off the UI thread; a bad file is a notification naming it, never a crash."""
        services = app_services(self)
        import ebtui.tui.widgets.dilemma_card  # noqa: F401  (imported here, off the UI thread, for the preview)

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                dilemmas = services.load_document(path)
        except Exception as exc:  # DocumentError carries the loader's clear message; anything else too
            self.app.call_from_thread(self.notify, strip_control(str(exc)) or repr(exc),
                                      title="Could not open the document", severity="error", timeout=10)
            if initial:
                self.post_message(self.DocumentLoaded(path, [], initial=True))
            return
        if not dilemmas:
            self.app.call_from_thread(self.notify, f"{path or 'the built-in document'}: no dilemmas found",
                                      severity="error")
            if initial:
                self.post_message(self.DocumentLoaded(path, [], initial=True))
            return
        if caught:
            first = strip_control(str(caught[0].message))
            more = f" (and {len(caught) - 1} more)" if len(caught) > 1 else ""
            self.app.call_from_thread(self.notify, first + more, title="Document warnings", severity="warning",
                                      timeout=8)
        self.post_message(self.DocumentLoaded(path, dilemmas, initial=initial))
        if initial and path is None and services.listed is not None:
            self._confirm_first_screen(dilemmas)

    def _confirm_first_screen(self, dilemmas: list[Dilemma]) -> None:
        """In the document's thread, when the first frame came from what an earlier start kept, once the app's
        warm-up is over: read the models (pydantic, after the frame) and keep what the screen shows for the next
        start (rewritten if an input the key did not see had changed it). A models file made bad since the start:
        a notification."""
        from ebtui.tui import first_screen

        warmed = getattr(self.app, "warmed", None)
        if warmed is not None:  # after the app's warm-up (its index read ahead for F3): nothing here is urgent
            warmed.wait(10)
        services = app_services(self)
        try:
            shown = first_screen.remember(services.context, dilemmas)
        except Exception as exc:  # noqa: BLE001 - ConfigError names the file and field; anything else too
            self.app.call_from_thread(self.notify, strip_control(str(exc)) or repr(exc),
                                      title="Cannot read the models", severity="error", timeout=10)
            return
        if shown is not None and shown.choices != services.choices and not self.options_ready:
            services.choices = shown.choices  # read by the options column when it is mounted

    @on(DocumentLoaded)
    async def _document_loaded(self, event: DocumentLoaded) -> None:
        services = app_services(self)
        services.dilemmas, services.document = event.dilemmas, event.path
        self.document_loading = False
        if self._preview_ready:
            await self._ensure_card()
        self._show_document(event.path, event.dilemmas)
        if self._start_when_loaded:
            self._start_when_loaded = False
            self.call_later(self.action_start)
        if not event.initial:
            self.notify(f"Loaded {len(event.dilemmas)} dilemmas.")
