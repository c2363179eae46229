"""Hostile model output — Rich markup, ANSI/OSC escapes (colour, cursor moves, OSC 52 clipboard, OSC 8
links), NUL and BEL bytes, a very long line — stays inert text in the TUI, the CLI and the report."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from textual.geometry import Region

from ebtui.cli import cli
from ebtui.core.dilemmas import load_dilemmas
from ebtui.core.records import CRITERIA
from ebtui.core.store import ResultsStore
from ebtui.providers.scripted import ScriptedClient, ScriptRule
from tests.support.factories import open_store
from tests.support.reliability_helpers import run_ebtui

LONG = "W" * 6000
HOSTILE = (
    "[bold red]RED ALERT[/bold red] and [link=https://evil.example/x]click me[/link] "
    "\x1b[31mansi red\x1b[0m \x1b[2J\x1b[Hcursor home \x1b[5;10Hmoved "
    "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x07clipboard "
    "\x1b]8;;https://evil.example/osc8\x1b\\osc8 link\x1b]8;;\x1b\\ "
    "nul\x00byte bell\x07ring csi8\x9b31mx del\x7f \r overwritten\n"
    f"{LONG}\n\n"
    "A [bold red]consequentialist[/bold red] reading \x1b[31mweighs\x1b[0m expected welfare, while a "
    "deontological\x00 reading asks whether anyone is used merely as a means \x1b]52;c;eA==\x07.\n\n"
    "Principle: [italic]keep the log true[/italic].\nConclusion: [blink]act[/blink] honestly."
)
VERDICT_SCORES = {c: 6 for c in CRITERIA}
HOSTILE_JUDGMENT = json.dumps({
    "team_a": {"scores": VERDICT_SCORES, "justification": "[bold red]A[/bold red] \x1b[41mbg\x1b[0m\x00"},
    "team_b": {"scores": VERDICT_SCORES, "justification": "[link=https://evil.example]B[/link] \x1b]52;c;eA==\x07"},
    "overall_analysis": HOSTILE,
})
#: bytes that must never reach a terminal or a report: ESC, NUL, BEL, 8-bit CSI/OSC, DEL
FORBIDDEN = re.compile("[\x00\x07\x1b\x7f\x9b\x9d]")


def hostile_models_toml(names: list[str], judge: str) -> str:
    lines = []
    for n in names:
        reply = HOSTILE_JUDGMENT if n == judge else HOSTILE
        lines += [f"[models.{n}]", 'provider = "scripted"', f"rules = [{{match = \"\", reply = {json.dumps(reply)}}}]"]
    return "\n".join(lines) + "\n"


def assert_inert(text: str, where: str) -> None:
    bad = FORBIDDEN.search(text)
    assert bad is None, f"{where}: control character {bad.group()!r} at {bad.start()}"
    assert "[bold red]RED ALERT[/bold red]" in text, f"{where}: the literal markup is not shown"


def test_cli_run_and_rounds_show_print_inert_text(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(hostile_models_toml(["alpha", "beta", "judge"], "judge"))
    store = tmp_path / "store"
    d0 = load_dilemmas()[0].id
    res = run_ebtui("run", "--dilemma", d0, "--team-a", "alpha", "--team-b", "beta", "--judge", "judge",
                    "--models", str(models), "--store", str(store))
    assert res.returncode == 0, res.stderr
    assert_inert(res.stdout, "ebtui run stdout")
    assert not FORBIDDEN.search(res.stderr)
    assert "[link=https://evil.example/x]click me[/link]" in res.stdout
    assert LONG in res.stdout.replace("\n", "")  # the long line is kept (wrapped or not), not dropped
    rid = ResultsStore(store).query()[0]["id"]
    # the round is saved as the model said it (the record is the truth; only display is sanitised)
    saved = ResultsStore(store).load_round(rid)
    assert saved.phase("presentation").response == HOSTILE  # type: ignore[union-attr]
    for args in (["rounds", "show", rid], ["rounds", "show", rid, "--prompts"], ["rounds", "list"]):
        out = CliRunner().invoke(cli, [*args, "--store", str(store)])
        assert out.exit_code == 0, out.output
        raw = out.stdout_bytes.decode("utf-8")
        assert not FORBIDDEN.search(raw), args
        if args[1] == "show":
            assert_inert(raw, " ".join(args))
            assert "A" in raw and "overall" in raw.lower()
    # --json is for programs: JSON-escaped, so still no raw control byte reaches the terminal
    out = CliRunner().invoke(cli, ["rounds", "show", rid, "--json", "--store", str(store)])
    assert out.exit_code == 0
    assert not FORBIDDEN.search(out.stdout_bytes.decode("utf-8"))


def test_report_is_inert(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(hostile_models_toml(["alpha", "beta", "judge"], "judge"))
    store = tmp_path / "store"
    d0 = load_dilemmas()[0].id
    for a, b in (("alpha", "beta"), ("beta", "alpha")):
        res = CliRunner().invoke(cli, ["run", "--dilemma", d0, "--team-a", a, "--team-b", b, "--judge", "judge",
                                       "--models", str(models), "--store", str(store)])
        assert res.exit_code == 0, res.output
    out = tmp_path / "report"
    res = CliRunner().invoke(cli, ["report", "--store", str(store), "--out", str(out)])
    assert res.exit_code == 0, res.output
    texts = [p for p in out.rglob("*") if p.suffix in (".md", ".csv", ".txt", ".json")]
    assert any(p.name == "report.md" for p in texts) and any(p.suffix == ".csv" for p in texts)
    for p in texts:
        body = p.read_text(encoding="utf-8")
        bad = re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", body)
        assert bad is None, f"{p.name}: control character {bad.group()!r}"
        # markup never becomes formatting a renderer would apply: no raw HTML, no live link to the evil host
        assert "<script" not in body.lower()
        assert "](https://evil.example" not in body
    # model text is quoted in the report (framework usage), with its markup as literal text
    quoted = "".join(p.read_text(encoding="utf-8") for p in texts)
    assert "[bold red]consequentialist[/bold red]" in quoted or "\\[bold red]consequentialist" in quoted, \
        "the report quotes no model text: the check above would prove nothing"


# --------------------------------------------------------------------------------------------- the TUI
def hostile_factory(names: Any) -> dict[str, Any]:
    out = {}
    for n in names:
        reply = HOSTILE_JUDGMENT if n == "scripted-judge" else HOSTILE
        out[n] = ScriptedClient(n, rules=[ScriptRule("", reply)], tokens_per_second=4000)
    return out


def rendered(widget: Any) -> list[Any]:
    """The segments a widget renders on screen (its visible region)."""
    w, h = widget.size
    if not w or not h:
        return []
    return [seg for strip in widget.render_lines(Region(0, 0, w, h)) for seg in strip]


def check_screen(screen: Any, where: str) -> str:
    texts: list[str] = []
    for widget in screen.query("*"):
        for seg in rendered(widget):
            assert not FORBIDDEN.search(seg.text), f"{where}: {type(widget).__name__} renders {seg.text!r}"
            style = seg.style
            if style is not None and "RED ALERT" in seg.text:
                assert not (style.bold and style.color is not None and style.color.name == "red"), where
            if style is not None and style.link:
                assert "evil.example" not in style.link, f"{where}: a live link {style.link}"
            texts.append(seg.text)
    return "".join(texts)


async def _wait(predicate: Any, timeout: float = 30.0) -> None:
    import asyncio

    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.05)


async def test_tui_shows_hostile_text_inert(tmp_path: Path) -> None:

    from ebtui.tui.app import EbtuiApp
    from ebtui.tui.screens.score import ScoreCardScreen
    from ebtui.tui.widgets.role_pane import PhaseView
    from tests.support.tui_helpers import played_round, services_for

    store = open_store(tmp_path / "store")
    services = services_for(store, hostile_factory, ["scripted", "scripted-judge"])
    app = EbtuiApp(services, load_user_themes=False)
    async with played_round(app, size=(150, 50)) as (pilot, screen):
        await pilot.pause()
        views = list(screen.query(PhaseView))
        assert views and all(v.status.value == "complete" for v in views), [v.status for v in views]
        for v in views:  # what the widget holds is the sanitised text, markup kept literally
            assert not FORBIDDEN.search(v.text)
        shown = check_screen(screen, "live round")
        assert "[bold red]RED ALERT[/bold red]" in shown
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, ScoreCardScreen)
        await pilot.press("r")  # the raw judge reply, too
        await pilot.pause()
        card = check_screen(app.screen, "score card")
        assert "[bold red]A[/bold red]" in card or "[bold red]RED ALERT" in card
