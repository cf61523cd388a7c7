"""torch._dynamo.reset() between two rounds of the same compiled calls."""

import torch


def f(x):
    return x * 2 + 1


g = torch.compile(f, backend="eager")
g(torch.ones(2))
g(torch.ones(3))
torch._dynamo.reset()
g(torch.ones(2))
g(torch.ones(3))
print("done")
