"""Benchmark 7: the app in a real terminal, measured from outside, as a person sees it.

A private tmux server runs `ebtui` (the venv's console script) in a window; the benchmark only sends keys
(`tmux send-keys`) and reads the screen (`tmux capture-pane`, polled as fast as tmux answers). Nothing in the
app is instrumented. Three figures, each over several fresh launches:

- dilemma list visible: from asking tmux for the window to the first capture that shows the built-in
  dilemmas' titles in the list (not the header, not a "Loading…" placeholder);
- key press to visible change while both team panes stream from scripted models paced at 150 tokens/s each:
  `end` / `home` and `down` / `up` in Team A's pane, in turn, timed from `send-keys` to the first capture in
  which the pane no longer shows (end, down) or shows again (home, up) its first line — the change the key
  asks for, in its final state (the live panes move without animation, so the first changed frame is the
  final one);
- results browser: from F3 to the first capture showing rows of a 10,000-round store.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import BenchResult, Figure, median, percentile

SIZE = (140, 45)
#: tab presses per launch, after the scroll keys: focus goes round the three panes twice
TABS_PER_TRIAL = 6
TOKENS_PER_S = 150
#: the long reply the team models stream (our own words, Markdown): ≈ 2,400 tokens, 16 s at 150 tokens/s
LONG_PARAGRAPH = (
    "The case turns on whether a duty of candour survives when telling the truth predictably harms the "
    "person it is owed to. A consequentialist weighs the expected welfare of each course; a deontologist asks "
    "whether anyone is treated merely as a means; a care ethicist asks who depends on whom.\n\n"
    "- Stakeholders: those deciding now, those affected later, and those represented only by proxy.\n"
    "- Uncertainty: I hold this view with moderate confidence, about 65%.\n"
    "- What would change my mind: evidence that the harm is reversible or consented to.\n\n"
)
SHORT_REPLY = ("A short presentation.\n\nPrinciple: candour is owed unless it causes grave harm.\n"
               "Conclusion: tell the truth, gently.")


def _ebtui_exe() -> str:
    exe = Path(sys.executable).parent / "ebtui"
    return str(exe) if exe.exists() else shutil.which("ebtui") or "ebtui"


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def models_toml(repeat: int = 30) -> str:
    long = LONG_PARAGRAPH * repeat
    return (
        'default = "bench"\n\n'
        "[models.bench]\n"
        'provider = "scripted"\n'
        f"tokens_per_second = {TOKENS_PER_S}\n\n"
        "[[models.bench.rules]]\n"
        "match = \"# Your task: Team A's presentation\"\n"
        f"reply = {_toml_str(SHORT_REPLY)}\n\n"
        "[[models.bench.rules]]\n"
        'match = ""\n'
        f"reply = {_toml_str(long)}\n"
    )


class Terminal:
    """One private tmux server (its own socket, no user config) and helpers to drive one window."""

    def __init__(self, tmp: Path) -> None:
        self.tmux = shutil.which("tmux") or "tmux"
        self.base = [self.tmux, "-L", f"ebtui-bench-{os.getpid()}", "-f", "/dev/null"]
        # PYTHONDONTWRITEBYTECODE off: an installed ebtui has its bytecode compiled; with it set (as in some
        # sandboxes) every launch compiles ebtui's modules from source first (≈ 40 ms of the first frame)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("COLUMNS", "LINES", "TMUX", "PYTHONDONTWRITEBYTECODE")}
        # its own user cache too: the first start writes the first-screen cache (ebtui/tui/first_screen.py), the
        # later ones read it; `first_frames` times the first start apart
        self.env.update({"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp / "cfg"),
                         "XDG_CACHE_HOME": str(tmp / "cache")})
        self.tmp = tmp
        self.run("new-session", "-d", "-s", "keep", "sleep 3600")

    def run(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, env=self.env,
                              cwd=self.tmp).stdout

    def start(self, name: str, command: str) -> float:
        t0 = time.perf_counter()
        self.run("new-session", "-d", "-s", name, "-x", str(SIZE[0]), "-y", str(SIZE[1]), command)
        return t0

    def screen(self, name: str, attributes: bool = False) -> str:
        """The window's text; with `attributes`, with its colours and attributes as escape sequences."""
        return self.run("capture-pane", "-p", *(["-e"] if attributes else []), "-t", name)

    def wait(self, name: str, ok: object, since: float, timeout: float = 30.0, attributes: bool = False) -> float:
        """Seconds from `since` to the first capture for which ok(screen) holds (nan on timeout)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if ok(self.screen(name, attributes)):  # type: ignore[operator]
                return time.perf_counter() - since
        return float("nan")

    def keys(self, name: str, *keys: str) -> float:
        t0 = time.perf_counter()
        self.run("send-keys", "-t", name, *keys)
        return t0

    def kill(self, name: str) -> None:
        self.run("kill-session", "-t", name)

    def close(self) -> None:
        self.run("kill-server")


def _app_command(store: Path, models: Path | None) -> str:
    env = f"EBTUI_STORE={store}"
    return f"env {env} {sys.executable} -m ebtui" + (f" --models {models}" if models else "")


def _list_markers() -> list[str]:
    from ebtui.core.dilemmas import load_dilemmas

    # the list shows each dilemma's id and title; ids 2-4 appear nowhere else on the setup screen
    return [d.id for d in load_dilemmas()[1:4]]


#: the preview of the first dilemma shows this heading (the built-in dilemmas all have a core scenario)
PREVIEW_MARKER = "Scenario"


#: the Start button, the last of the options column (mounted in the frames after the list's first one)
START_MARKER = "Start round"


def first_frames(term: Terminal, n: int) -> tuple[list[float], list[float], list[float], float]:
    """Per launch: seconds to the dilemma list on screen, to the first dilemma's preview and to the whole
    setup screen (its options column down to Start): both drawn once the list is up, in the frames after it.
    Then the seconds to the list of the cold start before them (its user cache empty: the first start after
    an install or a change of models.toml, which reads and checks the models before the screen opens and
    writes the first-screen cache the n starts after it read)."""
    markers = _list_markers()
    out: list[float] = []
    preview: list[float] = []
    complete: list[float] = []
    cold = float("nan")
    for i in range(-1, n):
        store = term.tmp / f"empty-{i}"
        name = f"first{i}"
        t0 = term.start(name, _app_command(store, None))
        listed = term.wait(name, lambda s: all(m in s for m in markers), t0)
        if i < 0:
            cold = listed
            term.wait(name, lambda s: PREVIEW_MARKER in s and START_MARKER in s, t0)  # the cache is written
            term.kill(name)
            continue
        out.append(listed)
        preview.append(term.wait(name, lambda s: PREVIEW_MARKER in s, t0))
        complete.append(term.wait(name, lambda s: PREVIEW_MARKER in s and START_MARKER in s, t0))
        term.kill(name)
    return out, preview, complete, cold


#: the screen row of the live panes' top borders, where their titles are (under the header and the round's title)
TITLE_ROW = 2
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
ROLES = ("Team A", "Team B", "Judge")


def reversed_titles(row: str) -> dict[str, bool]:
    """For a row of `capture-pane -e` output (the panes' top borders): whether each role's title is drawn in
    reverse video, following the SGR sequences up to it (tmux writes attributes and colours separately)."""
    out: dict[str, bool] = {}
    reverse = False
    pos = 0
    for m in [*_SGR.finditer(row), None]:
        end = m.start() if m is not None else len(row)
        text = row[pos:end]
        for role in ROLES:
            if role in text and role not in out:
                out[role] = reverse
        if m is None:
            break
        params = [int(p) if p else 0 for p in m.group(1).split(";")] if m.group(1) else [0]
        i = 0
        while i < len(params):  # 38;5;N / 48;5;N / 38;2;R;G;B carry numbers that are not attributes
            p = params[i]
            if p in (38, 48, 58):
                i += 3 if i + 1 < len(params) and params[i + 1] == 5 else 5
                continue
            if p == 0:
                reverse = False
            elif p == 7:
                reverse = True
            elif p == 27:
                reverse = False
            i += 1
        pos = m.end()
    return out


def _titles(screen: str) -> dict[str, bool]:
    """Which panes' titles a capture with attributes shows reversed (none when the screen is too short)."""
    lines = screen.split("\n")
    return reversed_titles(lines[TITLE_ROW]) if len(lines) > TITLE_ROW else {}


def key_latencies(term: Terminal, trials: int, keys_per_trial: int, seed: int = 7
                  ) -> tuple[list[list[float]], list[list[float]], str]:
    """Per trial, the seconds from each key (end/home, down/up) to the visible change, and from each tab to the
    next pane's title shown reversed, while both team panes stream."""
    models = term.tmp / "models.toml"
    models.write_text(models_toml(), encoding="utf-8")
    rng = random.Random(seed)
    markers = _list_markers()
    out: list[list[float]] = []
    tabs: list[list[float]] = []
    note = ""
    for t in range(trials):
        name = f"keys{t}"
        store = term.tmp / f"store-keys-{t}"
        t0 = term.start(name, _app_command(store, models))
        term.wait(name, lambda s: all(m in s for m in markers), t0)
        term.keys(name, "C-r")
        both = term.wait(name, lambda s: "Response: streaming" in s and "Consistency test: streaming" in s,
                         time.perf_counter(), timeout=40)
        if both != both:  # nan
            note = "the round did not reach both team phases streaming: " + term.screen(name)[-400:]
            term.kill(name)
            break
        time.sleep(1.5)  # let Team A's pane overflow so home and end both change what it shows
        lat: list[float] = []
        at_home = "✓ Presentation" in term.screen(name)
        away = "Home"  # the key that brings the first line back: Home after End (and at first), Up after Down
        for k in range(keys_per_trial):
            time.sleep(rng.uniform(0.1, 0.35))  # keys land at random points of the panes' updates
            if at_home:  # End (to the end, following again) and Down (one line) in turn: the first line goes
                key = "End" if k % 4 < 2 else "Down"
                away = "Home" if key == "End" else "Up"
                t1 = term.keys(name, key)
                dt = term.wait(name, lambda s: "✓ Presentation" not in s, t1, timeout=5)
            else:
                t1 = term.keys(name, away)
                dt = term.wait(name, lambda s: "✓ Presentation" in s, t1, timeout=5)
            at_home = not at_home
            lat.append(dt)
        tab_lat: list[float] = []
        order = ROLES[1:] + ROLES[:1]  # Team A has the keys: tab goes to Team B, the judge, Team A again
        for k in range(TABS_PER_TRIAL):
            time.sleep(rng.uniform(0.1, 0.35))
            role = order[k % 3]
            t1 = term.keys(name, "Tab")
            tab_lat.append(term.wait(name, lambda s, r=role: _titles(s).get(r) is True, t1, timeout=5,
                                     attributes=True))
        tabs.append(tab_lat)
        still = term.screen(name)
        if not ("Response: streaming" in still and "Consistency test: streaming" in still):
            note = f"trial {t}: the team phases had stopped streaming before the last key"
        out.append(lat)
        term.keys(name, "x")
        term.kill(name)
    return out, tabs, note


def browser_times(term: Terminal, store: Path, n: int, marker: str) -> list[float]:
    out = []
    markers = _list_markers()
    for i in range(n):
        name = f"browse{i}"
        t0 = term.start(name, _app_command(store, None))
        term.wait(name, lambda s: all(m in s for m in markers), t0)
        time.sleep(0.3)
        t1 = term.keys(name, "F3")
        out.append(term.wait(name, lambda s: s.count(marker) >= 5, t1))
        term.kill(name)
    return out


def build_store(root: Path, n: int) -> str:
    """A store of n copies of a real scripted round (as benchmark 3 builds); returns a text every row shows."""
    from benchmarks.bench_core import template_round, variant
    from ebtui.core.dilemmas import load_dilemmas
    from ebtui.core.store import ResultsStore

    store = ResultsStore(root, durable=False)
    template = template_round()
    rng = random.Random(3)
    dilemmas = [d.id for d in load_dilemmas()]
    models = [f"model-{i}" for i in range(6)]
    for i in range(1, n + 1):
        store.save_round(variant(template, i, rng, dilemmas, models, ["t0", "t1"]))
    store.flush()
    store.close()
    return "model-"


def _spread(xs: list[float]) -> str:
    return f"{min(xs) * 1000:.0f}-{max(xs) * 1000:.0f} ms"


def bench_terminal(quick: bool = False) -> BenchResult:
    res = BenchResult("terminal", "7. In a real terminal (tmux), measured from outside")
    if shutil.which("tmux") is None:
        res.error = "tmux is not installed"
        return res
    n_first = 3 if quick else 7
    trials = 2 if quick else 5
    keys = 8 if quick else 24
    n_rows = 500 if quick else 10_000
    tmp = Path(tempfile.mkdtemp(prefix="ebtui-bench-term-"))
    term = Terminal(tmp)
    try:
        # tmux's own cost: a shell echo, by the same method
        shell = []
        for i in range(5):
            t0 = term.start(f"sh{i}", "echo READY-MARK; sleep 30")
            shell.append(term.wait(f"sh{i}", lambda s: "READY-MARK" in s, t0))
            term.kill(f"sh{i}")
        polls = []
        for _ in range(20):
            t0 = time.perf_counter()
            term.screen("keep")
            polls.append(time.perf_counter() - t0)
        first, preview, complete, cold = first_frames(term, n_first)
        lat, tabs, note = key_latencies(term, trials, keys)
        t_store = time.perf_counter()
        marker = build_store(tmp / "big-store", n_rows)
        built = time.perf_counter() - t_store
        browse = browser_times(term, tmp / "big-store", 3 if quick else 5, marker)
    finally:
        term.close()
        shutil.rmtree(tmp, ignore_errors=True)
    ff_med, ff_p95 = median(first), percentile(first, 0.95)
    all_keys = [x for trial in lat for x in trial]
    k_med, k_p95 = median(all_keys), percentile(all_keys, 0.95)
    trial_p95 = [percentile(t, 0.95) for t in lat if t]
    all_tabs = [x for trial in tabs for x in trial]
    t_med, t_p95 = median(all_tabs), percentile(all_tabs, 0.95)
    b_med, b_p95 = median(browse), percentile(browse, 0.95)
    ok = all(x == x for x in first + all_keys + all_tabs + browse)  # no nan (a timeout)
    res.figures = [
        Figure("`ebtui` started → dilemma list visible, median", ff_med * 1000, "ms"),
        Figure("Same, 95th percentile", ff_p95 * 1000, "ms", "< 1,000 ms", ok and ff_p95 < 1.0),
        Figure("Cold start (an empty user cache: the models read and checked before the screen, the first-screen "
               "cache written) → dilemma list visible, one launch", cold * 1000, "ms"),
        Figure("`ebtui` started → the first dilemma's preview visible too (drawn after the list), median",
               median(preview) * 1000, "ms"),
        Figure("`ebtui` started → the whole setup screen: preview and options down to Start (drawn after the "
               "list), median", median(complete) * 1000, "ms"),
        Figure(f"Key (end/home, down/up) → visible change while both team panes stream at {TOKENS_PER_S} tokens/s "
               "each, median", k_med * 1000, "ms"),
        Figure("Same, 95th percentile (tmux polling included)", k_p95 * 1000, "ms", "< 80 ms",
               ok and bool(all_keys) and k_p95 < 0.080),
        Figure("Tab → the next pane's title drawn reversed (focus moved), same streaming, median", t_med * 1000,
               "ms"),
        Figure("Same, 95th percentile (tmux polling included)", t_p95 * 1000, "ms", "< 80 ms",
               ok and bool(all_tabs) and t_p95 < 0.080),
        Figure(f"F3 → results browser showing rows of a {n_rows:,}-round store, median", b_med * 1000, "ms"),
        Figure("Same, 95th percentile", b_p95 * 1000, "ms", "< 1,000 ms", ok and b_p95 < 1.0),
    ]
    res.method = (
        f"A private tmux server (no user config) runs the venv's `ebtui` in a {SIZE[0]}×{SIZE[1]} window "
        "(TERM=xterm-256color, an empty user config, its own store); the benchmark only sends keys "
        "(`tmux send-keys`) and reads the screen (`tmux capture-pane -p`, polled back to back: one capture "
        f"takes ≈ {median(polls) * 1000:.1f} ms here). Nothing in the app is instrumented. "
        f"Dilemma list: {n_first} launches after a cold one (timed apart: an empty user cache), from asking "
        "tmux for the window to the first capture showing the "
        "ids of the second to fourth built-in dilemmas (only the list shows them: not the header, not a "
        "placeholder); the preview of the first dilemma (its “Scenario” heading) and the options column (model "
        "pickers down to the Start button) are filled once the list is on screen, and the times to them are "
        "shown too. "
        f"Keys: {trials} launches with a models file whose scripted model streams at {TOKENS_PER_S} tokens/s "
        "(a short presentation, then ≈ 2,400-token replies, so Team B's response and Team A's consistency "
        f"test stream at the same time); ctrl+r starts the round, and once both are streaming {keys} keys are "
        "sent at random intervals (0.10-0.35 s) in Team A's pane (focused): `End`, `Home`, `Down`, `Up`, in "
        "turn, each timed from `send-keys` to the first capture in which the pane's first line "
        "(“✓ Presentation”) has gone (End, Down: to the end, or one line) or is back (Home, Up). The panes move "
        "without animation, so that frame is the final one. Then, in the same launch and while the panes still "
        f"stream, {TABS_PER_TRIAL} tabs (focus goes round the three panes twice), each timed to the first "
        "capture with attributes (`capture-pane -e`) in which the next pane's title is drawn in reverse video. "
        f"Browser: a store of {n_rows:,} copies of a real scripted round, {len(browse)} launches, F3 pressed "
        "once the setup screen is up, timed to the first capture with at least five rows of the table."
    )
    res.details = [
        f"- tmux's own cost: a window running `echo` shows it in {median(shell) * 1000:.0f} ms (median of 5); "
        f"one capture-pane {median(polls) * 1000:.1f} ms (median), {max(polls) * 1000:.1f} ms (worst) — included "
        "in the figures, not subtracted",
        f"- dilemma list: {', '.join(f'{x * 1000:.0f}' for x in first)} ms (spread {_spread(first)}); the "
        f"preview: {', '.join(f'{x * 1000:.0f}' for x in preview)} ms; the whole screen: "
        f"{', '.join(f'{x * 1000:.0f}' for x in complete)} ms",
        f"- keys: {len(all_keys)} over {len(lat)} launches; per launch p95 "
        f"{', '.join(f'{x * 1000:.0f}' for x in trial_p95)} ms; worst {max(all_keys, default=0) * 1000:.0f} ms; "
        f"spread {_spread(all_keys) if all_keys else '—'}",
        f"- tabs: {len(all_tabs)} over {len(tabs)} launches: "
        f"{', '.join(f'{x * 1000:.0f}' for x in all_tabs)} ms",
        f"- browser: {', '.join(f'{x * 1000:.0f}' for x in browse)} ms (store built in {built:.1f} s)",
    ]
    if note:
        res.details.append(f"- note: {note}")
    return res
