"""A program that compiles the same function again and again (torch.compile in a loop): Dynamo
caches compiled frames per code object, so every torch.compile of it shares one
recompile_limit. Each callable's graphs are what torch compiled for it in a fresh `python FILE`
(tests/program_truth.py, a counting backend per torch.compile call), and a callable that
compiled nothing because of the limit says so, naming the callable that hit it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Each k a constant Dynamo specializes on: with automatic dynamic shapes off, every new k fails
#: the last guard and recompiles, until the eighth. (With it on, torch makes k dynamic at the
#: first recompile and compiles 2 graphs in all: no limit; a counting backend per torch.compile
#: call made it reach the limit only through BACKEND_MATCH recompiles of its own making.)
PROGRAM = """
import torch

torch._dynamo.config.automatic_dynamic_shapes = False
for k in range(1, 13):
    f = torch.compile(lambda x, k=k: x * k, backend="eager")
    f(torch.ones(2))
"""


def _run(*cmd: str) -> str:
    done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.stdout.strip(), done.stderr[-3000:]
    return done.stdout


def test_a_callable_past_its_codes_recompile_limit_says_why_it_compiled_nothing(tmp_path: Path) -> None:
    path = tmp_path / "again.py"
    path.write_text(textwrap.dedent(PROGRAM))
    report = json.loads(_run(sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"))
    truth = json.loads(_run(sys.executable, str(ROOT / "tests" / "program_truth.py"), str(path)).splitlines()[-1])
    ours, theirs = report["callables"], truth["callables"]
    assert [c["graph_count"] for c in ours] == [c["graph_count"] for c in theirs]
    assert [c["calls"] for c in ours] == [c["calls"] for c in theirs] == [1] * 12
    empty = [c for c in ours if c["graph_count"] == 0]
    assert empty, "torch compiled every one: the limit was never reached"
    assert report["recompile_limit_hit"] is True
    hitter = next(c for c in ours if c["recompile_limit_hit"])
    for section in empty:
        (note,) = [n for n in section["notes"] if n.startswith("compiled nothing")]
        assert "recompile_limit" in note, note
        if section is not hitter:
            assert f"under callable #{hitter['index']}" in note, note
