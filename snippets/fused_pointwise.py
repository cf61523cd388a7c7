"""A pointwise chain, fused by Inductor

What it shows: six pointwise ops on a 256x256 tensor (sin, multiply,
relu, cos, add, then tanh after a matrix multiply). Eager runs each as
an ATen op of its own, reading and writing the whole tensor every time;
Inductor fuses the chain before the mm into one C++ kernel, calls a
library kernel for the mm, and fuses the tanh into a second kernel.

Look at: the kernels profile (`check --kernels`): each kernel with its
time, the ATen ops it holds and the snippet lines they came from,
beside eager's top ops; the compile anatomy (nodes, kernels, caches).

Try next: move `d = c @ w` to the top (`d = x @ w`, then the chain on
d): one fused kernel after the mm instead of two around it.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "inductor",
    "mode": None,
}


def fn(x, w):
    a = x.sin()
    b = a * 2
    c = b.relu() + x.cos()
    d = c @ w
    return d.tanh()


def inputs():
    torch.manual_seed(0)
    yield torch.randn(256, 256), torch.randn(256, 256)


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
    for x, w in inputs():
        print("out", tuple(compiled(x, w).shape))
