"""What the app does with input it does not control: a snippet, torch or a file name holding
terminal controls, a broken $EDITOR, an odd file.

Nothing a snippet prints, raises, holds in a comment or is named drives the terminal; a bad
$EDITOR leaves the app alive with its terminal given back; a gallery pick keeps the command
line's flags; a BOM file shows as Python reads it; `q` during a compile returns at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tui_fakes import FakeEngine, bar_text, base_report, pane_text, settle

from playground.cli.textreport import render as text_report
from playground.engine.events import EventHandler, ProgressEvent, RestartEvent, RunResult
from playground.engine.report import Report
from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.settings import Settings
from playground.engine.textsafe import visible
from tui.engine.intake import visible_value
from tui.factory import make_app
from tui.keys.table import PANES

#: One of each class of sequence a terminal obeys.
SEQUENCES = {
    "CSI clear + home": "\x1b[2J\x1b[H",
    "OSC title": "\x1b]0;pwned\x07",
    "OSC 52 clipboard": "\x1b]52;c;cHduZWQ=\x07",
    "DCS": "\x1bPq#0;2;0;0;0\x1b\\",
    "leave the alternate screen": "\x1b[?1049l",
    "BEL": "\x07",
    "C1 CSI": "\x9b31m",
    "DEL": "\x7f",
}
HOSTILE = "".join(SEQUENCES.values())
#: Any character a terminal could act on (\t and \n aside).
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# --- the function ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SEQUENCES)
def test_each_sequence_is_made_visible(name: str):
    shown = visible(f"a{SEQUENCES[name]}b")
    assert not RAW_CONTROL.search(shown), name
    assert shown.startswith("a") and shown.endswith("b")


def test_the_visible_forms():
    assert visible("\x1b[2J\x1b[H") == "␛[2J␛[H"
    assert visible("\x1b]0;pwned\x07") == "␛]0;pwned␇"
    assert visible("\x9b31m\x7f") == "\\x9b31m␡"
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"
    assert visible("dos\r\nline\rover") == "dos\nline␍over"
    assert visible("plain ü ✓") == "plain ü ✓"
    assert visible(visible(HOSTILE)) == visible(HOSTILE)  # escaping twice changes nothing


def test_visible_value_reaches_every_string():
    data = {"a": (HOSTILE, {"b": (HOSTILE, 1, None, 2.5)}), HOSTILE: True}
    flat = repr(visible_value(data))
    assert "\\x1b" not in flat and "\\x07" not in flat and "␛" in flat


def hostile_report(text: str = "", settings: Settings | None = None) -> dict[str, Any]:
    """A complete report in which every string torch or the snippet fills holds HOSTILE."""
    report = base_report(text, settings or Settings(backend="eager"))
    report.update(
        graph_count=2,
        graph_break_count=1,
        graph_breaks=[
            {"reason": f"break {HOSTILE}", "hint": f"hint {HOSTILE}", "line": 3, "count": 1, "file": HOSTILE}
        ],
        recompile_count=1,
        recompiles=[{"function": f"fn{HOSTILE}", "compile_id": "0/1", "reasons": [f"0/0: L['x'] == 1 {HOSTILE}"]}],
        guards=[{"compile_id": "0/0", "function": "fn", "guards": [f"GLOBAL_STATE: {HOSTILE}"]}],
        graphs=[
            {"index": 0, "compile_id": "0/0", "code": f"def forward(x):  # {HOSTILE}\n    return x", "op_count": 1}
        ],
        equivalence={
            "ok": False,
            "outputs": [{"name": f"out{HOSTILE}", "max_abs": 1.0, "ok": False, "note": HOSTILE}],
            "note": HOSTILE,
        },
        logs={"graph_breaks": f"log {HOSTILE}", "recompiles": HOSTILE, "guards": HOSTILE},
        output={"text": f"printed {HOSTILE}\n", "bytes": 60, "truncated": False},
        notes=[f"note {HOSTILE}"],
    )
    return report


def test_the_check_text_report_shows_controls_escaped():
    report = hostile_report()
    report["error"] = {"kind": "snippet", "type": "RuntimeError", "message": f"boom {HOSTILE}", "line": 3}
    text = text_report(Report.from_dict(report))
    assert not RAW_CONTROL.search(text)
    assert "␛[2J␛[H" in text and "␛]0;pwned␇" in text and "\\x9b31m" in text


# --- the app ------------------------------------------------------------------------------------

#: The snippet itself carries the sequences in a comment (and its SETTINGS still parse).
HOSTILE_SOURCE = f'SETTINGS = {{"backend": "eager"}}\n\n\ndef fn(x):  # {HOSTILE}\n    return x\n'


def screen_text(app) -> str:
    """What the whole screen shows now, as the SVG screenshot's text."""
    return app.export_screenshot()


