"""An input mutated in place, compiled too

What it shows: `x.add_(bias)` changes the caller's tensor. Dynamo
captures the mutation (AOTAutograd functionalizes it, then copies the
new value back into x), so the compiled function has the same side
effect as eager, and one graph. An experiment must hand eager and
compiled their own copies of x, or the second run starts from the first
run's result; the playground clones every call's arguments.

Look at: the status line (graphs 1, breaks 0); the Graphs pane (add_ in
the Dynamo graph); Equivalence: the outputs agree and so does the
mutated input.

Try next: add `requires_grad=True` to x: autograd refuses an in-place op
on a leaf that requires grad, in eager too, so the error kind is
"snippet", not "compile".

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def fn(x, bias):
    x.add_(bias)  # the caller's x changes
    return torch.relu(x) * 2


def inputs():
    torch.manual_seed(0)
    bias = torch.randn(8)
    yield torch.randn(4, 8), bias
    yield torch.randn(4, 8), bias


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x, bias in inputs():
        before = x.clone()
        out = compiled(x, bias)
        print("x changed in place:", torch.equal(x, before + bias), tuple(out.shape))
