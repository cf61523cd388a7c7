"""The ablation ladder: eager -> aot_eager -> aot_eager_decomp_partition -> inductor,
and the first stage whose values or gradients stop agreeing with eager.

On torch 2.13 and 2.14 (CPU) the decompositions really do change the arithmetic: log_softmax's
backward differs from eager's kernel by ~2e-6 to 5e-6 under aot_eager_decomp_partition while
aot_eager is bitwise equal, so a snippet with TOLERANCE atol=rtol=0 diverges at exactly that stage.
Whether its forward differs too depends on the CPU's vector kernels (bitwise equal on the machine
the lesson was written on; 9.5e-7 off on an AVX2-only AMD EPYC, and with ATEN_CPU_CAPABILITY=default):
the real-worker test takes that from a plain program's run, not from this docstring.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from playground.cli.matrixcmd import format_ladder, format_table
from playground.engine.matrix import (
    LADDER_BACKENDS,
    Cell,
    first_divergence,
    ladder_stages,
    ladder_summary,
)
from playground.engine.report import PhaseTotals, Report
from playground.engine.settings import Settings

BASE = Settings(config=(("dynamo.capture_scalar_outputs", True),), fullgraph=True)


def report(ok: bool = True, grads_ok: bool = True, max_abs: float = 0.0, error: dict | None = None) -> Report:
    return Report.from_dict(
        {
            "graph_count": 1,
            "error": error,
            "equivalence": None
            if error
            else {
                "ok": ok and grads_ok,
                "outputs": [{"max_abs": 0.0 if ok else max_abs, "max_rel": 0.0, "ok": ok}],
                "grads": [{"name": "x", "max_abs": 0.0 if grads_ok else max_abs, "max_rel": 1e-6, "ok": grads_ok}],
            },
        }
    )


def test_stages_keep_the_base_settings_and_end_with_each_mode():
    stages = ladder_stages(BASE, (None, "max-autotune", None))
    assert [s.backend for s in stages] == [*LADDER_BACKENDS, "inductor"]
    assert [s.mode for s in stages][-2:] == [None, "max-autotune"]
    assert all(s.config == BASE.config and s.fullgraph for s in stages)


def test_first_divergence_names_the_stage_what_and_size():
    stages = ladder_stages(BASE, (None, "max-autotune"))
    reports = [report(), report(), report(grads_ok=False, max_abs=2e-6), report(ok=False, max_abs=1e-5), report()]
    cells = [Cell.from_report(s, r) for s, r in zip(stages, reports, strict=True)]
    found = first_divergence(cells)
    assert found is not None
    assert (found.index, found.stage, found.what, found.max_abs) == (2, "aot_eager_decomp_partition", "gradients", 2e-6)
    assert cells[3].diverged == "values" and cells[4].stage == "inductor max-autotune"
    assert "agree before it: eager, aot_eager" in ladder_summary(cells)


def test_a_compile_error_diverges_a_snippet_error_does_not():
    stages = ladder_stages(Settings())
    snippet_error = {"kind": "snippet", "type": "NameError", "message": "x"}
    cells = [Cell.from_report(stages[0], report(error=snippet_error))]
    cells.append(Cell.from_report(stages[1], report()))
    cells.append(Cell.from_report(stages[2], report(error={"kind": "compile", "type": "E", "message": "boom"})))
    found = first_divergence(cells)
    assert found is not None and (found.stage, found.what) == ("aot_eager_decomp_partition", "raised")
    assert first_divergence(cells[:2]) is None
    assert "could not run: eager" in ladder_summary(cells[:2], 4)


def test_each_cell_splits_its_compile_time_into_dynamo_and_backend():
    """The matrix's phase split: Dynamo's tracing, and the rest of torch's phase total (the
    backend's), in the JSON cell and both text tables; absent when torch reported none."""
    totals = {"dynamo_s": 0.19, "aot_s": 1.8, "other_s": 0.04, "total_s": 2.03, "first_call_s": 2.03, "frames": 1}
    (stage,) = ladder_stages(Settings())[:1]
    cell = Cell.from_report(stage, replace(report(), compile_phase_totals=PhaseTotals.from_dict(totals)))
    assert (cell.dynamo_s, cell.backend_s) == (0.19, 1.84)
    assert cell.to_dict()["dynamo_s"] == 0.19 and cell.to_dict()["backend_s"] == 1.84
    bare = Cell.from_report(stage, report())
    assert bare.dynamo_s is None and bare.backend_s is None
    for text in (format_ladder([cell, bare]), format_table([cell, bare])):
        header, _, first, second = text.splitlines()[:4]
        assert "dynamo/backend" in header and "0.190/1.840s" in first and "/" not in second
        assert "dynamo/backend: seconds in Dynamo's tracing / in the backend over all the run's compiles" in text


@pytest.mark.inductor
def test_ladder_names_the_decomposition_stage_on_a_real_worker(standalone):
    """snippets/ladder_log_softmax.py's ladder: the first divergence is the decompositions' stage,
    in the gradient, or in the output already where this CPU's kernels make the decomposed forward
    round differently too: which one, a plain program says (the file's own `__main__`, each
    backend's output and gradient against eager's, bit for bit)."""
    path = Path(__file__).resolve().parents[2] / "snippets" / "ladder_log_softmax.py"
    plain = standalone.run(path)
    assert plain.returncode == 0, plain.stderr[-2000:]
    said = re.search(
        r"^aot_eager_decomp_partition +output equal (True|False) +gradient equal (True|False)", plain.stdout, re.M
    )
    assert said is not None and said[2] == "False", plain.stdout
    what = "gradients" if said[1] == "True" else "values"
    cmd = [sys.executable, "-m", "playground", "matrix", str(path), "--ladder", "--no-timing", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert data["ladder"]["stages"] == list(LADDER_BACKENDS)
    found = data["ladder"]["first_divergence"]
    assert found["stage"] == "aot_eager_decomp_partition" and found["what"] == what, (plain.stdout, data["ladder"])
    assert 0 < found["max_abs"] < 1e-4
    eager, aot = data["cells"][:2]
    assert eager["equivalence"] == aot["equivalence"] == "ok" and aot["max_abs"] == 0.0
    # Every stage compiled one frame: Dynamo's part and the backend's are both measured, and
    # Inductor's backend (lowering, codegen, C++ compile) outweighs eager's (a function call).
    assert all(c["dynamo_s"] > 0 and c["backend_s"] > 0 for c in data["cells"]), data["cells"]
    assert data["cells"][-1]["backend_s"] > data["cells"][0]["backend_s"]
