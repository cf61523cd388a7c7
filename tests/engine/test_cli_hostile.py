"""`check` and `watch` as a hostile user meets them: writes that must not destroy,
SETTINGS and flags read strictly, signals that must leave nothing behind, symlinked and
non-ASCII snippets, a UTF-8 BOM. Real subprocesses and real workers, backend eager."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from playground.engine.exports import ExportError, is_our_export, marked, write_export
from tests.faults import GOOD
from tests.processes import live_processes
from tests.watching import WatchProcess

WAIT_S = 120.0


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "playground", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def one_line_cause(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert stderr.strip(), "a failure must say why on stderr"


# --- writes: never over the snippet, only over our own exports -------------------------------------


def test_check_markdown_never_writes_over_the_snippet(tmp_path: Path):
    snip = write(tmp_path, "snip.py", GOOD)
    before = snip.read_bytes()
    result = cli("check", str(snip), "--json", "--no-timing", "--markdown", str(snip))
    assert snip.read_bytes() == before
    assert result.returncode == 2, result.stderr  # not 1: that is for --fail-on-* findings
    assert json.loads(result.stdout)["error"] is None  # the run's report still printed
    one_line_cause(result.stderr)
    assert "snippet" in result.stderr and "not written" in result.stderr


def test_check_failed_writes_keep_the_json_and_exit_2(tmp_path: Path):
    snip = write(tmp_path, "snip.py", GOOD)
    a_file = write(tmp_path, "plain.txt", "not a folder\n")
    result = cli(
        "check",
        str(snip),
        "--json",
        "--no-timing",
        "--markdown",
        str(tmp_path / "no/such/dir/x.md"),
        "--trace",
        str(a_file),
    )
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["error"] is None and report["content_sha256"] == sha(snip.read_bytes())
    one_line_cause(result.stderr)
    assert "no such folder" in result.stderr and "not a folder" in result.stderr
    assert a_file.read_text() == "not a folder\n"


def test_check_markdown_replaces_its_own_export(tmp_path: Path):
    snip = write(tmp_path, "snip.py", GOOD)
    out = tmp_path / "report.md"
    first = cli("check", str(snip), "--no-timing", "--markdown", str(out))
    assert first.returncode == 0, first.stderr
    assert is_our_export(out)
    snip.write_text(GOOD + "# edited\n")
    again = cli("check", str(snip), "--no-timing", "--markdown", str(out))
    assert again.returncode == 0, again.stderr
    assert sha(GOOD + "# edited\n")[:16] in out.read_text()


def test_write_export_rules(tmp_path: Path):
    snip = write(tmp_path, "snip.py", GOOD)
    helper = write(tmp_path, "helper.py", "SCALE = 2\n")
    notes = write(tmp_path, "notes.md", "my notes\n")
    link = tmp_path / "link.md"
    link.symlink_to(snip)
    for target in (snip, link, helper, tmp_path / "new.py", tmp_path):
        with pytest.raises(ExportError):
            write_export(target, marked("# report"), protected=[snip], force=True)
    assert snip.read_text() == textwrap.dedent(GOOD).lstrip() and helper.read_text() == "SCALE = 2\n"
    with pytest.raises(ExportError, match="--force"):
        write_export(notes, marked("# report"), protected=[snip])
    assert notes.read_text() == "my notes\n"
    write_export(notes, marked("# report"), protected=[snip], force=True)
    assert is_our_export(notes)
    # An export the user has added to since is theirs again.
    notes.write_text(notes.read_text() + "my conclusions\n")
    with pytest.raises(ExportError):
        write_export(notes, marked("# report 2"), protected=[snip])
    assert not list(tmp_path.glob("*.tmp"))


def test_app_markdown_export_is_marked_as_ours(tmp_path: Path):
    from playground.engine.report import Report
    from tui.files.exports import write_markdown

    report = json.loads(
        json.dumps({"snippet": str(tmp_path / "s.py"), "settings": {}, "error": None, "equivalence": None})
    )
    path = write_markdown(Report.from_dict(report), tmp_path, "s")
    assert path.read_text().startswith("# torch.compile report")
    assert is_our_export(path)


# --- SETTINGS and flags, strictly ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ('{"backend": "eager", "fullgraph": "false"}', ("fullgraph", "'false'", "True or False")),
        ('{"backend": "eager", "dynamic": "maybe"}', ("dynamic", "'maybe'", "None")),
        ('{"backend": "eager", "fullgrpah": True}', ("fullgrpah", "did you mean 'fullgraph'")),
        ("make_settings()", ("literal",)),
    ],
    ids=["string-bool", "bad-dynamic", "unknown-key", "not-literal"],
)
def test_check_names_a_bad_settings_with_its_line(tmp_path: Path, settings: str, words: tuple[str, ...]):
    snip = tmp_path / "snip.py"
    snip.write_text(f"import torch\n\n\nSETTINGS = {settings}\n\n" + GOOD.split("SETTINGS", 1)[1].split("\n", 1)[1])
    result = cli("check", str(snip), "--json")
    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "settings" and error["line"] == 4, error
    assert "\n" not in error["message"]
    for word in words:
        assert word in error["message"], error["message"]
    one_line_cause(result.stderr)
    assert "(line 4)" in result.stderr


def test_check_reads_settings_written_as_dict_call(tmp_path: Path):
    snip = tmp_path / "snip.py"
    snip.write_text(GOOD.replace('SETTINGS = {"backend": "eager"}', 'SETTINGS = dict(backend="eager", dynamic=False)'))
    result = cli("check", str(snip), "--json", "--no-timing")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["settings"]["dynamic"] is False


@pytest.mark.parametrize(
    "flags",
    [
        ("--timeout", "0"),
        ("--timeout", "-5"),
        ("--timeout", "inf"),
        ("--timeout", "nan"),
        ("--timeout", "1e12"),
        ("--min-run-time", "0"),
        ("--min-run-time", "nan"),
        ("--backend", "eager; rm -rf /"),
        ("--backend", ""),
        ("--mode", "fastest"),
        ("--dynamic", "maybe"),
    ],
)
def test_check_refuses_bad_flags(tmp_path: Path, flags: tuple[str, str]):
    snip = write(tmp_path, "snip.py", GOOD)
    result = cli("check", str(snip), "--json", *flags)
    assert result.returncode == 2 and result.stdout == ""
    assert flags[0] in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("value", ["-1", "inf", "nan", "1e9"])
def test_watch_refuses_a_bad_debounce(tmp_path: Path, value: str):
    result = cli("watch", str(write(tmp_path, "snip.py", GOOD)), "--debounce", value)
    assert result.returncode == 2 and "--debounce" in result.stderr and "Traceback" not in result.stderr


def test_watch_reports_bad_settings_then_runs_the_fix(tmp_path: Path):
    snip = tmp_path / "snip.py"
    snip.write_text(GOOD.replace('{"backend": "eager"}', '{"backend": "eager", "fullgraph": "no"}'))
    watch = WatchProcess(snip)
    try:
        bad = watch.wait_complete(sha(snip.read_bytes()), timeout=WAIT_S)
        assert bad["error"]["kind"] == "settings" and "fullgraph" in bad["error"]["message"]
        snip.write_text(GOOD)
        good = watch.wait_complete(sha(GOOD), timeout=WAIT_S)
        assert good["error"] is None
    finally:
        watch.close()


# --- a UTF-8 BOM, a non-ASCII file name ----------------------------------------------------------------


def test_check_runs_a_snippet_saved_with_a_bom(tmp_path: Path):
    snip = tmp_path / "snip.py"
    data = b"\xef\xbb\xbf" + GOOD.replace('"eager"}', '"eager", "dynamic": False}').encode()
    snip.write_bytes(data)
    result = cli("check", str(snip), "--json", "--no-timing")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["error"] is None
    assert report["settings"]["dynamic"] is False  # SETTINGS behind the BOM is read
    assert report["content_sha256"] == sha(data)  # of the bytes on disk, BOM included


def test_check_names_the_line_of_a_timeout_in_a_non_ascii_file(tmp_path: Path):
    snip = write(
        tmp_path,
        "ü.py",
        """
        import torch

        SETTINGS = {"backend": "eager"}

        def fn(x):
            while True:
                x = x + 1

        def inputs():
            return [torch.ones(2)]
        """,
    )
    result = cli("check", str(snip), "--json", "--no-timing", "--timeout", "3")
    report = json.loads(result.stdout)
    assert report["error"]["type"] == "Timeout", report["error"]
    assert report["error"]["line"] in (6, 7), report["error"]


# --- signals: nothing left behind ---------------------------------------------------------------------

SPAWNER = """
import os
import subprocess
import torch

