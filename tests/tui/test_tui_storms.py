"""A save storm through the app, on the real torch worker and the real file watcher: 100
atomic replaces (vim, VS Code) then 50 in-place writes, in bursts that land while runs are in
flight. Keys keep working during the storm; afterwards the app shows the final content's
report, not marked stale, and no view ever showed an older version after a newer one.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from tui_fakes import bar_text, pane_text

from playground.engine.client import WorkerClient
from tests.faults import GOOD
from tui.factory import make_app
from tui.run.view import View

REPLACES = 100
IN_PLACE = 50
BURST = 10
#: The pause after each burst: a little over the watcher's 0.05 s debounce, so a run starts
#: and the next burst supersedes it mid-run.
PAUSES_S = (0.06, 0.1, 0.15, 0.25)
WAIT_S = 90.0
#: The slowest a tab key may take to show its tab while the storm rages.
KEY_LATENCY_S = 3.0


def version(n: int) -> str:
    return GOOD + f"# version {n}\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def replace_save(path: Path, n: int) -> None:
    tmp = path.with_name(f".snippet.py.{n}.swp")
    tmp.write_text(version(n))
    os.replace(tmp, path)


def in_place_save(path: Path, n: int) -> None:
    with open(path, "w") as fh:
        fh.write(version(n))


def describe(view: View) -> str:
    report, attempt = view.report, view.attempt
    return (
        f"run={view.run}; report={report.content_sha256[:8] if report else None} stale={view.stale}; "
        f"attempt={attempt.content_sha256[:8] if attempt else None} error={view.error}"
    )


async def wait_until(pilot, predicate, what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; {describe(pilot.app.main.view)}")
        await pilot.pause(0.05)


def assert_never_back(views: list[View], order: dict[str, int], which: str) -> None:
    """The versions `which` (report or attempt) showed never go back to an older one."""
    newest = -1
    for index, view in enumerate(views):
        shown = getattr(view, which)
        n = order.get(shown.content_sha256) if shown is not None else None
        if n is None:
            continue  # nothing yet, or bytes caught mid-write (no version): not ordered
        assert n >= newest, f"view {index} shows {which} of version {n} after version {newest} was shown"
        newest = n


async def test_save_storm_through_the_app(tmp_path: Path):
    path = tmp_path / "snippet.py"
    path.write_text(version(0))
    order = {sha(version(n)): n for n in range(REPLACES + IN_PLACE + 1)}
    app = make_app(path, engine=WorkerClient(timeout_s=30), watch=True)
    # Pilot waits out animations after a key: without them the latency is the app's own.
    app.animation_level = "none"
    views: list[View] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(
            pilot,
            lambda: app.main.view.report is not None and app.main.view.report.content_sha256 == sha(version(0)),
            "the first run",
            timeout=120,
        )

        def record(view: View) -> None:
            views.append(view)

        # Every View the screen is given, in order: the watch sees each assignment.
        app.main.watch(app.main, "view", record, init=False)
        keys = ("2", "3", "9", "1")
        latencies: list[float] = []
        for n in range(1, REPLACES + IN_PLACE + 1):
            (replace_save if n <= REPLACES else in_place_save)(path, n)
            if n % BURST == 0:
                burst = n // BURST
                await pilot.pause(PAUSES_S[burst % len(PAUSES_S)])
                key = keys[burst % len(keys)]
                tab = app.main.deck.current
                started = time.monotonic()
                await pilot.press(key)
                await wait_until(
                    pilot,
                    lambda key=key, before=tab: app.main.deck.current != before or key == "1" and before == "source",
                    f"key {key} during the storm (after version {n})",
                    timeout=10,
                )
                latencies.append(time.monotonic() - started)
        assert path.read_text() == version(REPLACES + IN_PLACE)
        final = sha(version(REPLACES + IN_PLACE))

        def shows_final() -> bool:
            view = app.main.view
            return view.report is not None and view.report.content_sha256 == final and view.run.kind == "done"

        await wait_until(pilot, shows_final, f"the final version's report ({final[:8]})")
        await pilot.pause(1.0)  # a late result of an older version would land here
        view = app.main.view
        assert shows_final(), f"the final report was replaced: {describe(view)}"
        assert not view.stale and view.error is None and view.attempt is view.report, describe(view)
        assert view.report.graph_count == 1 and view.report.equivalence.ok, describe(view)
        summary = bar_text(app)
        assert "STALE" not in summary and "graphs 1  breaks 0" in summary, summary
        assert f"# version {REPLACES + IN_PLACE}" in pane_text(app, "source")

    assert max(latencies) < KEY_LATENCY_S, f"keys were slow during the storm: {[round(s, 2) for s in latencies]}"
    assert len(views) > 10, f"only {len(views)} views recorded: the watcher missed the storm?"
    assert_never_back(views, order, "report")
    assert_never_back(views, order, "attempt")
