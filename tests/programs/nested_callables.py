"""A compiled callable that calls another compiled callable across a graph break."""

import torch


@torch.compile(backend="eager")
def inner(x):
    return x.sin() * 2


@torch.compile(backend="eager")
def outer(x):
    y = x + 1
    torch._dynamo.graph_break()
    return inner(y) + inner(y * 2)


for _ in range(2):
    outer(torch.randn(5))
inner(torch.randn(5))
print("done")