SETTINGS = {{"backend": "eager"}}

child = subprocess.Popen(["sleep", "{marker}"], start_new_session={new_session})
with open({pids!r} + ".tmp", "w") as fh:
    fh.write(f"{{os.getpid()}} {{os.getppid()}} {{os.getsid(0)}} {{child.pid}}")
os.replace({pids!r} + ".tmp", {pids!r})

def fn(x):
    while True:
        x = x + 1

def inputs():
    return [torch.ones(2)]
"""


def leftovers(marker: str, session: int, pids: set[int]) -> list[str]:
    """Live processes that are ours: the marked sleep, anything in the worker's session, the
    worker and the process that ran the snippet."""
    found = []
    for pid, cmd in live_processes():
        try:
            sid = os.getsid(pid)
        except OSError:
            continue
        if marker in cmd or sid == session or pid in pids:
            found.append(f"{pid}: {cmd[:120]}")
    return found


def _wait_gone(marker: str, session: int, pids: set[int]) -> list[str]:
    """Killed processes take a moment to be reaped by init: a bounded wait, then the rest."""
    deadline = time.monotonic() + 15
    while (left := leftovers(marker, session, pids)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _signal_run(tmp_path: Path, command: str, signals: tuple[int, ...], new_session: bool = False) -> None:
    marker = f"3331.{random.randrange(10**8):08d}"
    pids_file = tmp_path / "pids"
    snip = tmp_path / "spawn.py"
    snip.write_text(SPAWNER.format(marker=marker, pids=str(pids_file), new_session=new_session))
    extra = ["--json"] if command == "check" else ["--json-lines"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground", command, str(snip), *extra, "--no-timing"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own group, as a shell gives a foreground job
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while not pids_file.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the snippet never started"
            time.sleep(0.1)
        run_pid, parent_pid, session, child_pid = (int(x) for x in pids_file.read_text().split())
        for signum in signals:
            # Ctrl-C and a dropped terminal signal the whole foreground group; timeout signals the process.
            if signum == signal.SIGTERM:
                os.kill(proc.pid, signum)
            else:
                os.killpg(proc.pid, signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signals[0], stderr.decode()[-2000:]
    assert b"Traceback" not in stderr, stderr.decode()[-2000:]
    assert f"stopped by {signal.Signals(signals[0]).name}".encode() in stderr, stderr.decode()[-2000:]
    worker = {parent_pid} if parent_pid != proc.pid else set()
    assert _wait_gone(marker, session, {run_pid, child_pid} | worker) == []


STOPS = [
    ("check", (signal.SIGTERM,)),
    ("check", (signal.SIGTERM, signal.SIGTERM)),
    ("check", (signal.SIGINT, signal.SIGINT)),
    ("check", (signal.SIGHUP,)),
    ("watch", (signal.SIGTERM, signal.SIGTERM)),
    ("watch", (signal.SIGINT,)),
    ("watch", (signal.SIGHUP,)),
]


@pytest.mark.parametrize(
    ("command", "signals"), STOPS, ids=[f"{c}-{'-'.join(s.name for s in sigs)}" for c, sigs in STOPS]
)
def test_signals_leave_no_process_behind(tmp_path: Path, command: str, signals: tuple[int, ...]):
    _signal_run(tmp_path, command, signals)


def test_sigterm_kills_a_child_in_its_own_session(tmp_path: Path):
    """A child started with start_new_session=True leaves the worker's process group: the
    worker side must kill it too (lead's change: fails until the worker tracks its children)."""
    _signal_run(tmp_path, "check", (signal.SIGTERM,), new_session=True)


# --- watch through symlinks, and the snippet's own modules -------------------------------------------

IMPORTER = """
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper import SCALE  # noqa: E402

SETTINGS = {"backend": "eager"}

def fn(x):
    return x * SCALE

def inputs():
    return [torch.ones(2)]
"""


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@pytest.mark.parametrize("layout", ["file-link", "folder-link"])
def test_watch_follows_a_symlinked_snippet_and_its_modules(tmp_path: Path, layout: str):
    real = tmp_path / "real"
    real.mkdir()
    target = real / "snip.py"
    target.write_text(IMPORTER)
    helper = real / "helper.py"
    helper.write_text("SCALE = 2\n")
    link = tmp_path / "link"
    if layout == "file-link":
        link.mkdir()
        (link / "snip.py").symlink_to(target)
    else:
        link.symlink_to(real, target_is_directory=True)
    watch = WatchProcess(link / "snip.py")
    try:
        first = watch.wait_complete(sha(IMPORTER), timeout=WAIT_S)
        assert first["error"] is None, first["error"]
        edited = IMPORTER + "# in place\n"
        with open(target, "w") as fh:  # in place, as `cat > file` or some editors do
            fh.write(edited)
        watch.wait_complete(sha(edited), timeout=WAIT_S)
        replaced = IMPORTER + "# atomic\n"
        _atomic_write(target, replaced)  # vim, VS Code, sed -i
        watch.wait_complete(sha(replaced), timeout=WAIT_S)
        seen = len(watch.lines)
        _atomic_write(helper, "SCALE = 3\n")
        watch.wait_line(
            lambda line: line["error"] is None, "a rerun after the helper changed", start=seen, timeout=WAIT_S
        )
    finally:
        watch.close()


def test_a_file_name_with_a_newline_cannot_split_checks_stderr_line(tmp_path: Path):
    """check's error line names the file (the cause, and with several snippets the file first):
    a name holding a newline, a tab or an ESC shows as one line of visible stand-ins."""
    broken = tmp_path / "bad\nname\t\x1b[2J.py"
    broken.write_text("def fn(:\n")
    missing = tmp_path / "gone\nx.py"
    result = cli("check", str(broken), str(missing), "--backend", "eager", "--no-timing", "--json")
    assert result.returncode == 2
    assert len(result.stdout.splitlines()) == 2  # a report for each
    lines = result.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"compile-playground: {tmp_path}/bad␤name␉␛[2J.py: snippet error (line 1)"), lines
    assert lines[1].endswith("no such file: " + str(tmp_path) + "/gone␤x.py"), lines


