"""torch.where under fullgraph: one graph

What it shows: a pointwise choice written with torch.where is an
ordinary tensor operation, so it needs no Python decision and no graph
break. SETTINGS turn fullgraph on: any break would raise, and none does.
The backend is "eager": it checks capture only and generates no code, so
this is not a speed claim.

Look at: the status line (graphs 1, breaks 0) with fullgraph=on in the
header; the Graphs pane shows gt, mul, neg and where in a single graph;
Equivalence: values and gradients equal (float64, so the match is
exact).

Try next: rewrite the body as a Python `if (x > 0).all():` and rerun:
fullgraph=True now raises "Data-dependent branching" (compare
sum_if_fullgraph.py).

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": True,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


def fn(x):
    return torch.where(x > 0, x * x, -x)


def inputs():
    torch.manual_seed(0)
    yield torch.tensor([-2.0, 1.0, 3.0], dtype=torch.float64, requires_grad=True)
    yield torch.randn(3, dtype=torch.float64, requires_grad=True)


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
    # press f (off): the same single graph
    {
        "settings": {"fullgraph": False},
        "expected": {
            "graph_count": 1,
            "graph_break_count": 0,
            "error": None,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("values", compiled(x).tolist())
