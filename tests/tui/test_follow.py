"""A workshop in one test process: a presenter's app (fake engine) publishing to a real session
folder, and followers (`FollowApp`) reading it, each driven by Pilot."""

from __future__ import annotations

import json
import os
import threading
import time
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

import pytest
from tui_fakes import FakeEngine, bar_text, pane_text, settle

from playground.engine.report import Report
from playground.engine.session import PublishedRun, SessionReader, SessionWriter
from playground.engine.settings import Settings
from tui.engine.messages import SnippetChanged
from tui.factory import make_app
from tui.keys.table import FOLLOW_TABLE, markdown_table
from tui.workshop.follower import FollowApp, Fork

#: The newest run is on every follower's screen within this long of the presenter's report
#: (the follower looks every 0.1 s, and shows it 0.1-0.3 s after in benchmarks/workshop.py; the rest is slack for four apps in one event loop on a loaded two-core CI machine).
NEWEST_WITHIN_S = 3.0


def save(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


async def wait_for(pilots, condition, timeout: float = NEWEST_WITHIN_S) -> float:
    """Let every app run until `condition()` holds; the seconds it took."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError("not within the time allowed")
        for pilot in pilots:
            await pilot.pause(0.01)
    return time.monotonic() - start


def follow_bar(app: FollowApp) -> str:
    return bar_text(app, "following")


async def test_presenter_and_three_followers(snippet: Path, tmp_path: Path):
    session = tmp_path / "session"
    presenter = make_app(snippet, engine=FakeEngine(), watch=False, present=SessionWriter(session))
    followers = [FollowApp(session, directory=tmp_path) for _ in range(3)]
    seen: list[list[int]] = [[] for _ in followers]
    async with AsyncExitStack() as stack:
        boss = await stack.enter_async_context(presenter.run_test(size=(80, 24)))
        pilots = [await stack.enter_async_context(app.run_test(size=(80, 24))) for app in followers]
        everyone = [boss, *pilots]

        def record() -> None:
            for app, numbers in zip(followers, seen):
                if app.shown_run is not None and (not numbers or numbers[-1] != app.shown_run):
                    numbers.append(app.shown_run)

        await settle(boss)
        await wait_for(everyone, lambda: (record(), all(app.shown_run == 1 for app in followers))[1])
        for app in followers:
            assert "graphs 2  breaks 1" in bar_text(app)
            assert "BREAK: Data-dependent branching" in pane_text(app, "source")

        # Three saves: the fix, the break back, the fix again. Each follower shows each in turn.
        texts = [snippet.read_text().replace("if y.sum() > 0:", "if True:"), snippet.read_text()]
        texts.append(texts[0])
        for number, text in enumerate(texts, start=2):
            save(snippet, text)
            presenter.post_message(SnippetChanged())
            await settle(boss)
            published = time.monotonic()
            took = await wait_for(everyone, lambda n=number: (record(), all(a.shown_run == n for a in followers))[1])
            assert took <= NEWEST_WITHIN_S
            assert time.monotonic() - published <= NEWEST_WITHIN_S
        for app in followers:
            assert "graphs 1  breaks 0" in bar_text(app)
            assert "if True:" in pane_text(app, "source")
            assert "l: live" not in follow_bar(app)
        # In order, none skipped here (runs were seconds apart), none shown twice.
        assert seen == [[1, 2, 3, 4]] * 3

        # Each follower has its own pane and position: one steps back, another switches pane.
        await pilots[0].press("comma")
        await pilots[0].pause()
        assert followers[0].shown_run == 3 and "1 newer (l: live)" in follow_bar(followers[0])
        assert "graphs 2  breaks 1" in bar_text(followers[0])
        await pilots[1].press("2")
        assert followers[1].main.deck.current == "breaks" and followers[2].main.deck.current == "source"
        # The presenter's pane shows on every follower's bar.
        await boss.press("3")
        await wait_for(everyone, lambda: all("Graphs pane" in follow_bar(a) for a in followers))
        assert "on run #4" in follow_bar(followers[1])

        # A follower who stepped back stays there when a run lands, and is told; `l` catches up.
        save(snippet, texts[1])
        presenter.post_message(SnippetChanged())
        await settle(boss)
        await wait_for(everyone, lambda: followers[1].shown_run == 5 and followers[2].shown_run == 5)
        await wait_for(everyone, lambda: "2 newer" in follow_bar(followers[0]))
        assert followers[0].shown_run == 3
        await pilots[0].press("l")
        assert followers[0].shown_run == 5

        # Every follower's report is the presenter's, whole.
        newest = presenter.history.entries[-1].report
        for app in followers:
            assert app.following.shown.report.to_dict() == newest.to_dict()


async def test_a_late_follower_catches_up(snippet: Path, tmp_path: Path):
    session = tmp_path / "session"
    presenter = make_app(snippet, engine=FakeEngine(), watch=False, present=SessionWriter(session))
    async with presenter.run_test() as boss:
        await settle(boss)
        for _ in range(2):
            await boss.press("r")
            await settle(boss)
        late = FollowApp(session, directory=tmp_path)
        async with late.run_test() as pilot:
            await wait_for([boss, pilot], lambda: late.shown_run == 3)
            assert [run.number for run in late.following.runs] == [1, 2, 3]
            assert "following run #3 of 3" in follow_bar(late)
            assert "presenter's settings: fullgraph=off" in bar_text(late, "settings")
            assert len(late.following.history.entries) == 3
            await pilot.press("h")  # the history has every run, not only those seen live
            await pilot.pause()
            assert "history: 3 runs" in str(late.screen.query_one("Vertical").border_title)


async def test_a_follower_whose_presenter_quits_says_so_and_stays_usable(snippet: Path, tmp_path: Path):
    session = tmp_path / "session"
    presenter = make_app(snippet, engine=FakeEngine(), watch=False, present=SessionWriter(session))
    follower = FollowApp(session, directory=tmp_path)
    async with follower.run_test() as pilot:
        async with presenter.run_test() as boss:
            await settle(boss)
            await wait_for([boss, pilot], lambda: follower.shown_run == 1)
            assert "the presenter left" not in follow_bar(follower)
            await boss.press("q")
        await wait_for([pilot], lambda: "the presenter left at" in follow_bar(follower))
        # Still usable: panes switch, the run stays, and forking works.
        await pilot.press("2")
        assert follower.main.deck.current == "breaks"
        assert "Data-dependent branching" in pane_text(follower, "breaks")
        await pilot.press("p", "y")
    assert isinstance(follower.return_value, Fork)


def test_a_killed_presenter_is_noticed(tmp_path: Path):
    """A presenter that never said goodbye (killed): its pid no longer runs."""
    writer = SessionWriter(tmp_path / "s")
    data = json.loads((tmp_path / "s" / "presenter.json").read_text())
    reader = SessionReader(tmp_path / "s")
    assert reader.poll().presenter.present
    data["pid"] = 2**22 + 12345  # above pid_max's default: no such process
    (tmp_path / "s" / "presenter.json").write_text(json.dumps(data))
    assert not reader.poll().presenter.present
    writer.close()


async def test_forking_writes_a_new_file_and_never_overwrites_one(snippet: Path, tmp_path: Path):
    session = tmp_path / "session"
    attendee = tmp_path / "attendee"
    attendee.mkdir()
    mine = attendee / "branch-run1.py"
    mine.write_text("# my own work\n")
    presenter = make_app(snippet, engine=FakeEngine(), watch=False, present=SessionWriter(session))
    async with presenter.run_test() as boss:
        await boss.press("f")  # fullgraph on: the fork takes the presenter's settings
        await settle(boss)
    forks: list[Fork] = []
    for _ in range(2):
        follower = FollowApp(session, directory=attendee)
        async with follower.run_test() as pilot:
            await wait_for([pilot], lambda f=follower: f.shown_run == 2)
            await pilot.press("comma")  # the first run: the one on screen is the one forked
            await pilot.press("p", "y")
        forks.append(follower.return_value)
    assert mine.read_text() == "# my own work\n"  # untouched
    assert [f.path.name for f in forks] == ["branch-run1-2.py", "branch-run1-3.py"]
    for fork in forks:
        assert fork.path.read_bytes() == snippet.read_bytes()
        assert fork.run == 1 and fork.settings.fullgraph is False
    follower = FollowApp(session, directory=attendee)
    async with follower.run_test() as pilot:
        await wait_for([pilot], lambda: follower.shown_run == 2)
        await pilot.press("p", "y")
    assert follower.return_value.settings.fullgraph is True
    assert follower.return_value.path.name == "branch-run2.py"


async def test_in_a_browser_forking_writes_the_copy_and_keeps_following(snippet: Path, tmp_path: Path):
    session = tmp_path / "session"
    SessionWriter(session).publish(
        Report.from_dict({"settings": {}, "stage": "complete"}), "x = 1\n", Settings(), "demo.py"
    )
    follower = FollowApp(session, directory=tmp_path, stay_after_fork=True)
    async with follower.run_test() as pilot:
        await wait_for([pilot], lambda: follower.shown_run == 1)
        await pilot.press("p")
        await pilot.pause()
        assert follower.is_running
        assert (tmp_path / "demo-run1.py").read_text() == "x = 1\n"
        assert any("demo-run1.py" in n.message for n in follower._notifications)


def test_readers_never_see_a_torn_run(tmp_path: Path):
    """Large runs written as fast as possible while a reader polls in a loop: every run it
    reads parses and is whole, and none is skipped or read twice."""
    writer = SessionWriter(tmp_path / "s")
    reader = SessionReader(tmp_path / "s")
    big = Report.from_dict({"settings": {}, "stage": "complete", "logs": {"graph_breaks": "x" * 400_000}})
    got: list[PublishedRun] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set() or reader.presenter is None or reader.seen < 40:
            news = reader.poll()
            if news is not None:
                got.extend(news.runs)
                assert not news.problems, news.problems

    thread = threading.Thread(target=read)
    thread.start()
    for n in range(40):
        writer.publish(big, f"# run {n + 1}\n", Settings(), "big.py")
    done.set()
    thread.join(30)
    assert [run.number for run in got] == list(range(1, 41))
    assert all(run.report.logs.graph_breaks == "x" * 400_000 for run in got)
    assert [run.source for run in got] == [f"# run {n}\n" for n in range(1, 41)]


def test_the_workshop_guide_lists_the_followers_keys():
    guide = (Path(__file__).resolve().parents[2] / "docs" / "workshop.md").read_text()
    assert markdown_table(FOLLOW_TABLE) in guide


async def test_o_shows_each_rank_of_a_run_across_ranks(tmp_path: Path):
    """A presenter's run across ranks (the canned report of ranks/one_rank_recompiles.py: only
    rank 1 recompiles): the follower opens on rank 0 and `o` shows rank 1's own facts, as the
    presenter's app does, then rank 0 again."""
    from tui_fakes import load_fixture

    report = replace(Report.from_dict(load_fixture("one_rank_recompiles")), content_sha256="")
    writer = SessionWriter(tmp_path / "s", snippet_name="one_rank_recompiles.py")
    writer.publish(report, "# ranks\n", Settings(ranks=2), "one_rank_recompiles.py")
    app = FollowApp(tmp_path / "s", directory=tmp_path)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for([pilot], lambda: app.shown_run == 1)
            await pilot.pause(0.1)
            assert "recompiles 0" in bar_text(app) and "ranks differ" in bar_text(app)
            await pilot.press("o")
            await pilot.pause(0.1)
            assert "recompiles 1" in bar_text(app) and "rank 1" in bar_text(app)
            await pilot.press("o")
            await pilot.pause(0.1)
            assert "recompiles 0" in bar_text(app)
    finally:
        writer.close()


def test_following_a_file_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A folder not made yet is waited for; a file can never become a session."""
    from playground.cli.followcmd import follow_main

    mine = tmp_path / "precious.txt"
    mine.write_text("mine\n")
    assert follow_main([str(mine)]) == 2
    assert "precious.txt: not a folder" in capsys.readouterr().err
    assert mine.read_text() == "mine\n"
