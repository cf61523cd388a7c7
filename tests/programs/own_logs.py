"""A program that sets torch's logs itself, as PyTorch's torch_logs recipe does: dynamo's INFO
lines on, then the graph_breaks and recompiles artifacts off, and then a graph break in every
call and a recompile for a new shape."""

import logging

import torch

torch._logging.set_logs(dynamo=logging.INFO)
torch._logging.set_logs(graph_breaks=False, recompiles=False)


@torch.compile(backend="eager", dynamic=False)
def f(x):
    x = x.sin() + 1
    torch._dynamo.graph_break()
    return x.cos()


for n in (3, 4, 5):
    f(torch.randn(n))
print("done")
