"""Small dialogs: edit a score, open a document, help."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import Integer
from textual.widgets import Button, Input, Label, Markdown, Static

from ebtui.core.records import CRITERION_LABELS, Team
from ebtui.tui.keys import bindings


class ScoreEditModal(ModalScreen[tuple[int | None, str] | None]):
    """Set one score by hand (1–10) with a note; an empty value clears the override."""

    CSS_PATH = "modals.tcss"
    BINDINGS = bindings("modal")

    def __init__(self, team: Team, criterion: str, parsed: int | None, current: int | None, note: str = "") -> None:
        super().__init__()
        self.team = team
        self.criterion = criterion
        self.parsed = parsed
        self.current = current
        self.initial_note = note

    def compose(self) -> ComposeResult:
        judge = "missing (the judge gave no score)" if self.parsed is None else str(self.parsed)
        with Vertical(id="dialog"):
            yield Label(Text(f"Team {self.team.upper()} · {CRITERION_LABELS[self.criterion]}", style="bold"))
            yield Label(Text(f"Judge's score: {judge}"), id="parsed-value")
            yield Input(
                value="" if self.current is None else str(self.current),
                placeholder="1–10 (empty clears the override)",
                validators=[Integer(minimum=1, maximum=10, failure_description="a whole number from 1 to 10")],
                valid_empty=True,
                id="score-value",
            )
            yield Input(value=self.initial_note, placeholder="note: why (required)", id="score-note")
            yield Static("", id="score-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Save", variant="primary", id="save")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#score-value", Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        # the rules the CLI applies too
        from ebtui.core.usecases.review import OverrideError, check_correction

        field = self.query_one("#score-value", Input)
        raw = field.value.strip()
        note = self.query_one("#score-note", Input).value.strip()
        try:
            req = check_correction(self.team, self.criterion, raw or None, note, clear=not raw)
        except OverrideError as exc:
            self.query_one("#score-error", Static).update(str(exc))
            (self.query_one("#score-note", Input) if "note" in str(exc) else field).focus()
            return
        self.dismiss((req.value, req.note))


class OpenDocumentModal(ModalScreen[Path | None]):
    """Ask for the path of a dilemma .docx."""

    CSS_PATH = "modals.tcss"
    BINDINGS = bindings("modal")

    def __init__(self, current: Path | None = None) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text("Open a dilemma document (.docx)", style="bold"))
            yield Input(value=str(self.current or ""), placeholder="path/to/dilemmas.docx", id="doc-path")
            with Horizontal(classes="buttons"):
                yield Button("Open", variant="primary", id="open")
                yield Button("Built-in set", id="builtin")
                yield Button("Cancel", id="cancel")

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#builtin")
    def _builtin(self) -> None:
        self.dismiss(Path(""))

    @on(Input.Submitted)
    @on(Button.Pressed, "#open")
    def _open(self) -> None:
        raw = self.query_one("#doc-path", Input).value.strip()
        if not raw:
            self.notify("Type the path of a .docx file.", severity="warning")
            return
        self.dismiss(Path(raw).expanduser())


HELP_TEXT = """\
# ebtui

An Ethics Bowl for language models: Team A presents, Team B responds, Team A rebuts and faces a
consistency test, and a judge scores both teams on seven criteria.

## Everywhere
| key | action |
|---|---|
| `F1` / `?` | this help |
| `ctrl+p` | command palette (new round, browse results, tournament, open document, switch theme, help) |
| `F2` | new round (setup) |
| `F3` | browse saved results |
| `F4` | tournaments: plan, run, cancel/resume, analysis and charts |
| `ctrl+t` | switch theme |
| `ctrl+q` | quit |

## Setup
| key | action |
|---|---|
| `↑` `↓` | pick a dilemma (its full text shows beside the list) |
| `tab` | move between the list, the model pickers and the options |
| `ctrl+o` | open another dilemma document (.docx) |
| `ctrl+r` | start the round |

## Live round
Three panes stream as the models answer: Team A (presentation, rebuttal, consistency test), Team B
(response) and the judge. The consistency test runs alongside the response. Retries and failures show
in place.

| key | action |
|---|---|
| `x` | cancel the round (what finished is saved; the round is marked incomplete) |
| `s` | open the score card (when the round is over) |
| `escape` | back to setup (when the round is over) |

## Score card
| key | action |
|---|---|
| `enter` / `e` | set the selected score by hand (1–10, with a note; empty clears) |
| `r` | show or hide the judge's raw reply |
| `escape` | back |

## Results
Type in the filters to narrow the table (model, dilemma, judge, tournament), pick a status or
needs-review; `enter` opens a round (transcript and score card); `ctrl+l` reloads from the store.

## Tournament
| key | action |
|---|---|
| `enter` | read the plan of the tournament file (dry run: rounds, calls, tokens, cost) |
| `ctrl+r` | start the tournament (or resume it, if it was saved before) |
| `ctrl+x` | cancel (rounds in flight are saved; start again to resume) |
| `ctrl+l` | reload the list of saved tournaments |

Themes: built-in ones plus TOML/JSON files in `./themes` or your config dir's `ebtui/themes`.
"""


class HelpModal(ModalScreen[None]):
    CSS_PATH = "modals.tcss"
    BINDINGS = bindings("help")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Markdown(HELP_TEXT, open_links=False)

    def action_close(self) -> None:
        self.dismiss(None)
