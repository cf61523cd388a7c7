"""What a follower holds: the presenter's runs so far, which one is on screen, whether the screen
follows the newest, and what the presenter is doing. Pure: `FollowApp` feeds it the session's
news and draws the `View` and the follow bar it returns.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from rich.text import Text

from playground.engine import ranks
from playground.engine.hello import WorkerHello
from playground.engine.history import History
from playground.engine.session import PresenterState, PublishedRun
from playground.engine.textsafe import visible
from tui.engine.intake import source_text, visible_report, visible_value
from tui.keys.table import PANES
from tui.panes.common import BAD, DIM, GOOD, WARN
from tui.run.compare import since_previous
from tui.run.results import is_good, short_error
from tui.run.view import RunState, View

_PANE_TITLES = dict(PANES)


class Following:
    """The runs in the order the presenter made them; `position` indexes the one shown; `live`
    means a new run is shown as soon as it lands (the default, until the user steps back)."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.runs: list[PublishedRun] = []
        self.position = -1
        self.live = True
        self.presenter: PresenterState | None = None
        #: Whether a presenter was ever seen: "waiting for the presenter" until then.
        self.seen_presenter = False
        self.history = History()
        self.problem = ""
        #: Across ranks: the rank the panes show (None: rank 0, the report's top level).
        self.shown_rank: int | None = None

    def add(self, runs: tuple[PublishedRun, ...]) -> None:
        """New runs, oldest first, made safe for the terminal once, here: every string the
        presenter's folder gave (the report, the settings, the names) shown as text."""
        for run in runs:
            safe = replace(
                run,
                report=visible_report(run.report),
                snippet_name=visible(run.snippet_name),
                settings=visible_value(run.settings),
            )
            self.runs.append(safe)
            self.history.add(safe.report, source_text(safe.source.encode("utf-8", "replace")), at=safe.at)
        if self.runs and (self.live or self.position < 0):
            self.position = len(self.runs) - 1

    def presenter_is(self, presenter: PresenterState | None) -> None:
        if presenter is not None:
            self.seen_presenter = True
            # The handshake goes to the top bar (torch version, device): as text, like the rest.
            presenter = replace(presenter, hello=_visible_hello(presenter.hello))
        self.presenter = presenter

    @property
    def shown(self) -> PublishedRun | None:
        return self.runs[self.position] if 0 <= self.position < len(self.runs) else None

    def step(self, by: int) -> bool:
        """Show an earlier (-1) or later (+1) run; stepping to the newest follows again."""
        if not self.runs:
            return False
        position = max(0, min(len(self.runs) - 1, self.position + by))
        moved = position != self.position
        self.position = position
        self.live = position == len(self.runs) - 1
        return moved

    def go_live(self) -> None:
        self.live = True
        self.position = len(self.runs) - 1

    def next_rank(self) -> int | None:
        """Across ranks: the next rank of the shown run for the panes, round to rank 0; None
        when the shown run is not across ranks."""
        run = self.shown
        if run is None or run.report.world_size is None or not run.report.ranks:
            return None
        self.shown_rank = ((self.shown_rank or 0) + 1) % len(run.report.ranks)
        return self.shown_rank

    @property
    def presenter_gone(self) -> bool:
        """The presenter quit, or their process died without saying so."""
        return self.seen_presenter and (self.presenter is None or not self.presenter.present)

    def view(self) -> View:
        """The main screen's value for the shown run, as the presenter's app showed it: an
        error run keeps the last good report under it, marked STALE."""
        run = self.shown
        hello = self.presenter.hello if self.presenter else None
        if run is None:
            words = (
                "presenter has left before any run" if self.presenter_gone else "waiting for the presenter's first run"
            )
            return View(snippet_name="(no run yet)", hello=hello, run=RunState("idle", message=words))
        good = next((r for r in reversed(self.runs[: self.position + 1]) if is_good(r.report)), None)
        report = run.report
        if is_good(report):
            state = RunState("done", duration_s=report.duration_s or report.wall_s)
        else:
            state = RunState("error", message=short_error(report))
        entry = self.history.entries[self.position] if len(self.history.entries) == len(self.runs) else None
        return View(
            snippet_name=run.snippet_name,
            source=source_text(run.source.encode("utf-8", "replace")),
            settings=run.settings,
            hello=hello or WorkerHello(torch_version=report.torch_version),
            run=state,
            report=ranks.shown(good.report, self.shown_rank) if good else None,
            attempt=ranks.shown(report, self.shown_rank),
            stale=good is not None and good is not run,
            since=since_previous(self.history, entry) if entry is not None and good is run else None,
            shown_rank=self.shown_rank if report.world_size is not None else None,
        )

    def bar(self, now: float | None = None) -> Text:
        """The follow bar: which run is shown of how many, where the presenter is, and whether
        they are still presenting."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("following ", style=DIM)
        total = len(self.runs)
        run = self.shown
        if run is not None:
            text.append(f"run #{run.number} of {self.runs[-1].number}", style="bold")
            if not self.live:
                newer = total - 1 - self.position
                text.append(f"  {newer} newer (l: live)", style=f"bold {WARN}")
        else:
            text.append("no run yet", style="bold")
        presenter = self.presenter
        text.append("  |  ", style=DIM)
        if self.presenter_gone:
            if presenter is not None and presenter.ended_at:
                when = time.strftime("%H:%M", time.localtime(presenter.ended_at))
                text.append(f"the presenter left at {when}: runs kept, p forks", style=f"bold {BAD}")
            else:
                text.append("the presenter has gone (their app stopped): runs kept, p forks", style=f"bold {BAD}")
        elif presenter is None:
            text.append(f"waiting for a presenter in {visible(self.session)}", style=WARN)
        else:
            who = visible(presenter.user) or "presenter"
            text.append(f"{who}: ", style=GOOD)
            text.append(f"on run #{presenter.run}" if presenter.run else "no run yet")
            if presenter.pane:
                text.append(f", {_PANE_TITLES.get(presenter.pane, visible(presenter.pane))} pane")
            if total and self.live:
                text.append("  (you are live)", style=DIM)
        if self.problem:
            text.append(f"  {visible(self.problem)}", style=WARN)
        return text


def _visible_hello(hello: WorkerHello | None) -> WorkerHello | None:
    """The presenter's handshake with every string in it made visible."""
    return None if hello is None else WorkerHello.from_dict(_visible_json(hello.to_dict()))


def _visible_json(value: Any) -> Any:
    """A JSON value from the folder with every string, keys included, made visible."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(str(k)): _visible_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_visible_json(v) for v in value]
    return value
