"""Each provider batch of a tournament and its state: submitted, in progress, done, failed items.

Read from the tournament's batch ledger (`<store>/batches/<id>.json`) on a timer, not from a running
process, so it shows the same after quitting and reopening the app — also while a `ebtui tournament
--batch` in another terminal (or a killed one, waiting for `--resume`) owns the batches. Hidden when the
tournament has no batches. Ids and names are shown as plain, escaped text.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ebtui.core.safe_text import strip_control
from ebtui.tui.services import app_context
from ebtui.tui.widgets.cells import number

#: each state's colour, a component class of BatchStatus (theme variables: see its DEFAULT_CSS)
STATE_CLASS = {
    "submitted": "batch-status--waiting",
    "in_progress": "batch-status--running",
    "done": "batch-status--done",
    "failed": "batch-status--failed",
    "expired": "batch-status--failed",
    "cancelled": "batch-status--cancelled",
}


def _age(ts: float | None, now: float) -> str:
    if not ts:
        return ""
    s = max(0, int(now - ts))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def render_batches(rows: Sequence[Mapping[str, object]], now: float | None = None,
                   styles: dict[str, Style] | None = None) -> Text:
    """The batches as text (rows as ebtui.core.usecases.tournament.batch_rows gives them); `styles` maps a
    state to its style (the widget's theme colours), none: unstyled."""
    now = time.time() if now is None else now
    styles = styles or {}
    out = Text()
    if not rows:
        return out
    pending = sum(1 for r in rows if r["state"] in ("submitted", "in_progress"))
    out.append(f"Provider batches: {len(rows)} ({pending} pending)\n", style="bold")
    for r in rows:
        state = str(r["state"])
        out.append(f"  {strip_control(str(r['model']))[:24]:<24} wave {r['wave']!s:<3} ")
        out.append(f"{state.replace('_', ' '):<12}", style=styles.get(state, ""))
        done = f"{r['completed']}/{r['total']} done"
        failed = f", {r['failed']} failed" if r["failed"] else ""
        retried = f" ({r['retried']} retried)" if r.get("retried") else ""
        took = _age(number(r["submitted_at"]), number(r["ended_at"]) or now)
        out.append(f" {done}{failed}{retried}  {strip_control(str(r['phases']))[:40]}  {took}  ")
        out.append(strip_control(str(r["id"]))[:48], style="dim")
        out.append("\n")
    return out


class BatchStatus(Static):
    """`show(store_root, tournament_id)` starts watching a tournament's batches. On a screen with a `plan`
    (its `tournament_id`) and an `analysed_id` — the tournament screen — it follows whichever of the two
    changed last by itself, reading the store from the app's services."""

    COMPONENT_CLASSES = set(STATE_CLASS.values())
    DEFAULT_CSS = """
    BatchStatus { height: auto; max-height: 14; overflow-y: auto; }
    BatchStatus > .batch-status--waiting { color: $warning; }
    BatchStatus > .batch-status--running { color: $accent; }
    BatchStatus > .batch-status--done { color: $success; }
    BatchStatus > .batch-status--failed { color: $error; text-style: bold; }
    BatchStatus > .batch-status--cancelled { color: $error; }
    """

    def __init__(self, *, interval_s: float = 2.0, name: str | None = None, id: str | None = None,
                 classes: str | None = None, disabled: bool = False) -> None:
        super().__init__("", markup=False, name=name, id=id, classes=classes, disabled=disabled)
        self.interval_s = interval_s
        self.store_root: Path | None = None
        self.tournament_id: str | None = None
        self.rows: Sequence[Mapping[str, object]] = []
        self._seen: tuple[str | None, str | None] = (None, None)

    def on_mount(self) -> None:
        self.display = False
        self.set_interval(self.interval_s, self.refresh_rows)

    def show(self, store_root: str | Path, tournament_id: str) -> None:
        self.store_root, self.tournament_id = Path(store_root), tournament_id
        self.refresh_rows()

    def _follow_screen(self) -> None:
        screen = self.screen
        plan = getattr(screen, "plan", None)
        seen = (getattr(plan, "tournament_id", None), getattr(screen, "analysed_id", None))
        for new, old in zip(seen, self._seen, strict=True):
            if new and new != old:
                self.store_root, self.tournament_id = app_context(self).store_root, new
        self._seen = seen

    def refresh_rows(self) -> None:
        self._follow_screen()
        if self.store_root is None or self.tournament_id is None:
            return
        from ebtui.core.usecases.tournament import batch_rows

        self.rows = batch_rows(self.store_root, self.tournament_id)
        self.display = bool(self.rows)
        styles = {state: self.get_component_rich_style(cls, partial=True) for state, cls in STATE_CLASS.items()}
        self.update(render_batches(self.rows, styles=styles))
