"""A training loop with a compiled model and a compiled loss (a program)

What it shows: the script as PyTorch's tutorials write it: a model and a
loss function each passed to torch.compile, an optimizer, a DataLoader
whose last batch is short (10 samples in batches of 4: 4, 4, 2). The
playground runs it as `python train_loop.py --epochs 2` would, and gives
each compiled callable its own section. The short batch changes the
size of x[0]: both callables recompile once, at the first short batch,
with that size dynamic from then on (automatic dynamic), and no later
batch recompiles either of them.

Look at: the two sections, model (OptimizedModule) and loss_fn, each with
graphs 2, recompiles 1 and its reason "size mismatch at index 0.
expected 4, actual 2"; calls = 3 batches x 2 epochs each.

Try next: run it with `-- --epochs 50 --max-calls 200` to see a bound
stop a long loop; or `drop_last=True` in the DataLoader: no recompile.
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def loss_fn(pred, target):
    return ((pred - target) ** 2).mean()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--backend", default="aot_eager")
    args = parser.parse_args()

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(10, 8), torch.randn(10, 1))
    loader = DataLoader(data, batch_size=4)  # 4, 4, 2: the last batch is short

    model = torch.compile(Net(), backend=args.backend)
    loss_c = torch.compile(loss_fn, backend=args.backend)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    for epoch in range(args.epochs):
        total = 0.0
        for x, y in loader:
            opt.zero_grad()
            loss = loss_c(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {epoch}: loss {total:.4f}")


if __name__ == "__main__":
    main()


# check's report on torch 2.13/2.14 (`-- --epochs 2`), asserted by tests/test_gallery_programs.py:
EXPECTED = {
    "args": ["--epochs", "2"],
    "graph_count": 4,
    "graph_break_count": 0,
    "recompile_count": 2,
    "callables": {
        "Net": {"calls": 6, "graph_count": 2, "graph_break_count": 0, "recompile_count": 1},
        "loss_fn": {"calls": 6, "graph_count": 2, "graph_break_count": 0, "recompile_count": 1},
    },
}
