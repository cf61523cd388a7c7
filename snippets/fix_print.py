"""Fixes: a print inside a compiled function

What it shows: `print` is a side effect Dynamo does not put in a graph:
it breaks the function in two and runs the print in Python between the
graphs. torch offers `torch._dynamo.config.reorderable_logging_functions`:
a function in that set is moved to after the graph and called with the
values it was given, so the function compiles whole and still prints.
Only for arguments a graph can hand back (tensors, constants): print a
tuple of sizes and the break stays, of another kind.

Look at: the Breaks pane (the print line); the fixes key: the
reorderable-logging remedy, its graphs and breaks, and "prints" against
the run without it (what was printed must not change).

Try next: `check snippets/fix_print.py --try-fixes`; or print after the
compiled call returns.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


def fn(x):
    y = torch.sin(x) * 2
    print("mean", y.mean())
    return y + torch.cos(x)


def inputs():
    torch.manual_seed(0)
    yield torch.randn(3, requires_grad=True)
    yield torch.randn(3, requires_grad=True)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What --try-fixes tries here, each checked by tests/test_gallery_fixes.py against a plain
# `python` run of this file with `apply` added (the counts are torch's, computed in the test):
FIXES = [
    {
        "kind": "break",
        "at": 'print("mean"',
        "remedy": "reorderable_logging",
        "apply": "torch._dynamo.config.reorderable_logging_functions.add(print)",
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("out", compiled(x).tolist())
