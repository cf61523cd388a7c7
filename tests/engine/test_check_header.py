"""check's header names the snippet on one line, whatever the file name holds: a newline in it
had been printed raw, so the name's second half started a line of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.faults import GOOD


def test_a_newline_in_the_file_name_stays_on_the_header_line(tmp_path: Path):
    path = tmp_path / "a\nb.py"
    path.write_text(GOOD)
    result = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--no-timing"],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    first, second = result.stdout.splitlines()[:2]
    assert first.startswith("a\u2424b.py  torch "), first
    assert second.startswith("graphs "), second
