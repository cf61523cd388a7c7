"""A program's files after `check` are what `python PROG` leaves: the eager reference runs the
program again (as far as the compared calls reach) but its writes go to shadows of its own, and
a file the program leaves open is flushed as the interpreter's exit flushes it. Truth: the same
program run by plain python in a folder of its own; the folders are compared file by file.

The test process stays torch-free; each side runs in a fresh process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 600

#: Writes, appends, reads back its own file, saves with torch, renames, removes, and leaves a
#: file open: each a way the reference's second run used to change what the user finds.
PROGRAM = """
import os
import sys
import torch

out = sys.argv[1]
step = torch.compile(lambda x: x * 0.5 + 1, backend="eager")
with open(os.path.join(out, "log.txt"), "w") as fh:
    x = torch.ones(2)
    for i in range(60):
        x = step(x)
        fh.write(f"{i} {x.sum().item():.6f}\\n")
with open(os.path.join(out, "log.txt")) as fh:
    lines = len(fh.readlines())
with open(os.path.join(out, "appended.txt"), "a") as fh:
    fh.write("once\\n")
y = step(torch.full((2,), float(lines)))
torch.save(y, os.path.join(out, "y.tmp"))
os.replace(os.path.join(out, "y.tmp"), os.path.join(out, "y.pt"))
os.remove(os.path.join(out, "doomed.txt"))
assert torch.load(os.path.join(out, "y.pt")).tolist() == y.tolist()
left_open = open(os.path.join(out, "unclosed.txt"), "w")
left_open.write("buffered, never closed\\n")
"""


def _folder(base: Path) -> Path:
    base.mkdir()
    (base / "appended.txt").write_text("before\n")
    (base / "doomed.txt").write_text("removed by the program\n")
    return base


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "y.pt"}


@pytest.mark.parametrize("compare", ["7", "1000"], ids=["reference-stops-early", "reference-runs-to-the-end"])
def test_a_programs_files_are_what_python_leaves(tmp_path: Path, compare: str) -> None:
    program = tmp_path / "writes.py"
    program.write_text(textwrap.dedent(PROGRAM))
    alone, ours = _folder(tmp_path / "plain"), _folder(tmp_path / "ours")
    done = subprocess.run([sys.executable, str(program), str(alone)], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    cmd = [sys.executable, "-m", "playground", "check", str(program), "--json", "--no-timing"]
    cmd += ["--compare-calls", compare, "--", str(ours)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    report = json.loads(done.stdout)
    assert report["error"] is None, report["error"]
    (section,) = report["callables"]
    assert section["calls"] == 61
    # The reference ran its share without tripping over its own renames and removals.
    assert section["equivalence"]["ok"] is True, section["equivalence"]
    assert _files(ours) == _files(alone)
    assert (ours / "appended.txt").read_text() == "before\nonce\n"
    assert sorted(p.name for p in ours.iterdir()) == sorted(p.name for p in alone.iterdir())
