"""nn.Module Linear-GELU-Linear: grads per param

What it shows: torch.compile(model) returns a wrapper that shares the
module's parameters (state_dict keys gain an "_orig_mod." prefix on the
wrapper). The forward is one graph; with aot_eager, AOTAutograd also
traces the backward ahead of time. The gradient check runs backward
through eager and compiled and compares the gradient of every named
parameter: 0.weight, 0.bias, 2.weight, 2.bias.

Look at: the status line (graphs 1, breaks 0); the Equivalence pane (one
row per output and per named parameter gradient, with max_abs and
max_rel); the Guards pane (a TENSOR_MATCH per parameter: shape, dtype,
requires_grad; Linear and GELU never read `training`, so no guard on it:
compare train_eval.py).

Try next: press b to switch to inductor and rerun: still one graph, now
with generated C++ code (Graphs pane), small float differences, and a
timing worth reading. Then open train_eval.py.

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
model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 10))


def inputs():
    torch.manual_seed(1)
    yield torch.randn(32, 64)
    yield torch.randn(32, 64)


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
    # press b: inductor
    {
        "settings": {"backend": "inductor"},
        "expected": {"graph_count": 1, "graph_break_count": 0, "error": None, "equivalence_ok": True},
    },
]


if __name__ == "__main__":
    compiled = torch.compile(model, **SETTINGS)
    for x in inputs():
        out = compiled(x)
        out.sum().backward()
        print("out", tuple(out.shape), "equal:", torch.allclose(out, model(x), atol=1e-6))
    print("grads:", [name for name, p in model.named_parameters() if p.grad is not None])
