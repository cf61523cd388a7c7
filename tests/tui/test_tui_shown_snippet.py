"""The snippet as the app shows it and as it sends it: one read per run (`tui.run.snippet`)."""

from __future__ import annotations

from pathlib import Path

from playground.engine.settings import Settings
from tui.run.snippet import ShownSnippet


def test_the_run_sent_is_the_bytes_shown(tmp_path: Path):
    path = tmp_path / "s.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\n")
    shown = ShownSnippet(path)
    assert shown.refresh()
    path.write_text("y = 2\n")  # saved again after the read: the run is still of what is shown
    prepared = shown.prepared(Settings(fullgraph=True))
    assert prepared.source is not None and prepared.source.text == "x = 1\n"
    assert prepared.sha256 == shown.sha and prepared.settings == Settings(fullgraph=True)
    assert prepared.error is None and prepared.unreadable is None


def test_a_bad_settings_is_refused_with_its_line(tmp_path: Path):
    path = tmp_path / "s.py"
    path.write_text("x = 1\nSETTINGS = {'fullgrpah': True}\n")
    shown = ShownSnippet(path)
    shown.refresh()
    error = shown.prepared(Settings()).error
    assert error is not None and error.type == "UnknownSetting" and error.line == 2


def test_a_file_that_cannot_run_says_why(tmp_path: Path):
    path = tmp_path / "s.py"
    path.write_bytes(b"x = '\xff'\n")
    shown = ShownSnippet(path)
    assert shown.refresh()
    prepared = shown.prepared(Settings())
    assert prepared.source is None and prepared.unreadable is not None
    assert prepared.unreadable.type == "UnicodeDecodeError"
    folder = tmp_path / "folder.py"
    folder.mkdir()
    shown = ShownSnippet(folder)
    assert shown.refresh()  # not missing: the engine's report names the problem
    unreadable = shown.prepared(Settings()).unreadable
    assert unreadable is not None and unreadable.type == "IsADirectoryError"
