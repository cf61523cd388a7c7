"""Shapes, dynamic=True: one symbolic graph

What it shows: dynamic=True compiles with symbolic sizes from the first
call, so the one graph serves batches 2 to 5 with no recompile. The
price: a symbolic graph can optimize less than a static one (Inductor
cannot specialize on the size), and guards now check ranges and
relations of sizes instead of exact values.

Look at: the status line (graphs 1, recompiles 0); the Guards pane
(size=[None, None] and range guards `2 <= L['x'].size()[0]`: every
dimension became symbolic, even the 8 that never changed); the Graphs
pane (sizes appear as symbols such as s77, not as 2).

Try next: add a batch of 1 to inputs(): sizes 0 and 1 are always
specialized, so a batch of 1 fails the `2 <=` guard and gets its own
graph even under dynamic=True (graphs 2, recompiles 1).

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": True,
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
        print("batch", x.shape[0], "->", tuple(compiled(x).shape))
