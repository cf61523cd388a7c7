"""`compile-playground follow SESSION`: the presenter's runs, read-only, on the attendee's screen.

The same screen as the app (panes, keys, history), fed from the session folder instead of a
worker: a follower starts no worker and never imports torch or the engine's client (the
import contracts in pyproject.toml and tests/tui/test_follow_imports.py hold it to that), so a
room of followers costs a room of small Textual apps. `p` forks the demo: the shown run's
snippet is copied to a new file and the app exits with it, for the command line to open the
attendee's own playground on (`playground.cli.followcmd`). That playground runs the presenter's
code as the attendee, so `p` says so first and waits for a yes (`ForkConfirm`).
"""

from __future__ import annotations

import asyncio
import getpass
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from playground.engine.session import PublishedRun, SessionReader, fork_path, write_new_file
from playground.engine.settings import Settings
from tui.keys.table import FOLLOW_BINDINGS
from tui.panes.common import DIM
from tui.run.view import View
from tui.screens.history import HistoryScreen
from tui.screens.main import MainScreen
from tui.widgets.display import Bar
from tui.widgets.notify import SafeNotify
from tui.workshop.follower_state import Following

#: Seconds between two looks at the session folder: the newest run is on screen at most this
#: long (plus a frame) after the presenter's report (one small file read per look).
POLL_S = 0.1
#: Seconds between two checks that a presenter who has not said goodbye still runs.
ALIVE_S = 1.0


@dataclass(frozen=True)
class Fork:
    """What `p` made: the attendee's new file and the settings the presenter's run used."""

    path: Path
    settings: Settings
    run: int


class FollowScreen(MainScreen):
    """The main screen with the follow bar on top (which run is shown, where the presenter is),
    and the presenter's settings as words: the follower has no keys to change them."""

    DEFAULT_CSS = """
    FollowScreen #following { background: $secondary 30%; }
    """

    #: The follow bar's text, kept for when the screen is first mounted.
    follow_bar: Text = Text()

    def compose(self) -> ComposeResult:
        yield Bar(id="following")
        yield from super().compose()

    def on_mount(self) -> None:
        # MainScreen's own on_mount runs too (Textual calls each class's handler); the bars
        # exist from here on, which is what its `_ready` says.
        self.query_one("#following", Bar).update(self.follow_bar)

    def show_follow_bar(self, text: Text) -> None:
        self.follow_bar = text
        if self._ready:
            # A poll that lands while the app shuts down finds the screen's widgets gone.
            for bar in self.query("#following").results(Bar):
                bar.update(text)

    def watch_view(self, view: View) -> None:
        super().watch_view(view)
        if self._ready:
            self.query_one("#settings", Bar).update(presenter_settings(view))


def presenter_settings(view: View) -> Text:
    """The settings the shown run used, as words (no key letters: nothing to toggle here)."""
    text = Text("presenter's settings: ", style=DIM, no_wrap=True, overflow="ellipsis")
    if view.attempt is None:
        text.append("none yet (no run)", style=DIM)
        return text
    text.append(view.settings.label().replace("  ", " "), style="bold")
    return text


def _attendee() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry for this uid, no LOGNAME
        return "you"


