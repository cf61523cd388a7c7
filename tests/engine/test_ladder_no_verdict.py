"""`matrix --ladder` on a snippet that fails on its own gives no verdict: it had said "no
divergence: 0 stage(s) agree with eager", a clean bill of health for a run that compared
nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from playground.engine.matrix import Cell, ladder_stages, ladder_summary
from playground.engine.report import Report
from playground.engine.settings import Settings

RAISES = """\
import torch


def fn(x):
    raise ValueError("broken in eager too")


def inputs():
    return [(torch.ones(3),)]
"""


def test_no_stage_that_ran_is_no_verdict():
    error = {"kind": "snippet", "type": "ValueError", "message": "the target raised in eager mode on call 1: broken"}
    cells = [Cell.from_report(stage, Report.from_dict({"error": error})) for stage in ladder_stages(Settings())]
    summary = ladder_summary(cells)
    assert summary.startswith("no verdict: the snippet fails on its own (eager: ValueError: the target raised")
    assert "no divergence" not in summary and "agree" not in summary


def test_matrix_ladder_on_a_snippet_that_raises_in_eager(tmp_path: Path):
    path = tmp_path / "raises.py"
    path.write_text(RAISES)
    result = subprocess.run(
        [sys.executable, "-m", "playground", "matrix", str(path), "--ladder", "--backend", "eager"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert "no divergence" not in result.stdout, result.stdout
    assert "no verdict: the snippet fails on its own" in result.stdout
    assert "broken in eager too" in result.stdout
