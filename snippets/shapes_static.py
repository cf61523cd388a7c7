"""Shapes, dynamic=False: one graph per shape

What it shows: with dynamic=False every dimension is a constant baked
into the graph, and a guard checks the exact size on every call. Four
batch sizes give four graphs and three recompiles, each caused by "size
mismatch at index 0". A training loop with a ragged last batch pays this
once; a loop over variable-length inputs pays it until the recompile
limit (8) and then runs eagerly.

Look at: the status line (graphs 4, recompiles 3); the Recompiles pane
(one reason per new size: "tensor 'x' size mismatch at index 0. expected
2, actual 3"); the Guards pane (each entry pins the size of x).

Try next: press d to cycle dynamic to auto (shapes_auto.py) and to true
(shapes_dynamic.py) and compare the counts; or open
shapes_mark_dynamic.py.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 4, breaks 0, recompiles 3, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": False,
    "backend": "eager",
    "mode": None,
}


def fn(x):
    return torch.nn.functional.gelu(x).sum(dim=0) * 2


def inputs():
    torch.manual_seed(0)
    for batch in (2, 3, 4, 5):
        yield torch.randn(batch, 8, requires_grad=True)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 4,
    "graph_break_count": 0,
    "recompile_count": 3,
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
            "graph_count": 2,
            "recompile_count": 1,
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
    for x in inputs():
        print("batch", x.shape[0], "->", tuple(compiled(x).shape))
