"""The reference never changes the experiment (../shared/contract.md): on real workers, the graph
and recompile counts of snippets that carry state equal what a plain program making only the
calls gets from torch, and eager-vs-compiled agree where the compiled code does what eager does.

The oracle is torch itself in a fresh `python`: the snippet run as a script, its target compiled
behind a counting backend, the calls of inputs() made once each, nothing else. The program runs
as the gallery's scripts do (tests/standalone.py): forked from a process that imported torch and
compiled nothing, so it starts as a fresh interpreter would, without paying the import each time.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from playground.engine.settings import Settings
from tests.requests import request_for

from .conftest import run

if TYPE_CHECKING:
    from tests.standalone import StandaloneRunner

PLAIN_PROGRAM = r"""
import json, logging, runpy, sys
import torch

graphs = 0
recompiles = 0


class Recompiles(logging.Handler):
    def emit(self, record):
        global recompiles
        recompiles += record.getMessage().lstrip().startswith("Recompiling function")


torch._logging.set_logs(recompiles=True)
logger = logging.getLogger("torch._dynamo.guards.__recompiles")
logger.handlers[:] = [Recompiles()]

def backend(gm, example_inputs):
    global graphs
    graphs += 1
    return gm.forward

ns = runpy.run_path(sys.argv[1])
target = ns["model"] if "model" in ns else ns["fn"]
compiled = torch.compile(target, backend=backend)
for call in ns["inputs"]():
    args = call if isinstance(call, tuple) else (call,)
    compiled(*args)
made, recompiled = graphs, recompiles
# The timing loop's repetitions of the last call: past the recompile limit (8) any further
# repetition compiles nothing, so 64 of them make what any longer loop makes.
for _ in range(64):
    compiled(*args)
print(json.dumps({"graphs": made, "recompiles": recompiled, "graphs_repeating_last": graphs - made}))
"""


def plain_program(standalone: StandaloneRunner, path: str) -> dict[str, int]:
    """What torch does with only the calls, in a fresh process: graphs its backend was handed,
    and "Recompiling function" records of its recompiles log."""
    program = Path(path).with_name("plain_program.py")
    program.write_text(PLAIN_PROGRAM, encoding="utf-8")
    done = standalone.run(program, path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _assert_like_a_plain_program(standalone: StandaloneRunner, report: dict, path: str) -> None:
    assert report["error"] is None, report["error"]
    truth = plain_program(standalone, path)
    assert report["graph_count"] == truth["graphs"], (report["graph_count"], truth)
    assert report["recompile_count"] == truth["recompiles"], (report["recompiles"], truth)


def _state(eq: dict) -> dict[tuple[str, int], dict]:
    return {(s["name"], s["call"]): s for s in eq["state"]}


GLOBAL_READ_THEN_STORED = """
import torch

g_counter = 0

def fn(x):
    global g_counter
    val = x + g_counter
    g_counter = 1
    return val

def inputs():
    return [torch.ones(3), torch.ones(3)]
