"""A library's wrong decomposition: Inductor computes sin as cos

What it shows: a library registers its own decomposition of aten.sin
in Inductor's decomposition table, and gets it wrong. Eager calls the
real sin; Inductor uses the table, so compiled and eager disagree.

Look at: `compile-playground bisect
snippets/bisect/wrong_decomposition.py` names backend
aot_eager_decomp_partition (the first stage that applies Inductor's
decompositions; on torch 2.13), subsystem decomposition, aten.sin as
the decomposition applied last, and the line calling sin. No switch of
torch's turns one registered decomposition off, so the workaround is
the playground's own: playground.without_decompositions takes aten.sin
out of the table before the compile. Press s on the Equiv pane for the
same in the app, then a to apply it: the verdict turns to pass.

Try next: delete the registration: bisect says eager and compiled
agree. Torch's compile caches do not key on the table, so the
playground compiles code that registers its own with them off.
"""

import torch
from torch._inductor.decomposition import decompositions

SETTINGS = {"backend": "inductor", "fullgraph": True}


def _bad_sin(x):
    return torch.cos(x)


decompositions[torch.ops.aten.sin.default] = _bad_sin


def fn(x):
    return torch.sin(x) + 1


def inputs():
    yield (torch.randn(8),)
