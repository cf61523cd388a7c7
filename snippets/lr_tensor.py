"""Tensor learning rate: one graph, no recompile

What it shows: Dynamo guards on tensor metadata (shape, dtype, device,
requires_grad), never on tensor values. Passing lr as torch.tensor(lr)
makes the schedule data, not a constant: the 12 different values share
one graph with no recompile, whatever the dynamic setting. This is why
optimizers take tensor learning rates when compiled.

Look at: the status line (graphs 1, recompiles 0, with dynamic=false in
the header); the Guards pane (lr appears with its dtype and shape, no
value).

Try next: press d through auto and true: still one graph. Change one
value to a Python float (drop the torch.tensor) and the float guard
comes back.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import math

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": False,
    "backend": "eager",
    "mode": None,
}


def fn(w, grad, lr):
    # one SGD step with weight decay
    return w - lr * (grad + 1e-4 * w)


def inputs():
    torch.manual_seed(0)
    w = torch.randn(64, requires_grad=True)
    grad = torch.randn(64)
    for step in range(12):
        lr = 0.05 * (1 + math.cos(math.pi * step / 12))  # cosine schedule
        yield w, grad, torch.tensor(lr)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press d: auto
    {
        "settings": {"dynamic": None},
        "expected": {
            "graph_count": 1,
            "recompile_count": 0,
        },
    },
    # press d again: true
    {
        "settings": {"dynamic": True},
        "expected": {
            "graph_count": 1,
            "recompile_count": 0,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for w, grad, lr in inputs():
        compiled(w, grad, lr)
    print("12 steps done")
