"""The settings matrix, the tlparse trace and the Markdown report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LR = ROOT / "snippets" / "lr_float_static.py"

BREAK_AND_RECOMPILE = """
import torch

SETTINGS = {"backend": "eager"}

def fn(x):
    y = x * 2
    if y.sum() > 0:
        return y.cos()
    return y.sin()

def inputs():
    return [torch.ones(3), torch.ones(5)]
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "playground", *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_matrix_on_the_learning_rate_snippet():
    result = _cli("matrix", str(LR), "--json", "--backends", "eager", "--no-timing")
    assert result.returncode == 0, result.stderr
    cells = {(c["fullgraph"], c["dynamic"]): c for c in json.loads(result.stdout)["cells"]}
    assert len(cells) == 6
    static, auto, dyn = cells[(False, False)], cells[(False, None)], cells[(False, True)]
    assert static["limit_hit"] and static["recompiles"] == 8 and static["raised"] is None
    assert not auto["limit_hit"] and auto["recompiles"] == 1 and auto["graphs"] == 2
    assert dyn["graphs"] == 1 and dyn["recompiles"] == 0
    # fullgraph=True turns the silent eager fallback into an error.
    assert "FailOnRecompileLimitHit" in cells[(True, False)]["raised"]
    assert "[6/6]" in result.stderr  # per-cell progress


def test_trace_export_is_read_by_the_real_tlparse(snippet, tmp_path):
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    if not Path(tlparse).exists():
        pytest.skip("tlparse is not installed")
    path = snippet(BREAK_AND_RECOMPILE)
    trace_dir = tmp_path / "trace"
    result = _cli("check", path, "--json", "--no-timing", "--trace", str(trace_dir))
    assert result.returncode == 0, result.stderr
    assert "trace_lines" not in json.loads(result.stdout)
    (log,) = trace_dir.glob("*.log")
    out = tmp_path / "html"
    parsed = subprocess.run(
        [tlparse, str(log), "-o", str(out), "--no-browser"], capture_output=True, text=True, timeout=120
    )
    assert parsed.returncode == 0, parsed.stderr
    produced = {p.name for p in out.rglob("*")}
    assert "index.html" in produced
    assert any(name.startswith("dynamo_graph_break_reason") for name in produced)
    assert any(name.startswith("recompile_reasons") for name in produced)
    assert "Data-dependent branching" in "".join(p.read_text() for p in out.rglob("dynamo_graph_break_reason*"))


def test_markdown_report(snippet):
    path = snippet(BREAK_AND_RECOMPILE)
    result = _cli("check", path, "--markdown", "--min-run-time", "0.02")
    assert result.returncode == 0, result.stderr
    md = result.stdout
    assert md.startswith("# torch.compile report: `snip.py`")
    assert "graphs " in md and "breaks 2" in md
    assert "| 7 | `if y.sum() > 0:` | Data-dependent branching | GB0170 |" in md
    assert "## Recompiles" in md and "| `size of x dim 0` | `3` -> `5` |" in md
    assert "| value | 1 | `out` |" in md
    assert "speedup" in md and "torch 2." in md
