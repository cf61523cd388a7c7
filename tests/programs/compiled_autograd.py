"""Compiled autograd: a compiled step whose backward() torch._dynamo traces too (the config
flag), the backward graph made inside torch's own files."""

import torch
from torch import nn

torch._dynamo.config.compiled_autograd = True
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))


@torch.compile(backend="aot_eager")
def step(x):
    loss = model(x).sum()
    loss.backward()
    return loss


for _ in range(3):
    step(torch.randn(4, 8))
print("done")
