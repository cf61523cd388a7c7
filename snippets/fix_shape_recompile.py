"""Fixes: a recompile on a new input shape

What it shows: the batch size changes from call to call. Dynamo
specializes the first shape; the second fails the size guard and
recompiles with the size as a symbol (automatic dynamic), so a third
size reuses that graph. Two remedies from torch: `dynamic=True`
compiles every size as a symbol from the first call;
`torch._dynamo.mark_dynamic(x, 0)` on each input marks only that dim.

Look at: the Recompiles pane ("tensor 'x' size mismatch at index 0");
the fixes key there: both remedies, with the graphs and recompiles each
leaves.

Try next: `check snippets/fix_shape_recompile.py --try-fixes`.

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

# What --try-fixes tries here, each checked by tests/test_gallery_fixes.py against a plain
# `python` run of this file with `apply` added (the counts are torch's, computed in the test):
FIXES = [
    {"kind": "recompile", "at": "def fn", "remedy": "dynamic", "apply": "DYNAMIC = True"},
    {"kind": "recompile", "at": "def fn", "remedy": "mark_dynamic", "apply": "MARK = (0, 0)"},
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("batch", x.shape[0], "sum", round(compiled(x).sum().item(), 4))
