"""if x.sum() > 0: data-dependent break, 3 graphs

What it shows: a Python `if` on a tensor's value cannot be decided while
tracing, so Dynamo compiles the code up to the condition, breaks, lets
Python take the branch, and compiles each branch as its own resume
function the first time it is reached. One positive and one negative
input reach both branches: 3 graphs, 1 break.

Look at: the Breaks pane ("Data-dependent branching" at the `if` line,
with the hint); the Graphs pane (graph 1 ends with sum and gt, graphs 2
and 3 hold sin and cos); Equivalence: values and gradients agree: a
break is slow, not wrong.

Try next: press f: the break becomes an Unsupported error
(sum_if_fullgraph.py). Then open the fixes: sum_if_cond.py (torch.cond)
and sum_if_where.py (torch.where).

Expected (torch 2.13/2.14, default SETTINGS):
graphs 3, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def fn(x):
    y = x * 2
    if y.sum() > 0:
        return torch.sin(y)
    return torch.cos(y)


def inputs():
    torch.manual_seed(0)
    base = torch.rand(4, 8) + 0.1
    yield base.clone().requires_grad_()
    yield (-base).requires_grad_()
    yield (base * 3).requires_grad_()


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 3,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press f: Unsupported
    {
        "settings": {"fullgraph": True},
        "expected": {
            "graph_count": 0,
            "error": "compile",
            "error_type": "Unsupported",
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("sum", round(compiled(x).sum().item(), 4))
