"""A DDP training loop, gloo on CPU, in which rank 1 raises a ValueError at step 2 while rank 0
goes on into that step's backward (DDP's all-reduce of the gradients), where it waits for a
peer that will never come: run as `torchrun --nproc-per-node 2 _rank_raises.py` (or the
playground's `check _rank_raises.py --ranks 2`), torchrun stops rank 0 and the job fails with
rank 1's error. Named with a leading underscore: not in the corpus of programs that python runs
to the end alone (tests/test_program_corpus.py), as it needs two ranks and fails by design."""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main() -> None:
    dist.init_process_group("gloo")  # env://, torchrun's MASTER_ADDR and MASTER_PORT
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)))
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)
    for step in range(4):
        x, y = torch.randn(8, 8), torch.randint(0, 2, (8,))
        if rank == 1 and step == 2:
            raise ValueError(f"rank {rank} found a bad batch at step {step}")
        loss = nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"rank {rank}: loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
