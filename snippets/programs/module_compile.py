"""nn.Module.compile(), and the module it compiles nothing for (a program)

What it shows: `model.compile()` compiles the module in place (the
module stays itself: its parameters, its state_dict). On a module of
your own it compiles your forward. On nn.Sequential it compiles nothing
on torch 2.13: compile() compiles the frames the call runs, and
Sequential.forward is torch's own code, which Dynamo skips; every call
runs eagerly and no warning says so. torch.compile(seq) instead traces
the module as a whole and gets one graph. (Torch 2.14 compiles the
Sequential's call too, and then recompiles for torch.compile(seq): the
two share one frame of torch's, guarded on the function it wraps.)

Look at: three sections: Block (module.compile, graphs 1), Sequential
(module.compile, graphs 0, with the reason), and Sequential again, this
time through torch.compile (graphs 1).

Try next: toggle the backend for all three and compare; in your own
code, prefer torch.compile(model) for containers of torch's modules.
"""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) + x


def main() -> None:
    torch.manual_seed(0)
    block = Block()
    block.compile(backend="aot_eager")

    seq = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    seq.compile(backend="aot_eager")

    whole = torch.compile(nn.Sequential(nn.Linear(8, 8), nn.ReLU()), backend="aot_eager")

    x = torch.randn(4, 8)
    for _ in range(3):
        out = seq(block(x))
        out.sum().backward()
    print(whole(x).shape, sum(p.grad is not None for p in block.parameters()))


if __name__ == "__main__":
    main()


# check's report on torch 2.13, asserted by tests/test_gallery_programs.py; TORCH_DIFFERS says
# what another torch reports instead (the test also compares each with torch's own count):
EXPECTED = {
    "args": [],
    "graph_count": 2,
    "graph_break_count": 0,
    "recompile_count": 0,
    "callables": {
        "Block": {"calls": 3, "graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
        "Sequential#2": {"calls": 3, "graph_count": 0, "graph_break_count": 0, "recompile_count": 0},
        "Sequential#3": {"calls": 1, "graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
    },
}

# What torch 2.14 reports instead (measured; the test compares with torch's own count on both):
# nn.Sequential.compile() compiles Sequential's call, and the torch.compile(seq) made after it
# recompiles: both run through torch's one wrap_inline frame, whose guard on the wrapped
# function fails for the second.
TORCH_DIFFERS = {
    "2.14": {
        "graph_count": 3,
        "recompile_count": 1,
        "callables": {"Sequential#2": {"graph_count": 1}, "Sequential#3": {"recompile_count": 1}},
    },
}
