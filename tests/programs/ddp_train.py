"""A small DDP training loop with a compiled model, gloo on CPU: run as
`torchrun --nproc-per-node 2 ddp_train.py` (or the playground's `check ddp_train.py --ranks 2`),
each rank trains on its own shard and DDP all-reduces the gradients; run alone (`python
ddp_train.py`), a group of one in a store in memory."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        h = self.body(x)
        if h.mean() > 0:  # data-dependent: a graph break on every rank
            h = h * 2
        return self.head(h)


def main() -> None:
    if "RANK" in os.environ:
        dist.init_process_group("gloo")  # env://, torchrun's MASTER_ADDR and MASTER_PORT
    else:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DistributedDataParallel(Net())
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)  # each rank its own shard of the data
    for step in range(6):
        # Rank 1's last batches are smaller (its shard's remainder): it recompiles, rank 0 does not.
        batch = 5 if rank == 1 and step >= 4 else 8
        x, y = torch.randn(batch, 8), torch.randint(0, 2, (batch,))
        loss = nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"rank {rank} of {world}: loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
