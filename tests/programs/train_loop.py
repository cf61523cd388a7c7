"""A training loop: a compiled model and a compiled loss, an optimizer, a short last batch."""

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 3))
opt_model = torch.compile(model, backend="aot_eager")


@torch.compile(backend="aot_eager")
def loss_fn(logits, target):
    return nn.functional.cross_entropy(logits, target)


opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(70, 10)
labels = torch.randint(0, 3, (70,))
for _epoch in range(2):
    for i in range(0, 70, 16):
        opt.zero_grad()
        loss = loss_fn(opt_model(data[i : i + 16]), labels[i : i + 16])
        loss.backward()
        opt.step()
print(round(loss.item(), 4))
