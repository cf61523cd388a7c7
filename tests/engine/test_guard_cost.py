"""Issue 21: what the guards cost a call, measured on real workers after the timing."""

from __future__ import annotations

from pathlib import Path

from playground.engine.report import Report

from .conftest import run_result

GALLERY = Path(__file__).resolve().parents[2] / "snippets"


def test_guard_cost_is_present_and_below_the_compiled_call(worker):
    report = run_result(worker, str(GALLERY / "guard_cost.py"), timing=True, min_run_time=0.05).report
    assert report.error is None and report.timings is not None
    cost = report.guard_cost
    assert cost is not None and cost.timed_call == 2
    (entry,) = cost.entries
    assert entry.guards is not None and entry.guards > 64  # one per float, and more
    assert cost.entry == entry.compile_id and cost.entries_tried == 1
    assert cost.guards_evaluated == entry.guards
    assert cost.compiled_us is not None and abs(cost.compiled_us - report.timings.compiled_ms * 1e3) < 1e-2
    assert 0 < cost.check_us < cost.compiled_us
    assert 0 < cost.share < 1
    wire = report.to_dict()
    del wire["guard_cost"]
    assert Report.from_dict(wire).guard_cost is None


def test_guard_count_without_timing_and_tried_entries_after_a_recompile(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x, n):
            return x * n

        def inputs():
            yield torch.randn(4), 2
            yield torch.randn(4), 3
            yield torch.randn(4), 2
        """
    )
    cost = run_result(worker, path).report.guard_cost
    assert cost is not None and cost.check_us is not None and cost.compiled_us is None and cost.share is None
    # n=3 made a second entry (n stays static in this torch's first recompile, or turns
    # dynamic): the last call's entry is found in torch's order
    assert len(cost.entries) >= 1 and cost.entry is not None and cost.entries_tried >= 1
    assert all(e.guards for e in cost.entries)


def test_a_module_whose_forward_is_torchs_own_is_found_in_the_frame_torch_wraps_it_in(worker):
    """nn.Sequential's forward is in torch's files: torch.compile compiles wrap_inline's frame
    around it, whose guards read the module as L['fn'] and its children through `_modules`."""
    report = run_result(worker, str(GALLERY / "mlp_module.py")).report
    cost = report.guard_cost
    assert cost is not None and cost.entry == "0/0" and cost.check_us is not None and cost.check_us > 0
    (entry,) = cost.entries
    # the three children's guards sit under the `_modules` dict's key and value managers:
    # 45 leaves on 2.13, 46 on 2.14 (25 and 26 without them)
    assert entry.guards is not None and entry.guards > 40
    assert [(c.entry, c.status) for c in report.explanation.calls] == [("0/0", "compiled"), ("0/0", "cached")]


def test_the_guards_read_the_frame_a_decorated_forward_really_has(worker, snippet):
    """A decorated forward (functools.wraps over `(*args, **kwargs)`, as transformers' models
    have) with a default argument: the frame's guards read the wrapper's own parameters, the
    defaults and the closure's `func`, so the timed call's entry is found and its checks timed."""
    path = snippet(
        """
        import functools

        import torch

        def checked(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                return func(*args, **kwargs)

            return wrapper

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 4)

            @checked
            def forward(self, x, mask=None, scale=2.0):
                y = self.lin(x) * scale
                return y if mask is None else y * mask

        model = Net()

        def inputs():
            yield torch.randn(2, 4)
            yield torch.randn(2, 4)
        """
    )
    report = run_result(worker, path).report
    cost = report.guard_cost
    assert cost is not None and cost.note == ""
    assert cost.entry is not None and cost.entry == cost.entries[0].compile_id
    # the same frame view tells which entry served each call: the second call is a cache hit
    # (with the advertised signature, Recomp said it ran eagerly: "nothing compiled")
    assert [(c.status, c.entry) for c in report.explanation.calls] == [("compiled", cost.entry), ("cached", cost.entry)]
    assert cost.entries_tried == 1 and cost.check_us is not None and cost.check_us > 0
