"""Issue 21: what a guard filter or skip_guard_eval_unsafe would save the timed call, measured on
real workers after the timing, on request only, never changing the run's own facts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from playground.engine.passes import Passes
from playground.engine.settings import Settings
from playground.engine.wording import guard_what_if as words

from .conftest import run_result

GALLERY = Path(__file__).resolve().parents[2] / "snippets"
MODULE_FILTER = "skip_guard_on_inbuilt_nn_modules_unsafe"
FUNCTION_FILTER = "skip_guard_on_globals_unsafe"
#: The run's own facts, which the what-if must leave as a run without it reports them.
FACTS = (
    "graph_count",
    "graph_breaks",
    "graph_break_count",
    "recompiles",
    "guards",
    "call_entries",
    "guard_details",
    "break_sites",
    "compile_anatomy",
    "graphs",
    "notes",
)


def text(report) -> str:
    return "\n".join(line.text for line in words.what_if_lines(report))


def test_the_module_filter_drops_torchs_own_modules_guards_and_nothing_else_changes(worker):
    path = str(GALLERY / "mlp_module.py")  # nn.Sequential(Linear, GELU, Linear), aot_eager
    plain = run_result(worker, path, Settings(backend="aot_eager")).report
    asked = run_result(worker, path, Settings(backend="aot_eager"), passes=Passes(guard_what_if=True)).report
    assert plain.guard_what_if is None and "guard_what_if" not in plain.to_dict()
    assert asked.error is None
    for key in FACTS:
        assert asked.to_dict().get(key) == plain.to_dict().get(key), key
    assert len(asked.compile_phases) == len(plain.compile_phases) == 1
    assert asked.guard_cost is not None and plain.guard_cost is not None
    assert asked.guard_cost.entries == plain.guard_cost.entries
    what = asked.guard_what_if
    assert what is not None and what.note == "", what.note
    assert what.target == "module" and what.filter == MODULE_FILTER and what.timed_call == 2
    # the Linear and GELU children's guards go; the input's and torch's own state stay
    assert 0 < what.dropped < what.filter_guards
    assert what.dropped_sources == ("self[0]", "self[1]", "self[2]")
    assert what.entries_before == what.entries_after == 1
    assert what.guards_before == asked.guard_cost.guards_evaluated
    assert what.guards_after is not None and what.guards_after < what.guards_before
    assert what.check_us_before and what.check_us_after and what.check_noise_us is not None
    assert what.lookup_noise_us is not None and what.call_noise_us is not None
    assert what.call_us_before and what.call_us_after and what.lookup_us_before and what.lookup_us_after
    assert what.outputs_agree is True and what.output_max_abs == 0.0
    # one entry: under the stance no guard is checked, and the probe shows what that risks
    assert what.stance_lookup_us is not None and what.stance_call_us is not None
    assert what.stance_probe_stale is True
    said = text(asked)
    assert "one cache entry, so no guard is checked" in said
    assert "risk: if an attribute, parameter or submodule of self[0], self[1], self[2] is replaced" in said
    assert "outputs under the filter equal the outputs without it on call 2's inputs" in said
    previews = {p.filter: p.drops for p in what.preview}
    assert previews[MODULE_FILTER] == what.dropped and previews["skip_all_guards_unsafe"] == what.filter_guards


def test_a_filter_that_drops_nothing_says_so(worker):
    """guard_cost.py's guards are on its own module's floats: torch's own-module filter has
    nothing to drop (the all-modules filter would drop them, and the preview says how many)."""
    report = run_result(worker, str(GALLERY / "guard_cost.py"), passes=Passes(guard_what_if=True)).report
    what = report.guard_what_if
    assert what is not None and what.note == "", what.note
    assert what.dropped == 0 and what.dropped_sources == () and what.guards_after == what.guards_before
    assert "nothing saved, nothing risked here" in text(report)
    previews = {p.filter: p.drops for p in what.preview}
    assert previews["skip_guard_on_all_nn_modules_unsafe"] >= 128  # 64 floats and 64 names


def test_a_function_gets_the_globals_filter_and_several_entries_check_what_tells_them_apart(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x, n):
            return torch.sin(x) * n

        def inputs():
            yield torch.randn(4), 2
            yield torch.randn(4, 3), 2
        """
    )
    report = run_result(
        worker, path, Settings(backend="eager", dynamic=False), passes=Passes(guard_what_if=True)
    ).report
    what = report.guard_what_if
    assert report.error is None and what is not None and what.note == "", what and what.note
    assert what.target == "function" and what.filter == FUNCTION_FILTER
    assert what.entries_before == 2 and what.entries_after == 2
    assert what.dropped >= 2 and "torch" in what.dropped_sources  # G['torch'] and torch.sin
    assert what.outputs_agree is True
    said = text(report)
    assert "2 cache entries, so only the guards that tell them apart are checked" in said
    assert "risk: if torch is rebound after compile" in said


