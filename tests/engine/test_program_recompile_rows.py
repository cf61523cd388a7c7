"""A program's recompile rows say at which of its calls torch recompiled and what arrived there,
as a snippet's do: the arriving value is the argument the program passed (by keyword too), the
call its program-wide number, and the recompiles the ones a plain `python PROG` logs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 300

PROGRAM = """\
import torch


@torch.compile(backend="eager")
def scale(x, k):
    if k > 2:
        return x * k
    return x + k


other = torch.compile(lambda x: x.cos(), backend="eager")
for k in (0, 1, 3, 3):
    other(torch.ones(2))
    scale(torch.ones(2), k=k)
"""


def test_each_recompile_names_its_call_and_what_arrived(tmp_path: Path) -> None:
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    env = {**os.environ, "TORCH_LOGS": "graph_breaks,recompiles"}
    truth = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "plain_truth.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=tmp_path,
        env=env,
    )
    assert truth.returncode == 0, truth.stderr[-3000:]
    told = json.loads(truth.stdout.strip().splitlines()[-1])
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=tmp_path,
    )
    report = json.loads(done.stdout)
    details = report["recompile_details"]
    assert report["recompile_count"] == told["recompile_count"] == len(details) == 2
    # The program's calls, numbered over every compiled callable: other 1, scale 2 (k=0),
    # other 3, scale 4 (k=1), other 5, scale 6 (k=3), ...
    assert [d["call"] for d in details] == [4, 6]
    assert {d["function"] for d in details} == {"scale"}
    for detail, k in zip(details, ("1", "3"), strict=True):
        on_k = [r for r in detail["reasons"] if r["arg"] == "k"]
        assert on_k and all(r["now"] == k for r in on_k), detail
    # The report's own call_entries stay the snippet's: a program's loop is not listed call by call.
    assert report["call_entries"] == []