async def show_every_pane(pilot) -> list[str]:
    """Each pane in turn on the screen: the screenshots."""
    shots = []
    for number, _ in enumerate(PANES, start=1):
        await pilot.press(str(number))
        await pilot.pause()
        shots.append(screen_text(pilot.app))
    return shots


async def test_nothing_from_the_snippet_or_torch_reaches_the_screen_raw(tmp_path: Path):
    path = tmp_path / "evil\x1b]0;pwned\x07.py"
    path.write_text(HOSTILE_SOURCE)
    failing = {"now": False}

    def respond(text: str, settings: Settings) -> dict[str, Any]:
        report = hostile_report(text, settings)
        if failing["now"]:
            report.update(
                equivalence=None,
                timings=None,
                error={
                    "kind": "snippet",
                    "type": f"RuntimeError{HOSTILE}",
                    "message": f"boom {HOSTILE}",
                    "line": 4,
                    "detail": f"Traceback\n  {HOSTILE}",
                },
            )
        return report

    app = make_app(path, engine=FakeEngine(respond), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        good = {pane: pane_text(app, pane) for pane, _ in PANES}
        for pane, text in good.items():
            assert not RAW_CONTROL.search(text), pane
        assert "␛[2J␛[H" in good["output"] and "␛]0;pwned␇" in good["output"]
        assert "␛[?1049l" in good["logs"] and "\\x9b31m" in good["graphs"]
        assert "def fn(x):  # ␛[2J" in good["source"]
        assert "evil␛]0;pwned␇.py" in bar_text(app, "title")
        for shot in await show_every_pane(pilot):
            assert not RAW_CONTROL.search(shot)

        failing["now"] = True
        await pilot.press("r")
        await settle(pilot)
        summary = bar_text(app)
        assert "RuntimeError␛[2J" in summary and not RAW_CONTROL.search(summary)
        source, output = pane_text(app, "source"), pane_text(app, "output")
        assert "RuntimeError␛[2J␛[H␛]0;pwned␇" in source and "Traceback\n  ␛[2J␛[H␛]0;pwned␇" in output
        assert not RAW_CONTROL.search(source + output)
        for shot in await show_every_pane(pilot):
            assert not RAW_CONTROL.search(shot)


async def test_engine_failures_and_notifications_are_escaped(snippet: Path):
    class Failing(FakeEngine):
        async def run(self, request: RunRequest, on_event: EventHandler | None = None) -> RunResult:
            emit = on_event
            if emit is not None:
                emit(RestartEvent(f"restarted {HOSTILE}"))
            raise RuntimeError(f"engine broke {HOSTILE} [/]")

    app = make_app(snippet, engine=Failing(), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        summary = bar_text(app)
        assert "engine broke ␛[2J" in summary and "[/]" in summary
        messages = [n.message for n in app._notifications]
        assert any("restarted ␛[2J" in m for m in messages)
        assert not RAW_CONTROL.search(summary + "".join(messages))
        assert not RAW_CONTROL.search(screen_text(app))


async def test_ctrl_c_still_says_how_to_quit_in_plain_words(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        (message,) = notices(app)
        assert message.endswith(" to quit the app") and "[b]" not in message


# --- $EDITOR -----------------------------------------------------------------------------------


@contextlib.contextmanager
def suspendable(app, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Make the headless driver able to suspend (as a real terminal's is), recording the
    terminal being handed over and given back."""
    calls: list[str] = []
    driver = app._driver
    monkeypatch.setattr(type(driver), "can_suspend", property(lambda self: True))
    monkeypatch.setattr(driver, "suspend_application_mode", lambda: calls.append("suspend"))
    monkeypatch.setattr(driver, "resume_application_mode", lambda: calls.append("resume"))
    yield calls


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


async def edit_with(snippet: Path, monkeypatch: pytest.MonkeyPatch, editor: str) -> tuple[list[str], list[str], int]:
    """Press e with $EDITOR set to `editor`: (the notifications, the suspend calls, the runs)."""
    monkeypatch.setenv("EDITOR", editor)
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        with suspendable(app, monkeypatch) as calls:
            await pilot.press("e")
            await settle(pilot)
        # Still alive and answering keys: a rerun runs.
        runs = len(engine.runs)
        await pilot.press("r")
        await settle(pilot)
        assert len(engine.runs) == runs + 1
        return notices(app), calls, runs


@pytest.mark.parametrize(
    ("editor", "says"),
    [
        ("/nonexistent/editor", "'/nonexistent/editor' was not found"),
        ("vim '", "$EDITOR cannot be read as a command (No closing quotation)"),
        ("   ", "set $EDITOR"),
    ],
)
async def test_an_editor_that_cannot_start_is_named_before_the_terminal_is_handed_over(
    snippet: Path, monkeypatch: pytest.MonkeyPatch, editor: str, says: str
):
    messages, calls, runs = await edit_with(snippet, monkeypatch, editor)
    assert any(says in m for m in messages), messages
    assert calls == [] and runs == 1


async def test_an_editor_that_is_a_folder_says_so(snippet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "editor-dir"
    folder.mkdir()
    messages, calls, _ = await edit_with(snippet, monkeypatch, str(folder))
    assert any("is a folder" in m for m in messages), messages
    assert calls == []


async def test_an_editor_that_fails_gives_the_terminal_back_and_says_so(snippet: Path, monkeypatch: pytest.MonkeyPatch):
    messages, calls, runs = await edit_with(snippet, monkeypatch, "false")
    assert calls == ["suspend", "resume"]
    assert any("'false' exited with status 1" in m for m in messages), messages
    assert runs == 1  # a failed edit does not rerun


async def test_an_editor_that_breaks_while_suspended_still_gives_the_terminal_back(
    snippet: Path, monkeypatch: pytest.MonkeyPatch
):
    def broken(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tui.files.editor.subprocess.run", broken)
    messages, calls, _ = await edit_with(snippet, monkeypatch, "true")
    assert calls == ["suspend", "resume"]
    assert any("could not start 'true'" in m and "Permission denied" in m for m in messages), messages


async def test_an_editor_that_succeeds_reruns(snippet: Path, monkeypatch: pytest.MonkeyPatch):
    messages, calls, runs = await edit_with(snippet, monkeypatch, "true")
    assert calls == ["suspend", "resume"] and runs == 2
    assert not any("edit" in m for m in messages)


# --- the gallery keeps the command line's flags -------------------------------------------------


async def test_a_gallery_pick_keeps_the_command_line_flags(snippet: Path, tmp_path: Path, monkeypatch):
    gallery = tmp_path / "gallery"
    gallery.mkdir()
    (gallery / "clean.py").write_text('"""Clean."""\nSETTINGS = {"backend": "inductor", "dynamic": False}\n')
    monkeypatch.setattr("tui.app.snippets_dir", lambda: gallery)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    engine = FakeEngine()
    settings = Settings(backend="aot_eager")
    app = make_app(snippet, engine=engine, settings=settings, watch=False, pinned={"backend": "aot_eager"})
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("g")
        await pilot.press("enter")
        await settle(pilot)
        assert app.snippet == work / "clean.py"
        ran = engine.runs[-1][1]
        assert ran.backend == "aot_eager"  # the flag wins, as it did at start
        assert ran.dynamic is False  # what the flags leave alone comes from the file


async def test_an_explicit_dynamic_auto_survives_a_gallery_pick(snippet: Path, tmp_path: Path, monkeypatch):
    gallery = tmp_path / "gallery"
    gallery.mkdir()
    (gallery / "static.py").write_text('"""Static."""\nSETTINGS = {"dynamic": False}\n')
    monkeypatch.setattr("tui.app.snippets_dir", lambda: gallery)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, settings=Settings(), watch=False, pinned={"dynamic": None})
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("g")
        await pilot.press("enter")
        await settle(pilot)
        assert engine.runs[-1][1].dynamic is None  # --dynamic auto was given: it beats the file


def test_the_command_line_passes_its_flags_to_the_app(snippet: Path, monkeypatch: pytest.MonkeyPatch):
    import tui.cli

    made: dict[str, Any] = {}

    class Ran:
        return_code = 0

        def run(self) -> None:
            pass

    def fake_make_app(path: Path, **kwargs: Any) -> Ran:
        made.update(kwargs)
        return Ran()

    engines: list[dict[str, Any]] = []

    def fake_engine(**kwargs: Any) -> FakeEngine:
        engines.append(kwargs)
        return FakeEngine()

    monkeypatch.setattr("tui.engine.protocol.real_engine", fake_engine)
    monkeypatch.setattr(tui.cli, "make_app", fake_make_app)
    assert tui.cli.main(str(snippet), {"backend": "aot_eager"}, timing=False, min_run_time=0.5) == 0
    assert made["pinned"] == {"backend": "aot_eager"}
    assert made["settings"].backend == "aot_eager"
    # the run flags hold for every run (--no-timing, --min-run-time); the timeout is the client's;
    # the app asks for Dynamo's findings while a slow backend compiles
    assert made["run_flags"] == RunFlags(timing=False, min_run_time=0.5, early_findings=True)
    assert engines == [{"timeout_s": None}]


# --- a BOM, and Python's other line endings ----------------------------------------------------


async def test_a_bom_file_shows_as_python_reads_it(tmp_path: Path):
    path = tmp_path / "bom.py"
    path.write_bytes(b'\xef\xbb\xbfSETTINGS = {"backend": "aot_eager"}\r\n\r\ndef fn(x):\r\n    return x\r\n')
    engine = FakeEngine()
    app = make_app(path, engine=engine, watch=False)
    assert app.settings.backend == "aot_eager"  # the BOM does not hide SETTINGS
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        source = pane_text(app, "source")
        assert "\ufeff" not in source and "␍" not in source
        lines = [line.strip() for line in source.splitlines()]
        assert '1   SETTINGS = {"backend": "aot_eager"}' in lines
        assert "3   def fn(x):" in lines
        assert engine.runs[-1][1].backend == "aot_eager"


async def test_a_lone_carriage_return_is_a_line_break_as_for_python(tmp_path: Path):
    path = tmp_path / "mac.py"
    path.write_bytes(b"x = 1\ry = 2\r")
    app = make_app(path, engine=FakeEngine(), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        lines = [line.strip() for line in pane_text(app, "source").splitlines()]
        assert "1   x = 1" in lines and "2   y = 2" in lines


# --- quitting mid-compile ------------------------------------------------------------------------


class NeverEnding(FakeEngine):
    """A run that never ends, on an engine that behaves like the real client: a run cancelled
    while the engine is open replaces its worker, which never finishes starting here (the real
    one imports torch: seconds). Only a closed engine lets a cancelled run end at once."""

    def __init__(self, on_close: Callable[[], None]) -> None:
        super().__init__()
        self.on_close = on_close
        self.events: list[str] = []

    async def run(self, request: RunRequest, on_event: EventHandler | None = None) -> RunResult:
        self.runs.append((Path(request.path).read_text(), request.settings))
        assert on_event is not None
        on_event(ProgressEvent("compiling", 1, 3, ""))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.events.append("run cancelled" + (" after close" if self.closed else ""))
            if not self.closed:
                await asyncio.Event().wait()  # "restarting the worker"
            raise
        raise AssertionError("unreachable")

    async def cancel(self) -> None:
        self.cancels += 1  # the worker is busy compiling and does not answer

    async def close(self) -> None:
        self.on_close()
        self.closed = True
        self.events.append("closed")


async def test_quit_during_a_compile_returns_at_once(snippet: Path):
    shown_while_closing: list[str] = []
    # The lambda reads `app` when the engine closes, by which time it is made.
    engine = NeverEnding(lambda: shown_while_closing.append(bar_text(app)))
    app = make_app(snippet, engine=engine, watch=False)

    async def session() -> None:
        async with app.run_test() as pilot:
            while not engine.runs or "compiling call 1/3" not in bar_text(app):
                await pilot.pause(0.01)
            await pilot.press("q")

    # Only a guard against hanging: the assertions below do not depend on time.
    await asyncio.wait_for(session(), timeout=30)
    assert engine.events == ["closed", "run cancelled after close"]
    assert "quitting" in shown_while_closing[0] and "compiling" not in shown_while_closing[0]
