"""torch._dynamo.optimize beside torch.compile, each with a graph break."""

import torch
import torch._dynamo


def first(x):
    y = x.relu()
    torch._dynamo.graph_break()
    return y * 2


def second(x):
    return x.exp().sum()


opt_first = torch._dynamo.optimize("eager")(first)
comp_second = torch.compile(second, backend="eager")
for n in (2, 3, 3):
    opt_first(torch.randn(n))
    comp_second(torch.randn(n))
print("done")
