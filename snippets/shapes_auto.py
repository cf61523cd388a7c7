"""Shapes, dynamic auto: static, then dynamic

What it shows: the default. The first call compiles a static graph
(batch 2). When batch 3 fails the size guard, Dynamo marks that
dimension dynamic and recompiles once with a symbolic size; batches 4
and 5 reuse that graph. Two graphs, one recompile.

Look at: the status line (graphs 2, recompiles 1); the Recompiles pane
(one reason, "size mismatch at index 0. expected 2, actual 3"); the
Guards pane (entry 0/0 pins size=[2, 8]; entry 0/1 has size=[None, 8]
and a range guard `2 <= L['x'].size()[0]`); the Graphs pane (graph 2
takes a symbolic size, a name like s77, instead of 2).

Try next: press d to get dynamic=true (one graph from the start) or
dynamic=false (four graphs); see shapes_mark_dynamic.py to say in
advance which dimension changes.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 0, recompiles 1, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
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
    "graph_count": 2,
    "graph_break_count": 0,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press d: true
    {
        "settings": {"dynamic": True},
        "expected": {
            "graph_count": 1,
            "recompile_count": 0,
        },
    },
    # press d again: false
    {
        "settings": {"dynamic": False},
        "expected": {
            "graph_count": 4,
            "recompile_count": 3,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("batch", x.shape[0], "->", tuple(compiled(x).shape))
