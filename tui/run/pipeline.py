"""The run pipeline: file changes and key presses become runs on the engine, and the engine's
events come back as messages that update one frozen View.

The parts, each in its own module: the engine (`tui.engine.connection`, its lifecycle a
state machine in `tui.engine.lifecycle`, held through Textual workers by `tui.engine.host`),
which changes become runs and which run is newest (the engine's live-run loop,
`playground.engine.live`, which `watch` uses too), the snippet's text and the run read from
it (`tui.run.snippet`), the reports shown (`tui.run.results`), and how the engine's values
enter the UI (`tui.engine.intake`). The app owns one `RunPipeline` and hands it every message
its workers post (`PlaygroundApp.on_run_message`, one line); `handle` gives each message type its
one handler here. The workers never touch widgets, and the handlers read typed values and
convert nothing.

Every way in (a key's binding, a palette command, a test) changes a run through the same few
verbs: `set` (a setting's new value), `toggle` (a key's step, `tui.run.toggles`), `run`,
`cancel` (lend the engine to the matrix) and `pick` (key o: the callable or rank shown).

A run asked for with `trace=True` (key t) also writes torch's structured trace when it finishes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App

from playground.engine import ranks
from playground.engine.hello import WorkerHello
from playground.engine.history import History
from playground.engine.live import LiveRun, LiveRuns
from playground.engine.passes import Passes
from playground.engine.program import PROGRAM_TOGGLES, focused
from playground.engine.report import Report
from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.settings import Settings
from playground.engine.textsafe import one_line
from playground.engine.wording import program as program_words
from tui.engine.host import EngineHost
from tui.engine.protocol import Engine
from tui.run.arrivals import Arrivals
from tui.run.options import SessionOptions
from tui.run.presenting import Presenting
from tui.run.results import RunResults
from tui.run.snippet import ShownSnippet
from tui.run.toggles import toggle_named
from tui.run.view import RunState, View
from tui.run.watching import SnippetWatching


class RunPipeline(Arrivals):
    """Owns the snippet, the watcher, the run state and the engine's host for `app`, and
    hands each change to `show` as one frozen `View` (the app's main screen shows it). Read
    through the public properties below."""

    def __init__(
        self,
        app: App[Any],
        show: Callable[[View], None],
        snippet: Path,
        engine: Engine,
        settings: Settings,
        options: SessionOptions,
    ) -> None:
        self._app = app
        self._show = show
        self.options = options
        self.settings = settings
        #: What every run asks beyond its report (playground/engine/passes.py): the flags', then
        #: Dynamo's code once the Code pane is opened, the kernels after k, the what-if after u.
        self.passes: Passes = options.passes
        #: The settings the user set (flags, keys, the palette) that replace a program's own
        #: torch.compile arguments; and the one callable they act on (None: all), which key o picks.
        self._toggled = [key for key in PROGRAM_TOGGLES if key in options.pinned]
        self.toggle_target: str | None = options.program.only
        #: Across ranks, the rank the panes show (key o; None: rank 0, the report's top level).
        self.shown_rank: int | None = None
        #: How the newest request runs: "program …" words, or "" for a snippet.
        self._mode = ""
        self._source = ShownSnippet(snippet)
        self._requests = LiveRuns()
        self.engine_host = EngineHost(app, engine, self._requests.is_current)
        self._results = RunResults()
        self._watching = SnippetWatching(app, enabled=options.watch)
        self._run_state = RunState("starting")
        self._started_at: float | None = None
        #: A workshop session the runs are published to (`--present`); inactive without one.
        self.presenting = Presenting(options.present, lambda words: app.notify(words, severity="error", timeout=10))

    # What the app reads.
    @property
    def engine(self) -> Engine:
        return self.engine_host.engine

    @property
    def hello(self) -> WorkerHello | None:
        """The worker's handshake; None while torch is still starting."""
        return self.engine_host.hello

    @property
    def quitting(self) -> bool:
        return self.engine_host.quitting

    @property
    def snippet(self) -> Path:
        return self._source.path

    @property
    def generation(self) -> int:
        """The newest run's number: messages of older ones are dropped."""
        return self._requests.generation

    @property
    def history(self) -> History:
        return self._results.history

    @property
    def clock(self) -> Callable[[], float]:
        return self.options.clock

    @property
    def run_flags(self) -> RunFlags:
        """What the command line asks of every run (--no-timing, --min-run-time)."""
        return self.options.run_flags

    def shown_report(self) -> Report | None:
        """The report `w` writes: the newest the worker made, else the newest good one."""
        return self._results.shown()

    def publish(self) -> None:
        """Build the frozen View from the current state and hand it to `show`."""
        view = View(
            snippet_name=one_line(self.snippet.name),
            source=self._source.text,
            settings=self.settings,
            hello=self.hello,
            run=self._run_state,
            # A program's panes show the callable `o` picked (its own counts), or the totals.
            report=ranks.shown(focused(self._results.good, self.toggle_target if self._mode else None), self.shown_rank)
            if self._results.good is not None
            else None,
            # The Logs and Output panes are built from the attempt: the same rank as the rest.
            attempt=ranks.shown(self._results.attempt, self.shown_rank) if self._results.attempt is not None else None,
            stale=self._results.stale(self.generation, self._source.sha),
            since=self._results.since,
            passes=self.passes,
            program=self._mode,
            toggled=self.toggled_settings,
            toggle_target=self.toggle_target if self._mode else None,
            shown_rank=self.shown_rank,
        )
        self._show(view)

    def show_run(self, state: RunState) -> None:
        self._run_state = state
        self.publish()

    # Lifecycle: the app's mount and unmount.
    def start(self) -> None:
        self._source.refresh()
        # The mode is on screen from the start, before torch is up.
        if self.options.program.run_for(self._source.text, ()) is not None:
            self._mode = self.options.program.words()
        self.publish()
        self._watching.start(self.snippet)
        self.engine_host.start()

    async def close(self) -> None:
        self._watching.stop()
        self.presenting.close()
        await self.shutdown_engine()

    async def shutdown_engine(self) -> None:
        """Stop any run at once and close the engine (see `EngineConnection.shutdown`)."""
        await self.engine_host.shutdown()

    def stop_watching(self) -> None:
        self._watching.stop()

    @property
    def toggled_settings(self) -> tuple[str, ...]:
        return tuple(self._toggled)

    @property
    def view_program(self) -> str:
        """How the newest request runs: "program …", or "" for a snippet."""
        return self._mode

    def open_snippet(self, path: Path) -> None:
        """Switch to another snippet file: its SETTINGS apply, then the command line's flags
        (as at start); the device stays."""
        self._toggled = [key for key in PROGRAM_TOGGLES if key in self.options.pinned]
        self.toggle_target = self.options.program.only
        self._watching.stop()
        self.settings = self._source.open(path, self.settings, dict(self.options.pinned))
        self._results.clear()
        self._watching.start(path)
        self.run("opened", force=True)

    # The verbs: every binding, palette command and test changes a run through these.
    def set(self, what: str, settings: Settings) -> None:
        """A setting's new value, from a key, the palette or a bisection's workaround: from
        now on it replaces what a program passes for `what`, and the file reruns at once."""
        if settings == self.settings:
            return
        self.settings = settings
        if what in PROGRAM_TOGGLES and what not in self._toggled:
            self._toggled.append(what)
        self.run(f"{what} changed")

    def toggle(self, what: str) -> None:
        """A toggle key (`tui.run.toggles`): a setting's next value, or a pass on or off."""
        toggle = toggle_named(what)
        if toggle.step is not None:
            return self.set(what, toggle.step(self.settings, self.hello))
        self.passes = self.passes.toggled(what)
        self.run(f"{toggle.reason} " + ("on" if getattr(self.passes, what) else "off"))

    def ask_for(self, name: str, *, run: bool) -> None:
        """A pass asked for from now on (the Code pane opened asks for Dynamo's code); `run`:
        rerun at once to show it."""
        if not getattr(self.passes, name):
            self.passes = self.passes.toggled(name)
            if run:
                self.run(name.replace("_", " "))

    def pick(self) -> None:
        """Key o. Across ranks: the rank the panes show, each in turn. A program's callable:
        the panes show it and the toggles act on it; every callable (the totals) first, then
        each of the last report's in turn."""
        report = self.shown_report()
        if report is not None and report.world_size is not None and report.ranks:
            # The summary bar names the rank shown: no notice over it.
            self.shown_rank = ((self.shown_rank or 0) + 1) % len(report.ranks)
            self.publish()
            return
        keys = program_words.keys(report) if report is not None and report.kind == "program" else ()
        if not keys:
            what = "the file runs as a snippet" if not self._mode else "no compiled callable yet"
            self._app.notify(f"o picks the compiled callable the toggles act on: {what}", timeout=4)
            return
        options: list[str | None] = [None, *keys]
        now = self.toggle_target
        self.toggle_target = options[(options.index(now) + 1) % len(options)] if now in options else None
        # The summary bar names the callable shown and the settings bar what the toggles act
        # on, and Source scrolls to where it was made: no notice over the bars.
        if self._toggled:
            self.run(f"toggles on {self.toggle_target or 'every callable'}")
        else:
            self.publish()

    # Requests.
    def _supersede(self) -> None:
        """Make whatever is in flight stale; a trace asked for and not yet written is lost."""
        if self._requests.supersede():
            self._app.notify(
                "no trace written: a newer change replaced the trace run (press t again)", severity="warning"
            )

    def run(self, reason: str, *, force: bool = True, trace: bool = False) -> None:
        """Run the file as it is now under the current settings; the newest request wins.

        `trace` asks the engine for torch's structured trace and writes it when the run ends."""
        if self.quitting:
            return  # "quitting…" stays up: nothing new runs
        if not self._source.refresh():
            # Deleted (or mid-rename): whatever reappears must run, even the same bytes.
            self._supersede()
            self._requests.forget()
            self.show_run(RunState("missing", message=f"{one_line(self.snippet.name)} not found"))
            return
        self.settings = self._source.settings_after_edit(self.settings)
        if not self._requests.wanted(self._source.sha, self.settings, force=force):
            return  # an editor's second write of the same bytes: nothing new to learn
        self._supersede()
        if trace:
            self._requests.expect_trace()
        if not self.engine_host.ready:
            # The worker is still starting; `engine_started` runs the newest request. If it
            # failed to start, asking again (r, a save) is how the user retries.
            self.engine_host.retry_start()
            self.show_run(RunState("starting"))
            return
        self.show_run(RunState("queued", message=reason))
        prepared = self._source.prepared(self.settings)
        text = prepared.source.text if prepared.source is not None else None
        program = self.options.program.run_for(text, self.toggled_settings, self.toggle_target)
        self._mode = self.options.program.words() if program is not None else ""
        request = RunRequest(prepared, self.options.run_flags, self.passes, trace=trace, program=program)
        self.engine_host.send(LiveRun(self.generation, self.snippet, request))

    def cancel(self, why: str) -> asyncio.Lock:
        """Lend the engine to something else (the settings matrix): the run in flight is
        cancelled and made stale, and normal runs wait on the returned lock, which the
        borrower holds while it uses the engine. Afterwards, `run` restores the view."""
        self._supersede()
        self._requests.forget()  # the rerun afterwards must run, even unchanged bytes
        lock = self.engine_host.lend()
        self.show_run(RunState("paused", message=why))
        return lock
