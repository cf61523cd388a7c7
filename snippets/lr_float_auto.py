"""Float learning rate, dynamic auto: 1 recompile

What it shows: the same 12-step schedule as lr_float_static.py under
dynamic=None (the default). The first call specializes on lr == 0.1; the
second value fails that guard, and automatic dynamic recompiles once
with lr as a symbolic float, which every later value reuses. Two graphs,
one recompile, no limit.

Look at: the status line (graphs 2, recompiles 1); the Recompiles pane
(one reason, "lr == 0.1"); the Graphs pane (graph 1 has lr baked in as a
constant; graph 2 takes it as an input, L_lr_, a float64 0-d tensor).

Try next: press d twice to reach dynamic=false and watch the limit hit
(lr_float_static.py); then open lr_tensor.py, which never recompiles.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 0, recompiles 1, limit hit no, raises no
"""

import math

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
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
        yield w, grad, lr


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 0,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press d twice: false
    {
        "settings": {"dynamic": False},
        "expected": {
            "graph_count": 8,
            "recompile_count": 8,
            "recompile_limit_hit": True,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for w, grad, lr in inputs():
        compiled(w, grad, lr)
    print("12 steps done")
