"""A decorated function with a data-dependent branch and a print: breaks, and shapes that change."""

import torch


@torch.compile(backend="eager")
def f(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    print("step")
    return y.tanh()


for n in (3, 3, 4, 5):
    f(torch.arange(n, dtype=torch.float32) - 1)
print("done")