class ForkConfirm(ModalScreen[str]):
    """Before a fork runs anything: whose code it is and whose permissions it runs with. Returns
    "run" (y), "copy" (c: write the file only, keep following) or "" (n, escape)."""

    DEFAULT_CSS = """
    ForkConfirm { align: center middle; }
    ForkConfirm > Vertical { width: 78; height: auto; border: thick $warning; background: $surface; padding: 0 1; }
    """
    BINDINGS = [
        Binding("y", "choose('run')", "fork and run"),
        Binding("c", "choose('copy')", "copy only"),
        Binding("n,escape", "choose('')", "cancel"),
    ]

    def __init__(self, run: PublishedRun, name: str) -> None:
        super().__init__()
        self.run_number = run.number
        self.file_name = name

    def compose(self) -> ComposeResult:
        text = Text()
        text.append(f"Fork run #{self.run_number}: run the presenter's code as {_attendee()}?\n\n", style="bold")
        text.append(f"y copies the shown snippet to {self.file_name} and opens your own playground on it, ")
        text.append("which runs that code at once, as you: with your files and your permissions. ", style="bold")
        text.append("It is the presenter's code, not yours; read it in the Source pane first if unsure.\n\n")
        text.append("y", style="bold")
        text.append(" fork and run it   ")
        text.append("c", style="bold")
        text.append(" only write the copy   ")
        text.append("n", style="bold")
        text.append(" cancel")
        with Vertical():
            yield Static(text, id="fork-confirm")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class FollowApp(SafeNotify[Fork | None]):
    """Follows the session folder `session`; forks go to `directory`. Returns the `Fork` made,
    or None when the user quit."""

    CSS_PATH = "../app.tcss"
    TITLE = "compile-playground follow"
    BINDINGS = FOLLOW_BINDINGS

    def __init__(
        self,
        session: str | Path,
        *,
        directory: Path | None = None,
        poll_s: float = POLL_S,
        notice: str = "",
        stay_after_fork: bool = False,
        confirm_run: bool = True,
    ) -> None:
        super().__init__()
        self.notice = notice
        #: Keep following after `p` and only say where the copy is: in a browser (`serve`) there
        #: is no terminal for the attendee's own playground to take over.
        self.stay_after_fork = stay_after_fork
        #: Ask before a fork that will run the presenter's code (`ForkConfirm`); a fork that
        #: only writes the copy (the browser, --no-play) runs nothing and does not ask.
        self.confirm_run = confirm_run and not stay_after_fork
        self.reader = SessionReader(session)
        self.following = Following(str(session))
        self.directory = Path.cwd() if directory is None else directory
        self.main = FollowScreen()
        self._poll_s = poll_s
        self._polling = False
        self._gone = False

    def get_default_screen(self) -> Screen:
        return self.main

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, timeout=8)
        self.show()
        self.set_interval(self._poll_s, self.poll)
        self.set_interval(ALIVE_S, self._check_alive)
        self.call_later(self.poll)

    def show(self) -> None:
        """Draw the shown run and the follow bar."""
        self.main.view = self.following.view()
        self.main.show_follow_bar(self.following.bar())

    async def poll(self) -> None:
        """Read what the presenter published since the last look (off the UI thread)."""
        if self._polling:
            return
        self._polling = True
        try:
            news = await asyncio.to_thread(self.reader.poll)
        finally:
            self._polling = False
        if news is None:
            return
        self.following.presenter_is(news.presenter)
        self.following.add(news.runs)
        problems = news.problems
        self.following.problem = problems[0] if len(problems) == 1 else ""
        if len(problems) > 1:
            self.following.problem = f"{len(problems)} entries skipped: {problems[0]} (and more)"
        if problems:
            self.notify("\n".join(problems[:3]), title="skipped", severity="warning", timeout=8)
        self._gone = self.following.presenter_gone
        self.show()

    def _check_alive(self) -> None:
        # A presenter killed (or whose terminal closed) says nothing in the folder: ask the OS.
        gone = self.following.presenter_gone
        if gone != self._gone:
            self._gone = gone
            self.show()

    @property
    def shown_run(self) -> int | None:
        """The number of the run on screen (the tests read it)."""
        run = self.following.shown
        return run.number if run else None

    # Keys.
    def action_step_run(self, by: int) -> None:
        if self.following.step(by):
            self.show()

    def action_live(self) -> None:
        self.following.go_live()
        self.show()

    def action_next_rank(self) -> None:
        rank = self.following.next_rank()
        if rank is None:
            self.notify("o shows each rank in turn: the shown run is not across ranks", timeout=3)
            return
        self.show()
        self.notify(f"showing rank {rank}", timeout=3)

    def action_show_pane(self, pane: str) -> None:
        self.main.show_pane(pane)

    def action_step_graph(self, step: int) -> None:
        self.main.step_graph(step)

    def action_history(self) -> None:
        self.push_screen(HistoryScreen(self.following.history))

    def action_fork(self) -> None:
        run = self.following.shown
        if run is None:
            self.notify("nothing to fork yet: the presenter has not run anything", severity="warning")
            return
        if not self.confirm_run:
            self._fork(run, "copy" if self.stay_after_fork else "run")
            return
        dest = fork_path(self.directory, run.snippet_name, run.number)
        self.push_screen(ForkConfirm(run, dest.name), callback=lambda choice: self._fork(run, choice or ""))

    def _fork(self, run: PublishedRun, choice: str) -> None:
        """Write the copy of `run`, then ("run") exit for the playground to open, or ("copy")
        say where it is and keep following; "" is a cancelled fork."""
        if not choice:
            self.notify("fork cancelled: nothing written, nothing run", timeout=4)
            return
        dest = fork_path(self.directory, run.snippet_name, run.number)
        try:
            path = write_new_file(dest, run.source.encode("utf-8", "surrogateescape"))
        except (OSError, UnicodeError) as exc:
            self.notify(f"could not write your copy: {exc}", severity="error", timeout=10)
            return
        if choice == "copy":
            self.notify(
                f"your copy of run #{run.number}: {path}\nopen it in your own playground: compile-playground {path.name}",
                title="forked",
                timeout=20,
            )
            return
        self.exit(Fork(path, run.settings, run.number))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if isinstance(self.screen, (HistoryScreen, ForkConfirm)) and action != "quit":
            return False
        return True
