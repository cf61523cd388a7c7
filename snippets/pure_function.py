"""A pure function: one graph, values+grads equal

What it shows: the baseline every other snippet departs from. Only
tensor operations, no Python decisions on tensor values, so Dynamo
captures the whole function as one FX graph, and the second call (same
shapes, dtypes, requires_grad) reuses it.

Look at: the status line (graphs 1, breaks 0, recompiles 0), the
Equivalence pane (the output and the gradient of both x and w within
tolerance), the Guards pane (what must stay true for the graph to be
reused: shapes, dtypes, requires_grad).

Try next: press f: nothing changes, because there is nothing to refuse.
Change the second call's batch from 8 to 16 and rerun: one recompile
(see shapes_auto.py).

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


def fn(x, w):
    h = torch.tanh(x @ w)
    gate = torch.sigmoid(x).mean(dim=-1, keepdim=True)
    return h * gate + 0.1 * h.pow(2)


def inputs():
    torch.manual_seed(0)
    w = torch.randn(16, 4, requires_grad=True)
    yield torch.randn(8, 16, requires_grad=True), w
    yield torch.randn(8, 16, requires_grad=True), w


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
    # press f: nothing to refuse
    {
        "settings": {"fullgraph": True},
        "expected": {
            "graph_count": 1,
            "graph_break_count": 0,
            "error": None,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x, w in inputs():
        out = compiled(x, w)
        out.sum().backward()
        print("out", tuple(out.shape), "equal to eager:", torch.allclose(out, fn(x, w)))
