"""Fixes: a .item() break, gone by its hint

What it shows: `scale.item()` reads a Python number out of a tensor,
which Dynamo does not capture by default: the graph breaks there, and
the code after it is a resume function that guards on the number, so a
new scale recompiles it. torch's hint names the switch:
`torch._dynamo.config.capture_scalar_outputs = True` keeps the number a
symbol inside one graph.

Look at: the Breaks pane (GB0124 at the `.item()` line); press the fixes
key there: the config remedy runs as a variant of this save (your file
is not edited) and shows the graphs, breaks and recompiles it leaves,
and that values and gradients stay equal.

Try next: `check snippets/fix_item.py --try-fixes`; or keep the number
a tensor (`torch.relu(x) * scale`), which needs no switch at all.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 1, recompiles 1, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


def fn(x, scale):
    s = scale.item()
    return torch.relu(x) * s


def inputs():
    torch.manual_seed(0)
    x = torch.randn(4, 8, requires_grad=True)
    for value in (2.0, 3.0, 0.5):
        yield x, torch.tensor(value)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 1,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What --try-fixes tries here, each checked by tests/test_gallery_fixes.py against a plain
# `python` run of this file with `apply` added (the counts are torch's, computed in the test):
FIXES = [
    {
        "kind": "break",
        "at": "scale.item()",
        "remedy": "config",
        "apply": "torch._dynamo.config.capture_scalar_outputs = True",
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x, scale in inputs():
        print("scale", scale.item(), "sum", round(compiled(x, scale).sum().item(), 4))
