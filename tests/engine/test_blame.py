"""One rule for phases: the user's exception in any phase is a snippet error with its line and
phase, and what was captured before it stays in the report. `kind: worker` is for our faults."""

from __future__ import annotations

import resource

from playground.engine.sync import SyncWorker
from tests.engine.conftest import run


def test_a_model_that_raises_on_its_fifth_call_is_blamed_in_timing(worker, snippet):
    path = snippet(
        """
        import torch

        class Flaky(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                if self.calls == 5:
                    raise RuntimeError("boom on call 5")
                return torch.sin(x)

        model = Flaky()

        def inputs():
            return [torch.ones(3), torch.ones(3)]
        """
    )
    report = run(worker, path, timing=True, min_run_time=0.01)
    error = report["error"]
    assert error["kind"] == "snippet", error
    assert error["line"] == 11
    assert "timing" in error["message"] and "boom on call 5" in error["message"]
    # Everything captured before the timing phase is still there.
    assert report["graph_count"] >= 1 and report["calls"] == 2
    assert report["equivalence"]["ok"] is True


def test_meta_tensor_inputs_are_the_snippets_error(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return x * 2

        def inputs():
            return [torch.empty(3, device="meta")]
        """
    )
    error = run(worker, path)["error"]
    assert error["kind"] == "snippet" and error["type"] == "MetaTensor"
    assert "meta tensor" in error["message"]


def test_an_exception_whose_str_raises_is_still_a_snippet_error(worker, snippet):
    path = snippet(
        """
        import torch

        class Nasty(Exception):
            def __str__(self):
                raise ValueError("no str for you")

        def fn(x):
            raise Nasty()

        def inputs():
            return [torch.ones(2)]
        """
    )
    error = run(worker, path)["error"]
    assert error["kind"] == "snippet", error
    assert error["line"] == 8
    assert "Nasty" in error["message"]


def test_a_sparse_output_is_compared_not_an_internal_error(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return (x * 2).to_sparse_csr()

        def inputs():
            return [torch.eye(3)]
        """
    )
    report = run(worker, path)
    assert report["error"] is None or report["error"]["kind"] != "worker", report["error"]


def test_a_recursion_that_crashes_dynamos_tracer_is_torch_compiles_crash_at_its_line(snippet):
    """A plain `python` dies of SIGSEGV here too: Dynamo inlines each call on the C stack. The
    report names the line Dynamo was tracing and the depth, blamed on the compile, not on us.
    The worker gets a 4 MiB stack (8 MiB is usual) so that the crash comes sooner, but not with
    2 MiB: the crash then came about 400 calls deep, often before the tracer watch's first word
    (tracer_watch.QUIET_S), and the report could not name the line (3 runs in 6 here, quiet)."""
    path = snippet(
        """
        import sys
        import torch

        sys.setrecursionlimit(200_000)

        def down(x, n):
            if n == 0:
                return x
            return down(x + 1, n - 1)

        def fn(x):
            return down(x, 100_000)

        def inputs():
            yield torch.ones(3)
        """
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    resource.setrlimit(resource.RLIMIT_STACK, (4 << 20, hard))  # the worker's exec reads it
    try:
        worker = SyncWorker(timeout_s=120)
        worker.start()
    finally:
        resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))
    try:
        error = run(worker, path)["error"]
    finally:
        worker.close()
    assert error["kind"] == "compile" and error["type"] == "DynamoCrashed", error
    assert error["line"] == 9
    assert "SIGSEGV while Dynamo traced line 9, at least" in error["message"]
    assert "calls deep: a recursion this deep" in error["message"]
