"""`s` from a failing Equiv verdict: torch's compiler bisector on the snippet, live. Each step is
a fresh process (playground/worker/run/bisection/bisect.py) that judges eager against Inductor with our
verdict; the screen shows each step as it lands, then what was found (backend, subsystem, the
n-th application, torch's debug info, the snippet line) and the workaround, which `a` applies
to the app's settings and reruns. escape cancels (the bisection's process group is killed) or
closes; q quits the app from here too, as in every other phase of a run.

The bisection runs in a Textual worker that posts messages; only their handlers touch widgets.
`bisector` is injected (engine/bisecting.py's `bisect` in the app, a fake under Pilot)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from playground.engine.bisecting import BisectFailed
from playground.engine.events import BisectProgress
from playground.engine.report.bisection import BisectResult
from playground.engine.textsafe import visible
from tui.widgets.display import Bar

#: What runs a bisection: (snippet, config pairs, on_step, settings=pairs) -> its result; the
#: settings (fullgraph, dynamic, mode, target) are the ones the failing verdict ran under.
Bisector = Callable[..., Awaitable[BisectResult]]


def result_words(result: BisectResult) -> list[str]:
    """What the bisection found, a line per fact, for the screen (and its tests)."""
    b = result.bisection
    if b is None:
        return [f"nothing to bisect: {result.reason or 'eager and compiled agree'}"]
    where = f"backend {b.backend}" + (f", subsystem {b.subsystem}" if b.subsystem else "")
    lines = [f"found: {where}"]
    # A subsystem that is one config switch comes back with number 0 and its own name as the
    # debug info: nothing was counted, so neither is news.
    switch = b.subsystem is not None and b.debug_info == b.subsystem
    if b.bisect_number is not None and not switch:
        lines.append(
            f"its application number {b.bisect_number} (torch counts from 0) is the first that makes values differ"
        )
    if b.debug_info and not switch:
        lines.append(f"torch's debug info: {b.debug_info}")
    if b.line is not None:
        lines.append(f"snippet line: {b.line}")
    if b.first_diverging_op is not None:
        lines.append(b.first_diverging_op.words())
    lines.append(f"after {b.steps} steps, each a fresh process")
    return lines


def workaround_words(result: BisectResult) -> str:
    config = workaround_config(result)
    if not config:
        return "no config switch turns this subsystem off: the op and line above are where to look"
    flags = " ".join(f"{k}={json.dumps(v)}" for k, v in config)
    return f"workaround: {flags}  (a applies it and reruns)"


def workaround_config(result: BisectResult) -> tuple[tuple[str, Any], ...]:
    b = result.bisection
    config = (b.workaround or {}).get("config") if b is not None else None
    if not isinstance(config, dict):
        return ()
    return tuple(sorted((str(k), v) for k, v in config.items()))


class StepList(Widget):
    """The steps, newest last: as many of the newest as its height holds, read at render time,
    so the last step stays shown once the result below takes its rows."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's own name
        super().__init__(id=id)
        self.lines: list[str] = []

    def show(self, lines: list[str]) -> None:
        self.lines = lines
        self.refresh()

    def render(self) -> Text:
        rows = self.size.height or len(self.lines)
        return Text("\n".join(self.lines[-rows:]) if rows else "")  # plain: no markup read


class BisectScreen(Screen[tuple[tuple[str, Any], ...] | None]):
    """Bisects `path` under `config`; dismissed with the workaround's config when `a` applies it."""

    BINDINGS = [
        Binding("escape", "close", "cancel/close", tooltip="Cancel the bisection, or close it", id="bisect-close"),
        Binding("a", "apply", "apply workaround", tooltip="Apply the workaround's config and rerun", id="bisect-apply"),
        # q is the app's quit here too: a bisection is a phase a user may want out of at once.
        Binding("q", "quit", "quit", tooltip="Stop the bisection and the worker, and leave", id="bisect-quit"),
    ]

    DEFAULT_CSS = """
    BisectScreen #bisect-title { background: $primary 30%; text-style: bold; }
    BisectScreen #bisect-state { background: $boost; text-style: bold; }
    BisectScreen #bisect-steps { height: 1fr; padding: 0 1; color: $text-muted; }
    BisectScreen #bisect-result { height: auto; padding: 0 1; text-style: bold; }
    """

    @dataclass
    class Stepped(Message):
        step: BisectProgress

    @dataclass
    class Ended(Message):
        result: BisectResult | None
        problem: str = ""

    def __init__(
        self,
        path: Path,
        config: tuple[tuple[str, Any], ...],
        bisector: Bisector,
        settings: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        super().__init__()
        self.path = path
        self.config = config
        self.settings = settings
        self.bisector = bisector
        self.steps: list[BisectProgress] = []
        self.result: BisectResult | None = None
        self.problem = ""
        self.running = True

    def compose(self) -> ComposeResult:
        name = visible(self.path.name)
        yield Bar(f"bisect {name}: where compiled values start to differ", id="bisect-title")
        yield Bar("starting the bisection (each step a fresh process)…", id="bisect-state")
        yield StepList(id="bisect-steps")
        yield Static(id="bisect-result")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.run_bisection()

    @work(exclusive=True, group="bisect")
    async def run_bisection(self) -> None:
        try:
            result = await self.bisector(
                str(self.path), self.config, lambda step: self.post_message(self.Stepped(step)), settings=self.settings
            )
        except BisectFailed as exc:
            self.post_message(self.Ended(None, str(exc)))
            return
        except OSError as exc:
            self.post_message(self.Ended(None, f"the bisection could not start: {exc}"))
            return
        self.post_message(self.Ended(result))

    def on_bisect_screen_stepped(self, message: Stepped) -> None:
        self.steps.append(message.step)
        # The footer says escape cancels; the step's words fill the bar's 80 columns.
        self.query_one("#bisect-state", Bar).update(f"bisecting… {message.step.words()}")
        self._show_steps()

    def _show_steps(self) -> None:
        self.query_one("#bisect-steps", StepList).show([s.words() for s in self.steps])

    def on_bisect_screen_ended(self, message: Ended) -> None:
        self.running = False
        self.result, self.problem = message.result, message.problem
        state = self.query_one("#bisect-state", Bar)
        shown = self.query_one("#bisect-result", Static)
        if message.result is None:
            state.update("the bisection did not finish")
            shown.update(visible(message.problem))
            return
        state.update(f"done after {len(self.steps)} progress step(s)  (escape closes)")
        lines = result_words(message.result)
        if message.result.bisection is not None:
            lines.append(workaround_words(message.result))
        shown.update(visible("\n".join(lines)))

    def action_apply(self) -> None:
        if self.running or self.result is None:
            self.notify("no workaround yet: the bisection is still running", timeout=3)
            return
        config = workaround_config(self.result)
        if not config:
            self.notify("no config switch to apply for what was found", timeout=4)
            return
        self.dismiss(config)

    async def action_quit(self) -> None:
        self.workers.cancel_group(self, "bisect")  # the bisector's finally kills the group
        await self.app.action_quit()  # type: ignore[attr-defined] - the playground's own quit

    async def action_close(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "bisect")  # the bisector's finally kills the group
            self.running = False
            self.query_one("#bisect-state", Bar).update("cancelled: no step left running  (escape closes)")
            return
        self.dismiss(None)
