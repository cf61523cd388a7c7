"""The playground app: settings, keys and wiring. It owns the run pipeline (`tui.run.pipeline`),
which owns the engine's host (`tui.engine.host`), and hands it the messages their workers post."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.worker import Worker

from playground import snippets_dir
from playground.engine import bisecting
from playground.engine.hello import WorkerHello
from playground.engine.history import History
from playground.engine.matrix import combinations
from playground.engine.passes import Passes
from playground.engine.run_request import RunFlags
from playground.engine.settings import Settings, config_word
from tui.engine.messages import RunMessage
from tui.engine.protocol import Engine
from tui.files.actions import FileActions
from tui.files.gallery import list_gallery
from tui.keys.commands import BackendCommands, KeyCommands, SwitchCommands
from tui.keys.palette import PlaygroundPalette
from tui.keys.table import BINDINGS
from tui.run.options import SessionOptions
from tui.run.pipeline import RunPipeline
from tui.run.toggles import cycle_backends, toggle_named
from tui.run.view import RunState, View
from tui.screens.bisect import Bisector, BisectScreen
from tui.screens.fixes import Applied, FixesScreen
from tui.screens.gallery import GalleryScreen
from tui.screens.help import HelpScreen
from tui.screens.history import HistoryScreen
from tui.screens.main import MainScreen
from tui.screens.matrix import MatrixScreen
from tui.stopping import StopsOnSignals
from tui.widgets.notify import SafeNotify

#: Screens over the main one: only quitting reaches the app's own keys behind them.
_OVERLAYS = (HelpScreen, GalleryScreen, MatrixScreen, HistoryScreen, FixesScreen)


class PlaygroundApp(StopsOnSignals, FileActions, SafeNotify[None]):
    """Watches one snippet and shows torch.compile's view of it. Build it with `make_app`."""

    CSS_PATH = "app.tcss"
    TITLE = "compile-playground"
    BINDINGS = BINDINGS
    COMMANDS = App.COMMANDS | {KeyCommands, BackendCommands, SwitchCommands}

    def __init__(self, snippet: Path, *, engine: Engine, settings: Settings, options: SessionOptions) -> None:
        super().__init__()
        self.main = MainScreen()
        #: What `s` runs: torch's compiler bisector in its own process group (a fake in tests).
        self.bisector: Bisector = options.bisector or bisecting.bisect
        #: The run pipeline: every key, palette command and test reaches a run through its verbs.
        self.pipeline = RunPipeline(self, self._show_view, snippet, engine, settings, options)
        #: Shown once the app is up (e.g. "opened your existing snippet.py").
        self.notice = options.notice

    def _show_view(self, view: View) -> None:
        self.main.view = view

    # What the keys, the palette's commands and the tests read: the pipeline's. They change
    # only through the pipeline's verbs (`set`, `toggle`, `run`, `cancel`, `pick`).
    @property
    def settings(self) -> Settings:
        return self.pipeline.settings

    @property
    def passes(self) -> Passes:
        return self.pipeline.passes

    @property
    def engine(self) -> Engine:
        return self.pipeline.engine

    @property
    def run_flags(self) -> RunFlags:
        """What the command line asks of every run (--no-timing, --min-run-time)."""
        return self.pipeline.run_flags

    @property
    def hello(self) -> WorkerHello | None:
        """The worker's handshake; None while torch is still starting."""
        return self.pipeline.hello

    @property
    def snippet(self) -> Path:
        return self.pipeline.snippet

    @property
    def generation(self) -> int:
        return self.pipeline.generation

    @property
    def history(self) -> History:
        return self.pipeline.history

    def on_run_message(self, message: RunMessage) -> None:
        """Every message the run's workers post: the pipeline has one handler for each."""
        self.pipeline.handle(message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.pipeline.on_worker_state_changed(event)

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, timeout=8)
        self.stop_on_signals()
        self.pipeline.start()

    async def on_unmount(self) -> None:
        await self.pipeline.close()

    def action_command_palette(self) -> None:
        """Textual's palette, bounded and never running a result of an earlier text (see
        `tui.keys.palette`)."""
        if self.use_command_palette and not PlaygroundPalette.is_open(self):
            self.push_screen(PlaygroundPalette(id="--command-palette"))

    def action_help_quit(self) -> None:
        # ctrl+c: Textual's own hint is written in markup, which `notify` above leaves off.
        keys = [key for key, active in self.active_bindings.items() if active.binding.action in ("quit", "app.quit")]
        if keys:
            self.notify(f"Press {keys[0]} to quit the app", title="Do you want to quit?")

    def get_default_screen(self) -> Screen:
        return self.main

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Behind another screen only quitting reaches the app: a stray key must not change
        # settings unseen. (The command palette runs its choice after closing.)
        if isinstance(self.screen, _OVERLAYS) and action != "quit":
            return False
        if action in ("matrix", "export_trace"):
            # Both need the worker; shown but disabled while torch is still starting.
            return True if self.hello is not None else None
        if action == "toggle":
            # A toggle not offered now (cuda without cuda) is shown but disabled.
            return True if toggle_named(str(parameters[0])).offered(self.settings, self.hello) else None
        if action == "move_line":
            # Only while the line cursor's pane has the focus on the main screen: otherwise the
            # arrow falls through to what it does there (scroll a pane, move in a list).
            return self.screen is self.main and self.main.line_cursor_focused
        return True

    # The keys' actions: each one verb of the pipeline.
    def action_toggle(self, what: str) -> None:
        """A toggle key (`tui/run/toggles.py`): a setting's next value, or a pass on or off."""
        self.pipeline.toggle(what)

    def action_pick(self) -> None:
        """Key o: a program's callable the panes show and the toggles act on, or a rank."""
        self.pipeline.pick()

    def action_line_cursor(self) -> None:
        if self.main.line_cursor is None:
            self.action_show_pane("source")  # as key 1 does: followers see where the presenter is
        self.main.toggle_line_cursor()

    def action_move_line(self, step: int) -> None:
        self.main.move_line_cursor(step)

    @property
    def backends(self) -> tuple[str, ...]:
        """What `b` cycles: the backends that work here (the rest are in the palette)."""
        return cycle_backends(self.hello)

    async def action_quit(self) -> None:
        await self._quit(0)

    async def _quit(self, return_code: int) -> None:
        # The summary says so at once: a run's "compiling call 1/3…" must not stay up while
        # the engine closes (shutdown_engine kills the worker rather than wait for it).
        self.pipeline.stop_watching()
        if not self.pipeline.quitting:
            self.pipeline.show_run(RunState("quitting"))
        await self.pipeline.shutdown_engine()
        self.exit(return_code=return_code)

    def action_rerun(self) -> None:
        self.pipeline.run("rerun")

    def action_show_pane(self, pane: str) -> None:
        self.main.show_pane(pane)
        self.pipeline.presenting.pane(pane)  # followers see where the presenter is
        if pane == "dynamo_code" and not self.passes.dynamo_code:
            # The worker decompiles Dynamo's code only when asked: it costs time; a run across
            # ranks has none to show, so it is asked for from the next run at 1.
            self.pipeline.ask_for("dynamo_code", run=self.settings.ranks == 1)

    def action_step_graph(self, step: int) -> None:
        self.main.step_graph(step)

    def action_matrix(self) -> None:
        lock = self.pipeline.cancel("settings matrix (x)")
        cells = combinations(self.settings)
        screen = MatrixScreen(self.engine, lock, self.snippet, cells, clock=self.pipeline.clock, base=self.settings)
        # Closing restores the normal view; unless a save already asked for this very run.
        self.push_screen(screen, lambda _: self.pipeline.run("matrix closed", force=False))

    def action_bisect(self) -> None:
        """From a failing Equiv verdict: bisect it, live; the workaround applied on the way out."""
        report = self.pipeline.shown_report()
        why = ""
        if self.pipeline.view_program:
            why = "bisect takes a snippet (a target and its inputs()), not a program"
        elif report is None or report.equivalence is None:
            why = "nothing to bisect yet: no equivalence verdict"
        elif report.equivalence.ok:
            why = "nothing to bisect: eager and compiled agree (Equiv passes)"
        if why:
            self.notify(why, timeout=4)
            return
        # The verdict on screen ran under these: the bisection judges under them too.
        shown = self.settings
        settings = (
            ("fullgraph", shown.fullgraph),
            ("dynamic", shown.dynamic),
            ("mode", shown.mode),
            ("target", shown.target),
        )
        screen = BisectScreen(self.snippet, shown.config, self.bisector, settings)
        self.push_screen(screen, self._apply_workaround)

    def _apply_workaround(self, config: tuple[tuple[str, Any], ...] | None) -> None:
        if not config:
            return
        settings = self.settings
        for key, value in config:
            settings = settings.with_config(key, value)  # a list held as a tuple: hashable
        words = ", ".join(config_word(k, v) for k, v in config)
        self.notify(f"workaround applied: {words}; rerunning", timeout=5)
        self.pipeline.set("config", settings)

    def action_try_fixes(self) -> None:
        """F on the Breaks or Recomp pane: the remedies torch offers for its sites (the line
        cursor's site when it is on one), each a variant run of this save, in a screen of their own."""
        report = self.pipeline.shown_report()
        kind = self.main.fixes_kind()
        why = ""
        if kind is None:
            why = "F tries the fixes from the Breaks (2) or Recomp (5) pane"
        elif self.pipeline.view_program or self.settings.ranks > 1:
            why = "fixes are tried on a snippet in one process, not a program or a run across ranks"
        elif report is None or report.stage != "complete":
            why = "nothing to fix yet: wait for the run's report"
        elif not (report.graph_break_count if kind == "break" else report.recompile_count):
            why = f"no {kind} to fix in this run"
        if why or kind is None:
            self.notify(why, timeout=4)
            return
        cursor = self.main.line_cursor
        lines = {b.line for b in report.graph_breaks} if kind == "break" else {r.line for r in report.recompiles}
        ask = f"{kind}:{cursor}" if cursor is not None and cursor in lines else kind
        lock = self.pipeline.cancel("fixes (F)")
        screen = FixesScreen(self.engine, lock, self.snippet, self.settings, self.run_flags, ask)
        self.push_screen(screen, self._apply_fix)

    def _apply_fix(self, change: Applied | None) -> None:
        """A config or dynamic remedy chosen in the fixes screen, toggled on the session's
        settings (off when it is already on); the normal view reruns either way."""
        if change is None:
            self.pipeline.run("fixes closed", force=False)
            return
        config, dynamic = change
        settings = self.settings
        for key, value in config:
            settings = settings.with_config(key, value, unset=dict(settings.config).get(key) == value)
        if dynamic is not None:
            settings = replace(settings, dynamic=None if settings.dynamic == dynamic else dynamic)
        if config:
            on = all(dict(settings.config).get(k) == v for k, v in config)
            words = ", ".join(config_word(k, v) for k, v in config)
        else:
            on, words = settings.dynamic == dynamic, f"dynamic={dynamic}"
        self.notify(f"fix {'applied' if on else 'taken off'}: {words}; rerunning", timeout=5)
        self.pipeline.set("config" if config else "dynamic", settings)

    def action_history(self) -> None:
        self.push_screen(HistoryScreen(self.history))

    def action_export_trace(self) -> None:
        self.notify("rerunning with torch's structured trace on…", timeout=4)
        self.pipeline.run("trace", trace=True)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_gallery(self) -> None:
        self.push_screen(GalleryScreen(list_gallery(snippets_dir())), self.open_entry)
