"""Fixes: a break no remedy removes

What it shows: `if x.sum() > 0:` branches in Python on a tensor's value.
No switch of torch's removes that break: with scalar capture on, the
value is a symbol, and a Python `if` still needs its outcome. The fixes
say so, and point at the rewrite torch documents: `torch.cond` keeps
both branches in one graph (or `torch.where` for an elementwise choice).

Look at: the Breaks pane ("Data-dependent branching"); the fixes key:
the switch it tried left the break, and the advice names torch.cond.

Try next: `check snippets/fix_no_remedy.py --try-fixes`; then rewrite fn
as `torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, (x,))`
(sum_if_cond.py).

Expected (torch 2.13/2.14, default SETTINGS):
graphs 3, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


def fn(x):
    y = torch.relu(x)
    if y.sum() > 0:
        return y * 2
    return y - 1


def inputs():
    torch.manual_seed(0)
    yield torch.randn(4, 8)
    yield -torch.ones(4, 8)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 3,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What --try-fixes tries here, each checked by tests/test_gallery_fixes.py against a plain
# `python` run of this file with `apply` added (the counts are torch's, computed in the test);
# "rewrite" is the advice's rewrite, which no remedy is.
FIXES = [
    {
        "kind": "break",
        "at": "if y.sum() > 0",
        "remedy": "config",
        "apply": "torch._dynamo.config.capture_scalar_outputs = True",
    },
    {
        "kind": "break",
        "at": "if y.sum() > 0",
        "remedy": "rewrite",
        "rewrite": "torch.cond",
        "apply": (
            "def fn(x):\n"
            "    y = torch.relu(x)\n"
            "    return torch.cond(y.sum() > 0, lambda y: y * 2, lambda y: y - 1, (y,))\n"
        ),
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("sum", round(compiled(x).sum().item(), 4))
