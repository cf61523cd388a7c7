"""print() on line one: a break explain misses

What it shows: the print runs before any tensor operation, so the graph
before the break is empty and Dynamo compiles only the code after it:
graphs 1, breaks 1. torch._dynamo.explain counts breaks as "graphs minus
one" and reports 0 here; the graph_breaks log, which this playground
reads, reports the break. fullgraph=True raises on it ("Failed to trace
builtin operator").

Look at: the status line (graphs 1 but breaks 1: one graph does not mean
no break); the Breaks pane (the print line); the Output pane (the print
runs on every call, eagerly, in Python).

Try next: press f and rerun: Unsupported. Move the print to after the
return value is computed, or log shapes only outside the compiled
function.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


def fn(x):
    print("fn got", x)
    return torch.sin(x) + torch.cos(x)


def inputs():
    torch.manual_seed(0)
    yield torch.randn(3, requires_grad=True)
    yield torch.randn(3, requires_grad=True)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press f: Unsupported
    {
        "settings": {"fullgraph": True},
        "expected": {
            "graph_count": 0,
            "error": "compile",
            "error_type": "Unsupported",
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("out", compiled(x).tolist())
