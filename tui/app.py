"""The playground app: settings, keys and wiring. It owns the run pipeline (`tui.run.pipeline`),
which owns the engine's host (`tui.engine.host`), and hands it the messages their workers post."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, SuspendNotSupported
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker

from playground import snippets_dir
from playground.engine import bisecting
from playground.engine.hello import WorkerHello
from playground.engine.history import History
from playground.engine.matrix import combinations
from playground.engine.passes import NO_PASSES, Passes
from playground.engine.program import ProgramOptions
from playground.engine.report import Report
from playground.engine.run_request import DEFAULT_RUN_FLAGS, RunFlags
from playground.engine.session import SessionWriter
from playground.engine.settings import DYNAMICS, MODES, RANK_CHOICES, Settings, config_word, cycle
from playground.engine.textsafe import visible
from playground.engine.wording import program as program_words
from tui.engine.messages import (
    DiagnosticsReady,
    Progress,
    RunFailed,
    RunFinished,
    RunStarted,
    SnippetChanged,
    WorkerReady,
    WorkerRestarted,
)
from tui.engine.protocol import Engine
from tui.files.editor import editor_command, run_editor
from tui.files.exports import shown, write_markdown
from tui.files.gallery import GalleryEntry, list_gallery, open_copy
from tui.keys.commands import BackendCommands, KeyCommands, SwitchCommands, cycle_backends
from tui.keys.palette import PlaygroundPalette
from tui.keys.table import BINDINGS
from tui.run.pipeline import RunPipeline
from tui.run.view import RunState, View
from tui.screens.bisect import Bisector, BisectScreen
from tui.screens.fixes import Applied, FixesScreen
from tui.screens.gallery import GalleryScreen
from tui.screens.help import HelpScreen
from tui.screens.history import HistoryScreen
from tui.screens.main import MainScreen
from tui.screens.matrix import MatrixScreen

#: After a stop signal, or the terminal going away, the app closes as `q` does; should that
#: close stall (a worker that will not die, a write that never returns), the process ends here
#: regardless. Longer than a normal close takes, mid-compile included (about 1 s).
STOP_DEADLINE_S = 4.0

#: Screens over the main one: only quitting reaches the app's own keys behind them.
_OVERLAYS = (HelpScreen, GalleryScreen, MatrixScreen, HistoryScreen, FixesScreen)


class PlaygroundApp(App[None]):
    """Watches one snippet and shows torch.compile's view of it. Build it with `make_app`."""

    CSS_PATH = "app.tcss"
    TITLE = "compile-playground"
    BINDINGS = BINDINGS
    COMMANDS = App.COMMANDS | {KeyCommands, BackendCommands, SwitchCommands}

    def __init__(
        self,
        snippet: Path,
        *,
        engine: Engine,
        settings: Settings,
        watch: bool = True,
        clock: Callable[[], float] = time.monotonic,
        notice: str = "",
        pinned: dict[str, Any] | None = None,
        present: SessionWriter | None = None,
        passes: Passes = NO_PASSES,
        run_flags: RunFlags = DEFAULT_RUN_FLAGS,
        program: ProgramOptions | None = None,
        bisector: Bisector | None = None,
    ) -> None:
        super().__init__()
        self.main = MainScreen()
        #: What `s` runs: torch's compiler bisector in its own process group (a fake in tests).
        self.bisector: Bisector = bisector or bisecting.bisect
        # --kernels, --code, --guard-what-if (`passes`): the runs ask from the first one, as
        # after k, opening the Code pane, or u.
        self.pipeline = RunPipeline(
            self,
            self._show_view,
            snippet,
            engine,
            settings,
            watch=watch,
            clock=clock,
            pinned=pinned,
            present=present,
            passes=passes,
            run_flags=run_flags,
            program=program,
        )
        #: Shown once the app is up (e.g. "opened your existing snippet.py").
        self.notice = notice

    def _show_view(self, view: View) -> None:
        self.main.view = view

    # What the keys, the palette's commands and the tests read: the pipeline's.
    @property
    def settings(self) -> Settings:
        return self.pipeline.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.pipeline.settings = settings

    @property
    def passes(self) -> Passes:
        return self.pipeline.passes

    @passes.setter
    def passes(self, passes: Passes) -> None:
        self.pipeline.passes = passes

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

    def request_run(self, reason: str, *, force: bool = True, trace: bool = False) -> None:
        self.pipeline.request_run(reason, force=force, trace=trace)

    # The workers' messages, handed to the pipeline.
    def on_snippet_changed(self, message: SnippetChanged) -> None:
        self.pipeline.on_snippet_changed(message)

    def on_worker_ready(self, message: WorkerReady) -> None:
        self.pipeline.on_worker_ready(message)

    def on_worker_restarted(self, message: WorkerRestarted) -> None:
        self.pipeline.on_worker_restarted(message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.pipeline.on_worker_state_changed(event)

    def on_run_started(self, message: RunStarted) -> None:
        self.pipeline.on_run_started(message)

    def on_progress(self, message: Progress) -> None:
        self.pipeline.on_progress(message)

    def on_diagnostics_ready(self, message: DiagnosticsReady) -> None:
        self.pipeline.on_diagnostics_ready(message)

    def on_run_finished(self, message: RunFinished) -> None:
        self.pipeline.on_run_finished(message)

    def on_run_failed(self, message: RunFailed) -> None:
        self.pipeline.on_run_failed(message)

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, timeout=8)
        if not self.is_headless:
            # A stop signal quits as `q` does and exits 128 + the signal, as the other commands
            # do: SIGTERM's default action would end the process at once, leaving the terminal
            # in the alternate screen, raw and reporting the mouse, the shell unusable until
            # `reset`. SIGINT too: only `kill` sends it, since Ctrl-C in the app's raw terminal is
            # a key. A plain handler rather than the loop's: it runs even while the loop's thread
            # is stuck (in a write, say), and arms the deadline from there.
            self._loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(signum, self._on_signal)
        self.pipeline.start()

    async def on_unmount(self) -> None:
        await self.pipeline.close()

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if driver is LinuxDriver:
            from tui.widgets.terminal import TerminalDriver

            return TerminalDriver
        return driver

    def terminal_gone(self) -> None:
        """The terminal went away under the app (an SSH session dropped, a window closed):
        a hang-up, whether or not the kernel sent SIGHUP."""
        self._arm_deadline(128 + signal.SIGHUP)
        self._stop_signal(signal.SIGHUP)

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._arm_deadline(128 + signum)
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the deadline stands
                loop.call_soon_threadsafe(self._stop_signal, signum)

    def _stop_signal(self, signum: int) -> None:
        # A second signal while closing changes nothing (and must not cancel the close).
        if not self._stopping:
            self._stopping = True
            self.run_worker(self._quit(128 + signum), group="stop-signal")

    def _arm_deadline(self, return_code: int) -> None:
        """However the close goes, the process is gone `STOP_DEADLINE_S` after a stop signal:
        the worker killed, then this process, with no further word to the terminal."""
        if self._deadline is None:
            self._deadline = threading.Timer(STOP_DEADLINE_S, self._hard_stop, args=(return_code,))
            self._deadline.daemon = True
            self._deadline.start()

    def _hard_stop(self, return_code: int) -> None:
        kill_now = getattr(self.engine, "kill_now", None)
        if kill_now is not None:
            with contextlib.suppress(Exception):
                kill_now()
        give_back = getattr(self._driver, "give_back_now", None)
        if give_back is not None:
            with contextlib.suppress(Exception):
                give_back()
        os._exit(return_code)

    _loop: asyncio.AbstractEventLoop | None = None
    _deadline: threading.Timer | None = None
    _stopping = False

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Textual's notify, made safe for text we did not write: toasts quote file names and
        exception messages, so control characters are made visible, and markup is off unless
        asked for (a `[/]` in an error would otherwise raise, and `[b]` vanish)."""
        super().notify(visible(message), title=visible(title), severity=severity, timeout=timeout, markup=markup)

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
        if action == "toggle_device":
            cuda = self.hello is not None and self.hello.cuda_available
            # Shown but disabled without cuda, unless already on cuda (e.g. from the CLI).
            return True if cuda or self.settings.device == "cuda" else None
        if action == "move_line":
            # Only while the line cursor's pane has the focus on the main screen: otherwise the
            # arrow falls through to what it does there (scroll a pane, move in a list).
            return self.screen is self.main and self.main.line_cursor_focused
        return True

    # Settings: each change reruns at once.
    def _change(self, settings: Settings, what: str) -> None:
        self.settings = settings
        self.pipeline.toggled(what)  # a program's own argument for it is replaced from now on
        self.request_run(f"{what} changed")

    def action_toggle_fullgraph(self) -> None:
        self._change(replace(self.settings, fullgraph=not self.settings.fullgraph), "fullgraph")

    def action_cycle_dynamic(self) -> None:
        self._change(replace(self.settings, dynamic=cycle(DYNAMICS, self.settings.dynamic)), "dynamic")

    def action_cycle_backend(self) -> None:
        self._change(replace(self.settings, backend=cycle(self.backends, self.settings.backend)), "backend")

    def action_cycle_mode(self) -> None:
        self._change(replace(self.settings, mode=cycle(MODES, self.settings.mode)), "mode")

    def action_toggle_device(self) -> None:
        device = "cpu" if self.settings.device == "cuda" else "cuda"
        self._change(replace(self.settings, device=device), "device")

    def action_cycle_ranks(self) -> None:
        self._change(replace(self.settings, ranks=cycle(RANK_CHOICES, self.settings.ranks)), "ranks")

    def action_cycle_toggle_target(self) -> None:
        """A program's callable: the panes show it and the toggles act on it; every callable
        (the totals) first, then each of the last report's in turn. Across ranks: the rank the
        panes show, each in turn."""
        report = self.pipeline.shown_report()
        if report is not None and report.world_size is not None and report.ranks:
            now = self.pipeline.shown_rank or 0
            self.pipeline.shown_rank = (now + 1) % len(report.ranks)
            self.pipeline.publish()
            self.notify(f"showing rank {self.pipeline.shown_rank} of {len(report.ranks)}", timeout=3)
            return
        keys = program_words.keys(report) if report is not None and report.kind == "program" else ()
        if not keys:
            what = "the file runs as a snippet" if not self.pipeline.view_program else "no compiled callable yet"
            self.notify(f"o picks the compiled callable the toggles act on: {what}", timeout=4)
            return
        options: list[str | None] = [None, *keys]
        now = self.pipeline.toggle_target
        after = options[(options.index(now) + 1) % len(options)] if now in options else None
        self.pipeline.toggle_target = after
        words = after or "every callable"
        if self.pipeline.toggled_settings:
            self.request_run(f"toggles on {words}")
        else:
            self.pipeline.publish()
            self.notify(f"showing {words}; the setting keys now act on it", timeout=4)

    def action_toggle_kernels(self) -> None:
        self._toggle_pass("kernels", "kernels profile")

    def action_toggle_guard_what_if(self) -> None:
        self._toggle_pass("guard_what_if", "guard what-if")

    def _toggle_pass(self, name: str, words: str) -> None:
        self.passes = self.passes.toggled(name)
        self.request_run(f"{words} " + ("on" if getattr(self.passes, name) else "off"))

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
        self.request_run("rerun")

    def action_show_pane(self, pane: str) -> None:
        self.main.show_pane(pane)
        self.pipeline.presenting.pane(pane)  # followers see where the presenter is
        if pane == "dynamo_code" and not self.passes.dynamo_code:
            # The worker decompiles Dynamo's code only when asked: it costs time.
            self.passes = replace(self.passes, dynamo_code=True)
            if self.settings.ranks == 1:  # a run across ranks has none to show: asked for the next at 1
                self.request_run("dynamo code")

    def action_step_graph(self, step: int) -> None:
        self.main.step_graph(step)

    def action_matrix(self) -> None:
        lock = self.pipeline.hold_runs("settings matrix (x)")
        cells = combinations(self.settings)
        screen = MatrixScreen(self.engine, lock, self.snippet, cells, clock=self.pipeline.clock, base=self.settings)
        # Closing restores the normal view; unless a save already asked for this very run.
        self.push_screen(screen, lambda _: self.request_run("matrix closed", force=False))

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
        self._change(settings, "config")

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
        lock = self.pipeline.hold_runs("fixes (F)")
        screen = FixesScreen(self.engine, lock, self.snippet, self.settings, self.run_flags, ask)
        self.push_screen(screen, self._apply_fix)

    def _apply_fix(self, change: Applied | None) -> None:
        """A config or dynamic remedy chosen in the fixes screen, toggled on the session's
        settings (off when it is already on); the normal view reruns either way."""
        if change is None:
            self.request_run("fixes closed", force=False)
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
        self._change(settings, "config" if config else "dynamic")

    def action_history(self) -> None:
        self.push_screen(HistoryScreen(self.history))

    def action_export_trace(self) -> None:
        self.notify("rerunning with torch's structured trace on…", timeout=4)
        self.request_run("trace", trace=True)

    def action_export_markdown(self) -> None:
        report = self.pipeline.shown_report()
        if report is None:
            self.notify("no result to write yet", severity="warning")
            return
        self.write_markdown_report(report)

    @work(group="export", exit_on_error=False)
    async def write_markdown_report(self, report: Report) -> None:
        """Off the UI thread: the report reads the snippet for its source lines."""
        path = await asyncio.to_thread(write_markdown, report, Path.cwd(), self.snippet.stem)
        self.notify(f"Markdown report written: {shown(path)}", title="report", timeout=10)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_gallery(self) -> None:
        self.push_screen(GalleryScreen(list_gallery(snippets_dir())), self._open_entry)

    def _open_entry(self, entry: GalleryEntry | None) -> None:
        if entry is None:
            return
        try:
            path, created = open_copy(entry.path, Path.cwd())
        except OSError as exc:
            self.notify(f"could not copy {entry.name}: {exc}", severity="error")
            return
        if created:
            self.notify(f"opened a copy: {path}")
        else:
            self.notify(f"{path.name} already exists here: opened it as it is", severity="warning")
        self.pipeline.open_snippet(path)

    def action_edit(self) -> None:
        """Open the snippet in $VISUAL or $EDITOR; saving reruns (and the watcher sees it too).

        Whatever the editor does, the app comes back: nothing may raise inside `suspend()`,
        which only restores the terminal when its block ends normally."""
        name = "VISUAL" if os.environ.get("VISUAL") else "EDITOR"
        editor = os.environ.get(name, "")
        if not editor.strip():
            self.notify("set $EDITOR (or $VISUAL) to edit from here", severity="warning")
            return
        argv, problem = editor_command(name, editor, self.snippet)
        if problem:
            self.notify(problem, title="edit", severity="error", timeout=10)
            return
        try:
            with self.suspend():
                problem = run_editor(argv)
        except SuspendNotSupported:
            self.notify(
                "this display cannot suspend (a browser?): edit the file elsewhere; saving reruns",
                severity="warning",
            )
            return
        if problem:
            self.notify(problem, title="edit", severity="error", timeout=10)
            return
        self.request_run("edited")