@pytest.mark.parametrize("command", [["check"], ["matrix"], ["watch"], []], ids=["check", "matrix", "watch", "app"])
def test_a_file_named_like_an_option_is_told_how_to_name_it(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "-x.py").write_text("import torch\n")
    done = subprocess.run(
        [sys.executable, "-m", "playground", *command, "-x.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "'-x.py' is a file here: name it ./-x.py" in done.stderr
    assert (tmp_path / "-x.py").read_text() == "import torch\n"


@pytest.mark.parametrize("after", ["playground.cli.entry", "playground.cli.flags", "playground.engine.client"])
def test_ctrl_c_while_the_command_is_still_importing_prints_no_traceback(tmp_path: Path, after: str) -> None:
    """Ctrl-C in the first tenths of a second lands in the command line's own imports, before
    main() can catch it: the entry point ends the command as Ctrl-C does later (130), quietly.
    The signal is sent as `-X importtime` reports a module of ours imported, so that it lands in
    our imports (or just after them), never in Python's own start-up (its `site` module), where
    Python itself stops with a fatal error whatever the command does."""
    snippet = tmp_path / "s.py"
    snippet.write_text("import torch\n\ndef fn(x):\n    return x + 1\n\ndef inputs():\n    yield torch.ones(2)\n")
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "playground", "check", str(snippet), "--no-timing"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stderr is not None
    seen = b""
    try:
        for row in proc.stderr:
            seen += row
            if row.rstrip().endswith(after.encode()):
                os.killpg(proc.pid, signal.SIGINT)
                break
        else:
            raise AssertionError(f"{after} was never imported: {seen.decode()[-2000:]}")
        rest = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = (seen + rest).decode()
    assert proc.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
