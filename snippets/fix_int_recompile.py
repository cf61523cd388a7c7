"""Fixes: a recompile on an int argument

What it shows: `n` is a Python int. Dynamo specializes its first value
(`n == 1`); the second value fails that guard and recompiles with n as a
symbol (automatic dynamic). `dynamic=True` makes it a symbol from the
first call: one graph.

Look at: the Recompiles pane (the guard `n == 1`); the fixes key there.

Try next: `check snippets/fix_int_recompile.py --try-fixes`; or pass n as
a tensor when it changes every call.

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


def fn(x, n):
    return torch.roll(x, n) * n


def inputs():
    torch.manual_seed(0)
    x = torch.randn(8, requires_grad=True)
    for n in (1, 2, 3, 4):
        yield x, n


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 0,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What --try-fixes tries here, each checked by tests/test_gallery_fixes.py against a plain
# `python` run of this file with `apply` added (the counts are torch's, computed in the test):
FIXES = [
    {"kind": "recompile", "at": "def fn", "remedy": "dynamic", "apply": "DYNAMIC = True"},
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x, n in inputs():
        print("n", n, "sum", round(compiled(x, n).sum().item(), 4))
