"""Shared fixtures for the UI tests: snippet files in a temp folder and Pilot helpers.

The helpers live in `tui_fakes.py` (this folder is on sys.path as pytest's rootdir-relative
import puts it; it has no __init__.py, since a package named `tui` here would shadow the app).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tui_fakes import FIXTURES


@pytest.fixture
def snippet(tmp_path: Path) -> Path:
    """A copy of the data-dependent-branch snippet in a temp folder."""
    path = tmp_path / "branch.py"
    shutil.copy(FIXTURES / "branch.py", path)
    return path


@pytest.fixture(autouse=True)
def _no_user_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # No editor, no colour preferences from the machine running the tests.
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
