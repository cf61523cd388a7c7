"""A guard-heavy loop: thousands of calls of a function whose guards check many tensors."""

import torch

params = {f"w{i}": torch.randn(4) for i in range(40)}


@torch.compile(backend="eager")
def total(ps, x):
    out = x
    for w in ps.values():
        out = out + w
    return out


x = torch.zeros(4)
for _ in range(3000):
    x = total(params, x) * 0.5
print(x.sum().item())
