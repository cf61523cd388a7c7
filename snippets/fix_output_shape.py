"""Fixes: an output shape set by the data

What it shows: `torch.nonzero` returns as many rows as there are
non-zero elements, which Dynamo does not trace by default ("Dynamic
shape operator"): the graph breaks there, and the resume function gets
a tensor whose size changes with the data, so it recompiles too. torch's
hint names the switch: `capture_dynamic_output_shape_ops = True` traces
the op with an unbacked size symbol, one graph.

Look at: the Breaks pane (the nonzero line), the Recompiles pane (the
resume function's size guard); the fixes key on either: the config
remedy removes both; `dynamic=True` only the recompile.

Try next: `check snippets/fix_output_shape.py --try-fixes`; or count
without materialising the indices: `(x > 0).sum()`.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 3, breaks 1, recompiles 1, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


def fn(x):
    rows = torch.nonzero(x > 0)
    return rows.float().sum() * 2


def inputs():
    torch.manual_seed(0)
    for _ in range(2):
        yield torch.randn(8)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 3,
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
        "at": "torch.nonzero",
        "remedy": "config",
        "apply": "torch._dynamo.config.capture_dynamic_output_shape_ops = True",
    },
    {"kind": "recompile", "at": "torch.nonzero", "remedy": "dynamic", "apply": "DYNAMIC = True"},
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("out", compiled(x).item())
