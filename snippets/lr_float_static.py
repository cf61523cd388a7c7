"""Float learning rate, dynamic=False: limit hit

What it shows: Dynamo treats a Python float argument as a constant and
guards on its exact value (`lr == 0.1`). With dynamic=False it never
makes it symbolic, so every new value from the schedule recompiles.
After 8 compiles of the same function, torch hits config.recompile_limit
(8) and stops compiling it: calls with new values run eagerly from then
on, silently slower, with values still correct.

Look at: the status line (graphs 8, LIMIT HIT); the Recompiles pane (one
reason per step: "lr == 0.1", "lr == 0.0983...", ...); Equivalence stays
ok: the fallback is eager, so the values are right and only the speed is
lost.

Try next: press d to dynamic=auto: one recompile, then lr is symbolic
(lr_float_auto.py). Better: pass lr as a tensor (lr_tensor.py): no
recompile at all.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 8, breaks 0, recompiles 8, limit hit yes, raises no
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
        yield w, grad, lr


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 8,
    "graph_break_count": 0,
    "recompile_count": 8,
    "recompile_limit_hit": True,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press d: auto
    {
        "settings": {"dynamic": None},
        "expected": {
            "graph_count": 2,
            "recompile_count": 1,
            "recompile_limit_hit": False,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for w, grad, lr in inputs():
        compiled(w, grad, lr)
    print("12 steps done; see the recompile_limit warning above")
