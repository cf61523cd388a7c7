"""Dropout: compiled must draw eager's RNG

What it shows: dropout draws random numbers, so eager and compiled
outputs agree only if both draw the same ones. The playground seeds the
RNG identically before the eager and the compiled run. With aot_eager
the compiled graph calls the same ATen random ops in the same order, so
masks, outputs and gradients match exactly.

Look at: Equivalence (ok, max_abs 0 for outputs and every parameter
gradient); the Graphs pane (the dropout call inside the graph).

Try next: press b to reach inductor and rerun: still equal, and that
needs saying. The playground runs Inductor with
torch._inductor.config.fallback_random = True, which makes Inductor call
eager's generator. A plain torch.compile in your own script does not:
Inductor then generates its own random numbers and the masks differ (on
torch 2.13 the outputs differ by more than 1). See it with `python
snippets/dropout.py --inductor`. Or put model.eval() at the top of
inputs(): no randomness, equal on every backend.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch
from torch import nn

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Dropout(p=0.5), nn.Linear(64, 4))


def inputs():
    torch.manual_seed(1)
    yield torch.randn(16, 32)
    yield torch.randn(16, 32)


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
    # press b: inductor (the playground runs it with fallback_random)
    {
        "settings": {"backend": "inductor"},
        "expected": {
            "graph_count": 1,
            "error": None,
            "equivalence_ok": True,
        },
    },
]


if __name__ == "__main__":
    import sys

    settings = dict(SETTINGS, backend="inductor") if "--inductor" in sys.argv else SETTINGS
    compiled = torch.compile(model, **settings)
    for x in inputs():
        torch.manual_seed(7)
        expected = model(x)
        torch.manual_seed(7)
        print(settings["backend"], "same dropout mask as eager:", torch.equal(compiled(x), expected))
