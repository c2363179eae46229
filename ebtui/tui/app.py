"""The ebtui Textual app: setup → live round → score card, and the results browser."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode

from ebtui.core.safe_text import strip_control
from ebtui.tui.commands import EbtuiCommands
from ebtui.tui.keymap import load_keymap, user_config_file
from ebtui.tui.keys import bindings
from ebtui.tui.screens.setup import SetupScreen
from ebtui.tui.services import Services
from ebtui.tui.themes import DEFAULT_THEME, ThemeFileError, builtin_themes, user_themes

if TYPE_CHECKING:
    from ebtui.core.events import RoundEvent

#: the cycle collector's thresholds while the app runs. Streaming allocates many short-lived objects (Textual
#: makes a Strip with its caches for every painted line); with Python's default (700, 10, 10) a full collection
#: — a scan of every object the app holds, 100-300 ms on a loaded 2-core machine — ran about once a second
#: while text streamed and froze the screen: it was the whole tail of the key-to-frame latency (benchmark 4:
#: p95 267 ms before, 45 ms after, same load). Young collections stay frequent and cheap; a full one now comes
#: after ~20 million allocations (minutes of streaming) and scans only what was made after start-up.
GC_THRESHOLDS = (1_000, 20, 1_000)
#: what F3/F4 say while a round runs on the live screen
LEAVE_RUNNING_ROUND = "cancel it (x) or wait for it to finish"


#: the warm-up's pause after what F3 needs (the index, the browser's module) before the rest (the live screen's
#: modules; then the collector is tuned and the first screen's check runs): an F3 pressed as the list shows
#: paints its rows without them competing for the CPU
WARM_UP_PAUSE_S = 0.5
#: the latest the collector is tuned (and turned back on) after the first frame, should the warm-up take longer
GC_TUNE_LATEST_S = 5.0


def _tune_gc() -> None:
    """Called once the warm-up after the first frame is over: what start-up built (modules, styles, the first
    screen, the modules the warm-up loads: pydantic, the records, the store) lives as long as the app, so it moves
    out of the collector's sight (`gc.freeze`), and full collections get rarer. Reference counting still frees
    everything as usual; only cyclic garbage waits longer. (Until then the collector is off, as the launcher left
    it: with it on, the warm-up's imports cost ≈ 40 ms more CPU in young collections of objects that live on.)"""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    gc.enable()  # the launcher turns it off for the start-up


class EbtuiApp(App[None]):
    TITLE = "ebtui"
    SUB_TITLE = "Ethics Bowl for language models"
    #: the setup screen's and the results browser's styles are the app's, parsed with the rest at start: a
    #: screen's own CSS_PATH is read when the screen is first pushed, and Textual then re-parses every stylesheet
    #: and re-styles every node of every screen (≈ 70 ms of F3's first frame; a second parse of everything before
    #: the first frame)
    CSS_PATH = ["ebtui.tcss", "screens/setup.tcss", "screens/results.tcss"]
    COMMANDS = App.COMMANDS | {EbtuiCommands}
    BINDINGS = bindings("app")

    def __init__(self, services: Services, *, load_user_themes: bool = True, theme: str | None = None,
                 snapshot: bool = False, tune_gc: bool | None = None, keymap_file: Path | None = None) -> None:
        super().__init__()
        #: freeze start-up objects and raise the collector's thresholds after the first frame (see _tune_gc);
        #: by default only in a real terminal — in tests the process outlives many apps, and frozen objects
        #: are never cycle-collected
        self._gc_tuning = tune_gc
        self.services = services
        self._load_user_themes = load_user_themes
        self._theme_errors: list[str] = []
        self._initial_theme = theme
        #: the user's config.toml whose [keymap] is applied at start (run_app passes it; tests pass their own)
        self._keymap_file = keymap_file
        self._clashes_reported: set[str] = set()
        #: held while a thread opens the results store or reads its index (the warm-up, the results browser's
        #: load), so the two never open it twice or parse index.json side by side
        self.store_lock = threading.Lock()
        self._gc_tune_pending = False
        #: the warm-up has read the store's index (it is in memory): the results browser's first page is then
        #: read at once, and is in the browser's first frame
        self.index_read_ahead = False
        #: set when the warm-up is over (what waits for it: the first screen's check, ebtui.tui.screens.setup)
        self.warmed = threading.Event()
        #: the theme's variables are in the stylesheet before its first parse (`_register_themes`)
        self._css_variables_set = False
        if snapshot:
            self.animation_level = "none"
        self._register_themes()

    def _register_themes(self) -> None:
        try:
            for theme in builtin_themes():
                self.register_theme(theme)
        except ThemeFileError as exc:  # a packaging bug; say so and carry on with Textual's themes
            self._theme_errors.append(str(exc))
        if self._load_user_themes:
            loaded = user_themes()
            for theme in loaded.themes:
                self.register_theme(theme)
            self._theme_errors += loaded.errors
        wanted = self._initial_theme or DEFAULT_THEME
        if wanted in self.available_themes and wanted != self.theme:
            self.theme = wanted
            # Textual's theme watcher queues a refresh of the styles for the start: new variables, then every
            # stylesheet parsed again from scratch (a second full parse before the first frame). The variables
            # are set now, before anything is parsed, so that refresh has nothing to do (refresh_css skips it).
            self.stylesheet.set_variables(self.get_css_variables())
            self._css_variables_set = True

    def refresh_css(self, animate: bool = True) -> None:
        if self._css_variables_set:  # the refresh the theme set in __init__ queued: nothing to refresh
            self._css_variables_set = False
            return
        super().refresh_css(animate)

    def on_mount(self) -> None:
        for error in self._theme_errors:
            self.notify(strip_control(error), title="Theme file skipped", severity="warning", timeout=10)
        self._apply_user_keymap()
        self.push_screen(SetupScreen())
        if self._gc_tuning if self._gc_tuning is not None else not self.is_headless:
            self._gc_tune_pending = True  # at the warm-up's end (or GC_TUNE_LATEST_S after the first frame)
            self.call_after_refresh(self.set_timer, GC_TUNE_LATEST_S, self._tune_gc_once)
        self.call_after_refresh(self._warm_up)

    @work(thread=True, exclusive=True, group="warm-up", exit_on_error=False)
    def _warm_up(self) -> None:
        """After the first frame, off the UI thread: load the modules a round and the results browser need
        (the store with the rounds' use cases, the live screen, the results browser), so neither the first
        frame nor the first key pays."""
        from importlib import import_module

        try:
            import_module("ebtui.core.usecases.rounds")
            if not self.is_headless:  # tests open many apps on throwaway stores: only a real session reads ahead
                self._warm_store()  # first: F3 (the browser at 10,000 rounds) waits for it, ctrl+r does not
            import_module("ebtui.tui.screens.results")
            if not self.is_headless:  # what is not urgent waits, so that an early F3's frame has the CPU
                time.sleep(WARM_UP_PAUSE_S)
            import_module("ebtui.tui.screens.live")
        finally:
            self._tune_gc_once()
            self.warmed.set()

    def _tune_gc_once(self) -> None:
        if self._gc_tune_pending:
            self._gc_tune_pending = False
            _tune_gc()

    def _warm_store(self) -> None:
        """Read an existing store's index ahead (in the warm-up thread), so F3's first page does not wait for
        index.json to be parsed (≈ 80 ms of CPU at 10,000 rounds). A missing store is not created here."""
        from ebtui.core.usecases.rounds import list_rounds

        ctx = self.services.context
        if not (ctx.store_root / "index.json").is_file():
            return
        with self.store_lock:
            try:
                list_rounds(ctx, limit=1, with_unreadable=False)
            except Exception:  # noqa: BLE001 - only a read-ahead: the browser's own load reports problems
                return
            self.index_read_ahead = True

    def _apply_user_keymap(self) -> None:
        """The [keymap] of the user's config (Textual's App.set_keymap); each bad entry is one notification."""
        loaded = load_keymap(self._keymap_file)
        for error in loaded.errors:
            self.notify(strip_control(error), title="Keymap entry skipped", severity="warning", timeout=10)
        if loaded.keymap:
            self.set_keymap(loaded.keymap)

    def handle_bindings_clash(self, clashed_bindings: set[Binding], node: DOMNode) -> None:
        """A remapped key took the key of another binding: say so once (Textual asks on every key press)."""
        lost = ", ".join(sorted(f"{b.id or b.action} ({b.key})" for b in clashed_bindings))
        message = f"the keymap gave these keys to other bindings: {lost}"
        if message not in self._clashes_reported:
            self._clashes_reported.add(message)
            self.notify(strip_control(message), title="Keymap clash", severity="warning", timeout=10)

    # -- actions -------------------------------------------------------------------------------
    def _setup_screen(self) -> SetupScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, SetupScreen):
                return screen
        return None

    def _round_running(self, what: str) -> bool:
        """True (and says so) while the live screen's round runs: leaving it then would hide the round."""
        from ebtui.tui.screens.live import LiveRoundScreen

        running = isinstance(self.screen, LiveRoundScreen) and self.screen.state in ("running", "cancelling")
        if running:
            self.notify(f"A round is running: {what}.", severity="warning")
        return running

    def action_new_round(self) -> None:
        if self._round_running("cancel it (x) first"):
            return
        setup = self._setup_screen()
        if setup is None:
            self.push_screen(SetupScreen())
            return
        while self.screen is not setup and len(self.screen_stack) > 1:
            self.pop_screen()

    def action_browse_results(self) -> None:
        from ebtui.tui.screens.results import ResultsScreen

        if isinstance(self.screen, ResultsScreen) or self._round_running(LEAVE_RUNNING_ROUND):
            return
        self.push_screen(ResultsScreen())

    def action_tournament(self) -> None:
        from ebtui.tui.screens.tournament import TournamentScreen

        if isinstance(self.screen, TournamentScreen) or self._round_running(LEAVE_RUNNING_ROUND):
            return
        # installed: leaving the screen keeps it, so a running tournament goes on and F4 comes back to it
        if not self.is_screen_installed("tournament"):
            self.install_screen(TournamentScreen(), "tournament")
        screen = self.get_screen("tournament")
        if screen in self.screen_stack:
            while self.screen is not screen:
                self.pop_screen()
        else:
            self.push_screen(screen)

    def action_audit(self) -> None:
        """The human audit's blind scoring screen (ebtui/tui/screens/audit.py)."""
        from ebtui.tui.screens.audit import AuditScreen

        if isinstance(self.screen, AuditScreen) or self._round_running(LEAVE_RUNNING_ROUND):
            return
        self.push_screen(AuditScreen())

    def action_open_document(self) -> None:
        self.action_new_round()
        setup = self._setup_screen()
        if setup is not None:
            self.call_later(setup.action_open_document)

    def action_help(self) -> None:
        from ebtui.tui.screens.modals import HelpModal

        if not isinstance(self.screen, HelpModal):
            self.push_screen(HelpModal())

    @on(SetupScreen.RoundRequested)
    def _start_round(self, event: SetupScreen.RoundRequested) -> None:
        from ebtui.core.usecases.play import play, prepare_round
        from ebtui.tui.screens.live import LiveRoundScreen

        services = self.services
        try:
            # building the clients checks keys and names; do it now so a problem is a message, not a crash
            prepared = prepare_round(services.context, event.request, check_store=False)
        except Exception as exc:
            self.notify(strip_control(str(exc)), title="Cannot start the round", severity="error", timeout=10)
            return

        player = services.run_round or play  # a test may replay a fixed round's events instead

        def events() -> AsyncIterator[RoundEvent]:
            return player(services.context, prepared)

        self.push_screen(LiveRoundScreen(prepared.spec, events))


def run_app(document: str | Path | None = None, models_file: str | Path | None = None,
            store: str | Path | None = None) -> None:
    """Open the app. A bad --models or --document is a one-line error (exit 2), before the screen opens."""
    from ebtui.core.usecases.context import check_writable, open_context
    from ebtui.tui.services import default_services

    context = open_context(store=store, models_file=models_file)
    check_writable(context)  # rounds played here must be savable
    services = default_services(document, context=context)
    EbtuiApp(services, keymap_file=user_config_file()).run()
