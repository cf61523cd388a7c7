"""Torch-free helpers: SETTINGS read with ast, copies that never overwrite, the gallery."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from playground.engine.settings import Settings
from playground.engine.snippet_settings import literal_settings
from tui import cli
from tui.factory import initial_settings
from tui.files.gallery import copy_without_overwrite, header_title, list_gallery, open_copy


def test_settings_literal_is_read_without_running_the_snippet():
    text = "import torch\nraise SystemExit\nSETTINGS = {'fullgraph': True, 'dynamic': False}\n"
    assert literal_settings(text) == {"fullgraph": True, "dynamic": False}


@pytest.mark.parametrize(
    "text",
    ["", "SETTINGS = dict(a=1)", "def f(:\n", "SETTINGS = [1]", "def f():\n    SETTINGS = {'a': 1}"],
)
def test_settings_absent_or_not_a_literal_is_empty(text):
    assert literal_settings(text) == {}


def test_initial_settings_cli_overrides_win_and_are_parsed(tmp_path: Path):
    path = tmp_path / "s.py"
    path.write_text("SETTINGS = {'backend': 'eager', 'dynamic': True, 'mode': 'default'}\n")
    assert initial_settings(path) == Settings(backend="eager", dynamic=True)
    got = initial_settings(path, {"dynamic": None, "fullgraph": True})  # only the flags given, typed
    assert got == Settings(backend="eager", dynamic=None, fullgraph=True)


def test_copy_never_overwrites(tmp_path: Path):
    source, dest = tmp_path / "a.py", tmp_path / "b.py"
    source.write_text("new")
    assert copy_without_overwrite(source, dest) is True
    assert dest.read_text() == "new"
    dest.write_text("my edits")
    assert copy_without_overwrite(source, dest) is False
    assert dest.read_text() == "my edits"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]  # no temp left


def test_header_title_from_comment_or_docstring():
    assert header_title("#!/usr/bin/env python\n# Graph break on print.\n# more\n") == "Graph break on print."
    assert header_title('"""Start here: one break.\n\nMore."""\nimport torch\n') == "Start here: one break."
    assert header_title("import torch\n") == ""


def test_gallery_lists_bundled_snippets_with_titles(tmp_path: Path):
    (tmp_path / "b.py").write_text('"""B shows a break."""\n')
    (tmp_path / "a.py").write_text("# A is pure.\n")
    (tmp_path / "_private.py").write_text("")
    entries = list_gallery(tmp_path)
    assert [(e.name, e.title) for e in entries] == [("a", "A is pure."), ("b", "B shows a break.")]
    work = tmp_path / "work"
    work.mkdir()
    path, created = open_copy(entries[0].path, work)
    assert (path, created) == (work / "a.py", True)
    path.write_text("edited")
    assert open_copy(entries[0].path, work) == (work / "a.py", False)
    assert path.read_text() == "edited"


def test_real_gallery_is_found_and_titled():
    entries = list_gallery(cli.snippets_dir())
    names = {e.name for e in entries}
    assert "default" in names and "models/llama" in names
    assert all(e.title for e in entries)


def test_gallery_sections_follow_the_top_level_and_open_as_plain_copies(tmp_path: Path):
    (tmp_path / "a.py").write_text("# A is pure.\n")
    models = tmp_path / "models"
    models.mkdir()
    (models / "__init__.py").write_text("")
    (models / "gpt.py").write_text("# A real model.\n")
    (tmp_path / "notes").mkdir()  # not a package: not a section
    (tmp_path / "notes" / "x.py").write_text("# no\n")
    entries = list_gallery(tmp_path)
    assert [(e.name, e.title) for e in entries] == [("a", "A is pure."), ("models/gpt", "A real model.")]
    work = tmp_path / "work"
    work.mkdir()
    assert open_copy(entries[1].path, work) == (work / "gpt.py", True)


def test_default_snippet_is_copied_once(tmp_path: Path):
    path, notice = cli.default_snippet(tmp_path)
    assert path == tmp_path / "snippet.py" and "created" in notice
    assert path.read_bytes() == (cli.snippets_dir() / "default.py").read_bytes()
    path.write_text("# mine\n")
    path2, notice2 = cli.default_snippet(tmp_path)
    assert path2 == path and "existing" in notice2
    assert path.read_text() == "# mine\n"


def test_main_refuses_a_missing_file(tmp_path: Path, capsys):
    assert cli.main(os.fspath(tmp_path / "nope.py"), {}) == 2
    assert "no such snippet file" in capsys.readouterr().err
    # What is there but no snippet is named as what it is.
    assert cli.main(os.fspath(tmp_path), {}) == 2
    assert "is a directory, not a snippet file" in capsys.readouterr().err
    assert cli.main(os.devnull, {}) == 2
    assert "is not a regular file" in capsys.readouterr().err


def test_screenshot_replays_a_saved_report(tmp_path: Path):
    import json

    from tui_fakes import FIXTURES

    from tui.screenshot import save_screenshot

    report = json.loads((FIXTURES / "break.json").read_text())
    out = save_screenshot(report, FIXTURES / "branch.py", tmp_path / "shot.svg", (80, 24), ["2"])
    svg = out.read_text()
    assert svg.startswith("<svg")
    assert "graphs" in svg and "GB0170" in svg
