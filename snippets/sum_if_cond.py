"""Fix for if x.sum() > 0: torch.cond, one graph

What it shows: torch.cond(pred, true_fn, false_fn, operands) is a
control-flow operator: both branches are traced into subgraphs and the
choice is made at run time from the tensor predicate. fullgraph=True is
on and nothing breaks; the same graph serves positive and negative
inputs, gradients included. The branches must return tensors of the same
shape and dtype, and must not mutate their inputs.

Look at: the status line (graphs 1, breaks 0, recompiles 0 over three
calls taking both branches); the Graphs pane
(torch.ops.higher_order.cond with two subgraphs, cond_true_0 holding sin
and cond_false_0 holding cos); Equivalence: values and gradients agree
for every call.

Try next: make the false branch `lambda y: y.sum()` (a different shape)
and rerun: cond refuses, already in eager (torch.cond traces its
branches even uncompiled), so the error kind is "snippet". Compare with
sum_if_where.py, which computes both branches and selects.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": True,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def fn(x):
    y = x * 2
    return torch.cond(y.sum() > 0, torch.sin, torch.cos, (y,))


def inputs():
    torch.manual_seed(0)
    base = torch.rand(4, 8) + 0.1
    yield base.clone().requires_grad_()
    yield (-base).requires_grad_()
    yield (base * 3).requires_grad_()


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
    for x in inputs():
        print("sum", round(compiled(x).sum().item(), 4))
