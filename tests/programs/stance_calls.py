"""torch.compiler.set_stance as a program uses it: force_eager for a warm-up, back to default,
and eager_on_recompile as a context around calls with a new shape."""

import torch


@torch.compile(backend="eager")
def step(x):
    return (x.sin() * 2).sum(0)


torch.compiler.set_stance("force_eager")
step(torch.randn(3, 4))
torch.compiler.set_stance("default")
a = step(torch.randn(3, 4))
with torch.compiler.set_stance("eager_on_recompile"):
    step(torch.randn(5, 4))
b = step(torch.randn(3, 4))
step(torch.randn(7, 4))
print(a.shape, b.shape)