def test_module_attributes_that_change_between_calls_are_reported_not_crashed_on(worker, snippet):
    path = snippet(
        """
        import torch
        from torch import nn

        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.scale = 1.0

            def forward(self, x):
                return self.lin(x) * self.scale

        model = Scaled()

        def inputs():
            yield torch.randn(2, 4)
            model.scale = 2.0
            model.lin = nn.Linear(4, 4)
            yield torch.randn(2, 4)
            model.lin.in_features = 5
            yield torch.randn(2, 4)
        """
    )
    report = run_result(worker, path, passes=Passes(guard_what_if=True)).report
    assert report.error is None
    what = report.guard_what_if
    assert what is not None and what.target == "module"
    assert what.entries_before >= 2  # the run recompiled when scale changed
    said = text(report)
    assert said.startswith("guard what-if")
    if what.entries_after is not None and what.entries_after != what.entries_before:
        assert "inputs() changed the target between calls" in said


def test_a_what_if_whose_calls_raise_is_a_note_and_the_run_stays_whole(worker, snippet):
    path = snippet(
        """
        import torch

        made = [0]

        @torch._dynamo.disable
        def tick():
            made[0] += 1
            if made[0] > 2:
                raise RuntimeError("tick: only two calls in this process")

        def fn(x):
            tick()
            return x + 1

        def inputs():
            yield torch.randn(4)
            yield torch.randn(4)
        """
    )
    report = run_result(worker, path, passes=Passes(guard_what_if=True)).report
    assert report.error is None and report.equivalence is not None and report.equivalence.ok
    what = report.guard_what_if
    assert what is not None and "RuntimeError: tick: only two calls" in what.note
    assert "not measured further: the what-if stopped: RuntimeError" in text(report)


def test_torch_refuses_the_stance_on_a_function_with_a_break_and_the_filter_is_still_measured(worker, snippet):
    """Measured on 2.13 and 2.14: after warm-up, a call of a function with a graph break under
    skip_guard_eval_unsafe raises "Recompilation triggered with skip_guard_eval_unsafe stance"."""
    path = snippet(
        """
        import torch

        @torch._dynamo.disable
        def tick():
            pass

        def fn(x):
            tick()
            return x + 1

        def inputs():
            yield torch.randn(4)
            yield torch.randn(4)
        """
    )
    report = run_result(worker, path, passes=Passes(guard_what_if=True)).report
    what = report.guard_what_if
    assert report.error is None and what is not None and what.note == "", what and what.note
    assert what.stance_error.startswith("RuntimeError: Recompilation triggered with skip_guard_eval_unsafe stance")
    assert what.stance_lookup_us is None and what.call_us_before and what.lookup_us_before is not None
    assert what.entries_after == 1 and what.check_us_after and what.outputs_agree is True
    assert "torch refused the timed call under it (RuntimeError: Recompilation triggered" in text(report)


def test_a_what_if_that_would_outlast_the_runs_timeout_does_not_start_and_says_so(worker, snippet):
    path = snippet(
        """
        import time
        import torch

        made = [0]

        @torch._dynamo.disable
        def tick():
            made[0] += 1
            if made[0] > 2:
                time.sleep(0.5)  # only the what-if's calls are slow

        def fn(x):
            tick()
            return x + 1

        def inputs():
            yield torch.randn(4)
            yield torch.randn(4)
        """
    )
    report = run_result(worker, path, passes=Passes(guard_what_if=True), timeout_s=10).report
    what = report.guard_what_if
    assert report.error is None and what is not None
    assert what.note.startswith("stopped before timing the run's own entries: the run's timeout leaves")
    assert what.guards_before is not None and what.check_us_before is not None  # measured before it stopped


def test_nothing_compiled_leaves_only_a_note(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return x + 1

        def inputs():
            yield torch.randn(4)
        """
    )
    report = run_result(
        worker, path, Settings(backend="eager", stance="force_eager"), passes=Passes(guard_what_if=True)
    ).report
    what = report.guard_what_if
    assert report.error is None and what is not None
    assert what.note.startswith("the target's own frame has no compiled entry") and what.dropped == 0


def test_check_json_carries_the_what_if():
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", "snippets/guard_cost.py", "--json", "--guard-what-if"]
        + ["--min-run-time", "0.05"],
        cwd=GALLERY.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    what = report["guard_what_if"]
    assert what["filter"] == MODULE_FILTER and what["check_us_before"] > 0 and what["stance_lookup_us"] is not None
    assert report["timings"]["compiled_ms"] > 0


@pytest.mark.inductor
def test_inductor_recompiles_under_the_filter_from_its_caches(worker):
    report = run_result(
        worker, str(GALLERY / "fused_pointwise.py"), Settings(backend="inductor"), passes=Passes(guard_what_if=True)
    )
    what = report.report.guard_what_if
    assert report.report.error is None and what is not None and what.note == "", what and what.note
    assert what.target == "function" and what.entries_after == what.entries_before == 1
    assert what.check_us_after is not None and what.outputs_agree is True
