"""Shapes, mark_dynamic: one graph despite False

What it shows: torch._dynamo.mark_dynamic(x, 0) tags the tensor itself,
telling Dynamo before the first compile that dimension 0 varies. It
overrides dynamic=False for that dimension: one graph serves every batch
size, while the other dimension stays static and guarded. If the marked
dimension turns out to be specialized anyway (the code branches on it,
say), Dynamo raises instead of silently recompiling.

Look at: the status line (graphs 1, recompiles 0 despite dynamic=false
in the header); the Guards pane (size=[None, 8]: a range guard `2 <=
L['x'].size()[0]` on dimension 0, an exact 8 on dimension 1).

Try next: comment out the mark_dynamic line and rerun: four graphs,
exactly as in shapes_static.py. The mark lives on the tensor, so it only
works if you mark the tensors you actually pass.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": False,
    "backend": "eager",
    "mode": None,
}


def fn(x):
    return torch.nn.functional.gelu(x).sum(dim=0) * 2


def inputs():
    torch.manual_seed(0)
    for batch in (2, 3, 4, 5):
        x = torch.randn(batch, 8, requires_grad=True)
        torch._dynamo.mark_dynamic(x, 0)
        yield x


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
