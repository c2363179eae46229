"""Set up a tournament without writing a file: pick models, dilemmas, judge mode, repeats (and, optionally,
a target half-width and a budget); the predicted pairwise half-width, smallest detectable gap, calls and
cost update as you choose (through the use-case layer; nothing is called). Opened from the tournament
screen; dismisses with ("run", config), ("saved", path) or None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Label, Select, SelectionList, Static

from ebtui.core.safe_text import strip_control
from ebtui.core.usecases import tournament as tuc
from ebtui.core.usecases.tournament import Prediction, TournamentConfig
from ebtui.core.views import numbers as num
from ebtui.tui.keys import bindings
from ebtui.tui.services import Services, app_services
from ebtui.tui.widgets.footer import Footer

if TYPE_CHECKING:
    from ebtui.core.usecases.tournament import VarianceComponents

#: a set-up's tournament.toml fields: strings, numbers and lists of strings
ConfigValue = str | int | float | list[str]
#: what the set-up screen dismisses with: run this config, or the path it was saved to
SetupResult = tuple[Literal["run"], TournamentConfig] | tuple[Literal["saved"], str]

JUDGE_MODES = [("rotate: one judge an exchange", "rotate"), ("panel: every model not playing", "panel")]


def config_data(models: list[str], dilemmas: list[str], all_dilemmas: int, judges: str, repeats: int,
                target: float | None, budget: float | None, document: str | None) -> dict[str, ConfigValue]:
    """The tournament.toml fields of a set-up (what a file would hold)."""
    data: dict[str, ConfigValue] = {"name": "set-up-in-the-app", "models": models,
                            "dilemmas": "all" if len(dilemmas) == all_dilemmas else dilemmas,
                            "judges": judges, "rounds_per_pairing": repeats}
    if document:
        data["document"] = document
    if target is not None:
        data["target_half_width"] = target
    if budget is not None:
        data["budget_usd"] = budget
    return data


def toml_text(data: dict[str, ConfigValue]) -> str:
    """The fields as TOML (strings, numbers and lists of strings: JSON's spelling is TOML's)."""
    lines = ["# written by ebtui's tournament set-up (see tournament.example.toml for every field)"]
    lines += [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in data.items()]
    return "\n".join(lines) + "\n"


def prediction_text(p: Prediction) -> str:
    hw, gap = p.get("half_width"), p.get("detectable_gap")
    lines = [
        f"{p['dilemmas']} dilemmas × {p['pairings']} pairings × {p['repeats']} repeat(s), {p['judge_mode']} judging: "
        f"{p['rounds']} rounds, {p['calls']} model calls, estimated ${num.fixed(p['cost_usd'], 4)} list"
        + (f" / ${num.fixed(p['batch_cost_usd'], 4)} batch" if p.get("batch_cost_usd") is not None else "") + ".",
        ("Predicted half-width of a pairwise difference: ±" + (num.fixed(hw) if hw is not None else "—")
         + " points; smallest gap detectable (80% power, α = 0.05): "
         + (num.fixed(gap) if gap is not None else "— (fewer than 3 dilemmas)") + " points."),
        f"Variance components: {p['components']}.",
    ]
    if p.get("target") is not None:
        lines.append(f"Adaptive: waves are added after the first pass until every anytime-valid pairwise "
                     f"half-width is at most ±{num.shown(p['target'], 'g')} (at most 3 looks; never past the calls of the "
                     "uniform design the plan picks for that target).")
    if p.get("note"):
        lines.append(p["note"])
    return "\n".join(lines)


class TournamentSetupScreen(Screen[SetupResult | None]):
    BINDINGS = bindings("tournament_setup")
    DEFAULT_CSS = """
    #setup-lists { height: 1fr; }
    #setup-lists SelectionList { width: 1fr; height: 1fr; }
    #setup-options, #setup-save { height: auto; }
    #setup-options Input { width: 14; }
    #setup-options Select { width: 36; }
    #setup-options Label, #setup-save Label { padding: 1 1 0 1; }
    #setup-prediction { height: auto; min-height: 4; padding: 0 1; border: round $primary; }
    #setup-path { width: 1fr; }
    """

    @dataclass
    class Predicted(Message):
        key: str
        result: Prediction | None
        error: str

    @property
    def services(self) -> Services:
        return app_services(self)

    def __init__(self) -> None:
        super().__init__()
        self.prediction: Prediction | None = None
        self.error = ""
        self._key = ""
        self._components: VarianceComponents | None = None

    def compose(self) -> ComposeResult:
        names = tuc.model_names(self.services.context)
        dilemmas = self.services.dilemmas or []
        yield Header()
        with Horizontal(id="setup-lists"):
            yield SelectionList[str](*[(strip_control(n), n, i < 3) for i, n in enumerate(names)], id="setup-models")
            yield SelectionList[str](*[(strip_control(f"{d.id} — {d.title}"), d.id, i < 4)
                                       for i, d in enumerate(dilemmas)], id="setup-dilemmas")
        with Horizontal(id="setup-options"):
            yield Select(JUDGE_MODES, value="rotate", allow_blank=False, id="setup-judges")
            yield Label("repeats")
            yield Input("1", id="setup-repeats", type="integer")
            yield Label("target ±")
            yield Input("", placeholder="none", id="setup-target", type="number")
            yield Label("budget $")
            yield Input("", placeholder="none", id="setup-budget", type="number")
        yield Static("Pick at least two models and a dilemma.", id="setup-prediction", markup=False)
        with Horizontal(id="setup-save"):
            yield Input("tournament.toml", id="setup-path")
            yield Button("Save  ctrl+s", id="setup-save-button")
            yield Button("Run  ctrl+r", variant="primary", id="setup-run")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Set up a tournament"
        self._load_components()
        self.refresh_prediction()

    # -- the choices ---------------------------------------------------------------------------------------
    def choices(self) -> dict[str, ConfigValue]:
        """The tournament.toml fields chosen (raises ValueError naming a bad field)."""
        models = list(self.query_one("#setup-models", SelectionList).selected)
        dilemmas = list(self.query_one("#setup-dilemmas", SelectionList).selected)
        if len(models) < 2:
            raise ValueError("pick at least two models")
        if not dilemmas:
            raise ValueError("pick at least one dilemma")
        if self.query_one("#setup-judges", Select).value == "panel" and len(models) < 4:
            raise ValueError("panel judging needs at least four models (two play, two or more judge)")
        try:
            repeats = int(self.query_one("#setup-repeats", Input).value or "1")
        except ValueError:
            raise ValueError("repeats: a whole number") from None
        if not 1 <= repeats <= 1000:
            raise ValueError("repeats: from 1 to 1000")
        target = self._positive("#setup-target", "target")
        budget = self._positive("#setup-budget", "budget")
        doc = self.services.document
        return config_data(models, dilemmas, len(self.services.dilemmas or []),
                           str(self.query_one("#setup-judges", Select).value), repeats, target, budget,
                           str(doc) if doc else None)

    def _positive(self, selector: str, name: str) -> float | None:
        text = self.query_one(selector, Input).value.strip()
        if not text:
            return None
        try:
            v = float(text)
        except ValueError:
            raise ValueError(f"{name}: a number") from None
        if v <= 0:
            raise ValueError(f"{name}: more than 0")
        return v

    @on(SelectionList.SelectedChanged)
    @on(Select.Changed)
    @on(Input.Changed, "#setup-repeats, #setup-target, #setup-budget")
    def refresh_prediction(self) -> None:
        try:
            data = self.choices()
        except ValueError as exc:
            self.prediction, self.error = None, str(exc)
            self.query_one("#setup-prediction", Static).update(Text(f"Not yet: {exc}.", style="bold"))
            return
        self._key = json.dumps(data, sort_keys=True)
        self.query_one("#setup-prediction", Static).update(Text("Predicting…", style="dim"))
        self._predict(self._key, data)

    # -- workers -------------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="setup-components", exit_on_error=False)
    def _load_components(self) -> None:
        self._components = tuc.store_components(self.services.context)
        self.app.call_from_thread(self.refresh_prediction)

    @work(thread=True, exclusive=True, group="setup-predict", exit_on_error=False)
    def _predict(self, key: str, data: dict[str, ConfigValue]) -> None:
        try:
            result = tuc.predict(self.services.context, data, self._components)
        except Exception as exc:  # noqa: BLE001 - a message, never a crash
            self.post_message(self.Predicted(key, None, strip_control(str(exc))))
            return
        self.post_message(self.Predicted(key, result, ""))

    @on(Predicted)
    def _predicted(self, event: Predicted) -> None:
        if event.key != self._key:
            return  # an older choice's answer
        self.prediction, self.error = event.result, event.error
        shown = Text(prediction_text(event.result)) if event.result is not None else \
            Text(f"Cannot plan this: {event.error}", style="bold red")
        self.query_one("#setup-prediction", Static).update(shown)

    # -- leaving -------------------------------------------------------------------------------------------
    @on(Button.Pressed, "#setup-run")
    def action_run(self) -> None:
        if self.prediction is None:
            self.notify(self.error or "Wait for the plan.", severity="warning")
            return
        self.dismiss(("run", self.prediction["config"]))

    @on(Button.Pressed, "#setup-save-button")
    def action_save(self) -> None:
        try:
            data = self.choices()
        except ValueError as exc:
            self.notify(str(exc), severity="warning")
            return
        path = Path(self.query_one("#setup-path", Input).value.strip() or "tournament.toml").expanduser()
        try:
            path.write_text(toml_text(data), encoding="utf-8")
        except OSError as exc:
            self.notify(f"Cannot write {path}: {exc.strerror or exc}", severity="error")
            return
        self.dismiss(("saved", str(path)))

    def action_back(self) -> None:
        self.dismiss(None)


SETUP_LABEL = "the set-up"
