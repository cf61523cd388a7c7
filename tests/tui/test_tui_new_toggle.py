"""A new toggle is one row of the toggles' table (`tui/run/toggles.py`): added there and
nowhere else (tests/tui/added_toggle.py adds it in a fresh interpreter before the app is
imported), its key presses, the palette offers it, both make the same run request, the
request carries what the toggle changed, and the settings bar names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _added(kind: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE / "added_toggle.py"), kind],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE.parent.parent,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent.parent)])},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _named(bar: str, key: str, names: tuple[str, ...], value: str) -> bool:
    """Whether the settings bar names the toggle on `key` with `value`, in any of its forms."""
    return any((f"{key} {name} {value}" if name else f"{key} {value}") in bar for name in names)


@pytest.mark.parametrize(
    ("kind", "key", "names", "before", "after"),
    [
        ("pass", "D", ("dynamo code", "code", ""), None, "on"),
        ("setting", "E", ("break raises", "raises", ""), "no", "yes"),
    ],
)
def test_a_toggle_added_to_the_table_alone_runs_from_its_key_and_the_palette_alike(
    kind: str, key: str, names: tuple[str, ...], before: str | None, after: str
) -> None:
    seen = _added(kind)
    assert seen["key_requests"] == 2, f"key {key} did not rerun"
    assert seen["palette_requests"] == 2, "the palette's command did not rerun"
    assert seen["from_key"] == seen["from_palette"]
    assert seen["from_key"] != seen["first"]  # the toggle changed the request
    assert True in seen["asked"], seen["asked"]
    assert _named(seen["key_bar"], key, names, after), seen["key_bar"]
    assert seen["palette_bar"] == seen["key_bar"]
    if before is None:
        assert f" {key} " not in seen["bar_before"], seen["bar_before"]  # named only when on
    else:
        assert _named(seen["bar_before"], key, names, before), seen["bar_before"]