"""


def test_a_global_read_then_stored_recompiles_as_in_a_plain_program(worker, snippet, standalone):
    path = snippet(GLOBAL_READ_THEN_STORED)
    report = run(worker, path)
    _assert_like_a_plain_program(standalone, report, path)
    assert (report["graph_count"], report["recompile_count"]) == (2, 1)  # torch 2.13/2.14
    eq = report["equivalence"]
    assert eq["ok"] and eq["verdict"] == "identical", eq


def test_a_class_defined_per_call_counts_only_the_calls_graphs(worker, snippet, standalone):
    path = snippet(
        """
        import torch

        def fn(x):
            class Scale:
                factor = 2
            return x * Scale.factor

        def inputs():
            return [torch.ones(3), torch.ones(3), torch.ones(3)]
        """
    )
    report = run(worker, path, timing=True, min_run_time=0.05)
    _assert_like_a_plain_program(standalone, report, path)
    # Graphs the timing loop compiles are reported apart, never in graph_count: as many as
    # repeating the last call compiles in a plain program.
    truth = plain_program(standalone, path)
    assert report["timings"]["graphs_during_timing"] == truth["graphs_repeating_last"], truth


def test_a_compiled_training_step_agrees_with_eager(worker, snippet, standalone):
    path = snippet(
        """
        import torch

        torch.manual_seed(0)
        net = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)

        def fn(x, y):
            opt.zero_grad()
            loss = ((net(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss.detach()

        def inputs():
            torch.manual_seed(1)
            return [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]
        """
    )
    report = run(worker, path)
    _assert_like_a_plain_program(standalone, report, path)
    eq = report["equivalence"]
    assert eq["ok"] and eq["verdict"] == "identical", eq
    # Each step moved the weights; the compiled steps moved them as eager's did.
    state = _state(eq)
    assert {("net.weight", 1), ("net.weight", 3), ("net.bias", 3)} <= set(state)
    assert all(s["max_abs"] == 0 for s in state.values())


COUNTER_BUFFER = """
import torch

class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))
        self.w = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.count += 1
        {extra}
        return x * self.w + self.count

model = Counter()

def inputs():
    return [torch.ones(3), torch.ones(3), torch.ones(3)]
"""


def test_a_module_counter_buffer_agrees_call_by_call(worker, snippet, standalone):
    path = snippet(COUNTER_BUFFER.format(extra="pass"))
    report = run(worker, path)
    _assert_like_a_plain_program(standalone, report, path)
    eq = report["equivalence"]
    assert eq["ok"], eq
    assert [o["max_abs"] for o in eq["outputs"]] == [0.0, 0.0, 0.0]
    assert [(s["name"], s["call"], s["ok"]) for s in eq["state"]] == [
        ("model.count", 1, True),
        ("model.count", 2, True),
        ("model.count", 3, True),
    ]


def test_a_parameter_scaled_in_place_agrees(worker, snippet):
    path = snippet(
        """
        import torch

        class Grow(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.ones(3))

            def forward(self, x):
                with torch.no_grad():
                    self.w.mul_(2)
                return x * self.w

        model = Grow()

        def inputs():
            return [torch.ones(3), torch.ones(3)]
        """
    )
    report = run(worker, path)
    assert report["error"] is None, report["error"]
    eq = report["equivalence"]
    assert eq["ok"], eq
    assert [(s["name"], s["call"], s["max_abs"]) for s in eq["state"]] == [("model.w", 1, 0.0), ("model.w", 2, 0.0)]


def test_a_buffer_only_the_compiled_run_changes_is_caught(worker, snippet):
    # The output is the same either way: only the buffer tells.
    path = snippet(
        COUNTER_BUFFER.format(extra="if torch.compiler.is_compiling():\n            self.count += 1").replace(
            "return x * self.w + self.count", "return x * self.w"
        )
    )
    report = run(worker, path)
    assert report["error"] is None, report["error"]
    eq = report["equivalence"]
    assert not eq["ok"] and eq["verdict"] == "differs", eq
    assert all(o["ok"] for o in eq["outputs"])
    bad = [s for s in eq["state"] if not s["ok"]]
    assert bad and bad[0]["name"] == "model.count" and bad[0]["max_abs"] == 1.0
    assert "compiled 2 vs eager 1" in bad[0]["worst"]


BATCHNORM = """
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        {extra}
        return torch.relu(self.bn(self.conv(x)))

torch.manual_seed(0)
model = Net()

def inputs():
    torch.manual_seed(1)
    return [torch.randn(2, 3, 8, 8) for _ in range(2)]
"""


def test_batchnorm_running_statistics_are_compared(worker, snippet, standalone):
    path = snippet(BATCHNORM.format(extra="pass"))
    report = run(worker, path)
    _assert_like_a_plain_program(standalone, report, path)
    eq = report["equivalence"]
    assert eq["ok"], eq
    names = {name for name, _ in _state(eq)}
    assert {"model.bn.running_mean", "model.bn.running_var", "model.bn.num_batches_tracked"} <= names


def test_a_batchnorm_buffer_divergence_is_caught(worker, snippet):
    path = snippet(
        BATCHNORM.format(extra="if torch.compiler.is_compiling():\n            self.bn.running_mean.add_(1e-3)")
    )
    report = run(worker, path)
    assert report["error"] is None, report["error"]
    eq = report["equivalence"]
    assert not eq["ok"] and eq["verdict"] == "differs", eq
    bad = {s["name"] for s in eq["state"] if not s["ok"]}
    assert bad == {"model.bn.running_mean"}


def test_the_snippets_output_is_the_compiled_runs_alone(worker, snippet):
    # A plain program making the calls prints once per call: the reference's prints are its own.
    path = snippet(
        """
        import torch

        print("loaded")

        def fn(x):
            print("called")
            return x + 1

        def inputs():
            return [torch.ones(2), torch.ones(2)]
        """
    )
    report = run(worker, path)
    assert report["output"]["text"].splitlines() == ["loaded", "called", "called"]


@pytest.mark.parametrize("where", ["forward", "loss"])
def test_an_eager_failure_is_the_snippets_with_its_line(worker, snippet, where):
    body = "raise ValueError('boom')" if where == "forward" else "return x * 2"
    loss = "def loss(out):\n    raise ValueError('boom')\n" if where == "loss" else ""
    path = snippet(
        f"""
import torch

def fn(x):
    if x.sum() > 2:
        {body}
    return x * 2

{loss}
def inputs():
    return [torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)]
"""
    )
    report = run(worker, path)
    error = report["error"]
    assert error["kind"] == "snippet" and "boom" in error["message"], error
    assert error["line"] == (5 if where == "forward" else 9), error


ABORTS_WHERE_EAGER_RAISES = """
import os
import torch

def fn(x):
    if x.shape[0] == 3:
        if torch.compiler.is_compiling():
            os.abort()
        raise ValueError("boom")
    return x * 2

def inputs():
    return [torch.ones(2), torch.ones(3)]
"""


@pytest.mark.parametrize("lane", [False, True], ids=["eager", "inductor_with_findings_lane"])
def test_a_compiled_call_that_kills_the_process_where_eager_raised_is_the_snippets_error(worker, snippet, lane):
    """The run's process dies on a call where eager raised: the report is the snippet's error.
    With a findings lane, the lane starts the eager reference, and it dies on the same call
    before it does: the template starts the eager reference itself."""
    path = snippet(ABORTS_WHERE_EAGER_RAISES)
    request = request_for(path, Settings(backend="inductor" if lane else "eager"), timing=False)
    if lane:
        request = dataclasses.replace(request, flags=dataclasses.replace(request.flags, early_findings=True))
    error = worker.run(request).report.error
    assert error is not None and error.kind == "snippet" and "boom" in error.message, error
    assert error.line == 8, error


def test_a_sparse_input_is_compared_not_an_internal_error(worker, snippet):
    # torch.equal has no sparse kernel: checking whether a call mutated its arguments once
    # crashed with "internal error ... aten::equal ... SparseCPU".
    path = snippet(
        """
        import torch

        def fn(s, x):
            return torch.sparse.mm(s, x)

        def inputs():
            i = torch.tensor([[0, 1, 2], [2, 0, 1]])
            s = torch.sparse_coo_tensor(i, torch.tensor([1.0, 2.0, 3.0]), (3, 3))
            return [(s, torch.ones(3, 2))]
        """
    )
    report = run(worker, path)
    assert report["error"] is None, report["error"]
    assert report["equivalence"]["ok"], report["equivalence"]
