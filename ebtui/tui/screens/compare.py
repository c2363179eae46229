"""Two models on the same dilemma, side by side: each one's answers in a judged round (the round where they
debated each other, when there is one), the scores each got per criterion and the difference, and the judge's
reasons; above them, the judge-adjusted difference over every dilemma both played (`ebtui compare`).

Model output is untrusted: every text passes through `strip_control` and is drawn as plain Text (no markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Select, Static

from ebtui.core.records import CRITERIA, Round
from ebtui.core.safe_text import strip_control
from ebtui.core.usecases.compare import DilemmaSides, Side, compare_rounds, dilemma_sides
from ebtui.core.views import numbers as num
from ebtui.core.views.phases import PHASE_LABELS
from ebtui.tui.keys import bindings
from ebtui.tui.widgets.cells import number
from ebtui.tui.widgets.footer import Footer


def _signed(v: object) -> str:
    n = number(v)
    return "—" if n is None else num.signed(n)


def score_table(sides: DilemmaSides) -> Text:
    """Per criterion: the first model's score, the second's and the difference (first − second) on this
    dilemma."""
    a = strip_control(sides.a.model if sides.a else "A")
    b = strip_control(sides.b.model if sides.b else "B")
    w = max(len(c) for c in CRITERIA)
    out = Text()
    out.append(f"{'criterion':<{w}}  {a[:14]:>14}  {b[:14]:>14}  {'difference':>10}\n", style="bold")
    diffs = sides.differences()
    for c in CRITERIA:
        va = sides.a.scores.get(c) if sides.a else None
        vb = sides.b.scores.get(c) if sides.b else None
        d = diffs[c]
        out.append(f"{c:<{w}}  {('—' if va is None else str(va)):>14}  {('—' if vb is None else str(vb)):>14}  ")
        out.append(f"{('—' if d is None else '0' if d == 0 else f'{d:+d}'):>10}\n",
                   style="green" if d is not None and d > 0 else "red" if d is not None and d < 0 else "")
    return out


def side_text(side: Side | None) -> Text:
    if side is None:
        return Text("No judged round.", style="dim")
    r: Round = side.round
    seat = "Team A" if side.team == "a" else "Team B"
    out = Text()
    out.append(f"{strip_control(side.model)}", style="bold")
    out.append(f" · {seat} · judged by {strip_control(r.judge_model)} · round {strip_control(r.id)}\n", style="dim")
    out.append("Judge's reasons\n", style="bold underline")
    out.append((strip_control(side.reason) or "(the judge gave no reason for this team)") + "\n\n")
    for phase, text in side.texts:
        label = next((v for k, v in PHASE_LABELS.items() if k.value == phase), phase)
        out.append(f"{label}\n", style="bold underline")
        out.append(strip_control(text) + "\n\n")
    out.rstrip()
    return out


class CompareScreen(Screen[None]):
    BINDINGS = bindings("compare")
    DEFAULT_CSS = """
    CompareScreen #compare-summary { height: auto; padding: 0 1; }
    CompareScreen #compare-dilemma { width: 60; }
    CompareScreen #compare-scores { height: auto; padding: 0 1; }
    CompareScreen #compare-sides { height: 1fr; }
    CompareScreen .compare-side { width: 1fr; border: round $panel; padding: 0 1; }
    """

    def __init__(self, rounds: Sequence[Round], a: str, b: str, *,
                 families: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.rounds = list(rounds)
        self.a, self.b = a, b
        self.families = families
        self.sides: list[DilemmaSides] = dilemma_sides(self.rounds, a, b)
        self.result: Mapping[str, object] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"{strip_control(self.a)} − {strip_control(self.b)}: computing the judge-adjusted "
                          "difference…"), id="compare-summary")
        options = [(strip_control(f"{s.dilemma}: {s.title}" + ("" if s.met else " (separate rounds)")), i)
                   for i, s in enumerate(self.sides)]
        yield Select(options, prompt="dilemma", allow_blank=not options, id="compare-dilemma",
                     value=0 if options else Select.BLANK)
        yield Static("", id="compare-scores")
        with Horizontal(id="compare-sides"):
            with VerticalScroll(classes="compare-side", id="compare-a-pane"):
                yield Static("", id="compare-a")
            with VerticalScroll(classes="compare-side", id="compare-b-pane"):
                yield Static("", id="compare-b")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Compare"
        if self.sides:
            self.show_dilemma(0)
        else:
            self.query_one("#compare-scores", Static).update(Text(
                f"{strip_control(self.a)} and {strip_control(self.b)} have no judged round on a common dilemma.",
                style="dim"))
        self._compute()

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def _compute(self) -> None:
        try:
            got = compare_rounds(self.rounds, self.a, self.b, self.families)
        except ValueError as exc:
            self.app.call_from_thread(self._summary, Text(strip_control(str(exc)), style="red"))
            return
        self.result = got
        self.app.call_from_thread(self._summary, summary_text(got))

    def _summary(self, text: Text) -> None:
        self.query_one("#compare-summary", Static).update(text)

    def show_dilemma(self, i: int) -> None:
        s = self.sides[i]
        self.query_one("#compare-scores", Static).update(score_table(s))
        self.query_one("#compare-a", Static).update(side_text(s.a))
        self.query_one("#compare-b", Static).update(side_text(s.b))

    @on(Select.Changed, "#compare-dilemma")
    def _picked(self, event: Select.Changed) -> None:
        if isinstance(event.value, int):
            self.show_dilemma(event.value)

    def _step(self, by: int) -> None:
        if not self.sides:
            return
        pick = self.query_one("#compare-dilemma", Select)
        cur = pick.value if isinstance(pick.value, int) else 0
        pick.value = (cur + by) % len(self.sides)

    def action_next_dilemma(self) -> None:
        self._step(1)

    def action_previous_dilemma(self) -> None:
        self._step(-1)

    def action_back(self) -> None:
        self.dismiss(None)


def summary_text(got: Mapping[str, object]) -> Text:
    """The overall judge-adjusted difference and the per-criterion ones, as `ebtui compare` prints them."""
    a, b = strip_control(str(got["a"])), strip_control(str(got["b"]))
    out = Text()
    out.append(f"{a} − {b}", style="bold")
    out.append(f", judge-adjusted, on the {got['n_dilemmas']} dilemmas both played: ")
    if got["diff"] is None:
        out.append(f"— ({strip_control(str(got['reason']))})")
        return out
    out.append(_signed(got["diff"]), style="bold")
    if got["ci_low"] is not None:
        out.append(f" [{_signed(got['ci_low'])}, {_signed(got['ci_high'])}]")
    elif got["reason"]:
        out.append(f" (no interval: {strip_control(str(got['reason']))})", style="dim")
    criteria = got["criteria"]
    rows: list[Mapping[str, object]] = list(criteria) if isinstance(criteria, list) else []
    crit = "  ".join(f"{str(c['criterion']).split('_')[0]} {_signed(c['diff'])}" for c in rows)
    out.append(f"\nper criterion: {crit}", style="dim")
    return out
