"""Regional compilation: each block of a stack compiled on its own with `layer.compile()`, in a
loop, as PyTorch's recipe cuts compile time (the blocks share one code object, so Dynamo
compiles it once and the other blocks hit its cache)."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.lin(x)) + x


class Stack(nn.Module):
    def __init__(self, n: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(n))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


torch.manual_seed(0)
model = Stack(12)
for layer in model.layers:
    layer.compile(backend="aot_eager")
x = torch.randn(4, 16)
for _ in range(3):
    model(x).sum().backward()
print("done")
