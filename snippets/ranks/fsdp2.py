"""FSDP2: a sharded submodule breaks the graph

What it shows: `fully_shard` (FSDP2) on CPU with gloo, as torch runs it.
The root and its first layer are each sharded: each rank holds half of
every parameter, and the module's hooks all-gather them before its
forward. Dynamo does not trace into those hooks (they are
`torch._dynamo.disable`d), so the call of the sharded `self.a` is a
graph break: `self.a` and its all-gather run eagerly, and only what
follows it, `relu` and `self.b`, is compiled, in the resume function
after line 43.

Look at: the Breaks pane (2): line 43, "Attempted to call function
marked as skipped" (torch's `disable`); the Graphs pane (3): one
graph, relu and one linear, with the root's gathered parameters as
its inputs.

Try next: delete `fully_shard(model.a)` (shard the root alone): one
graph of the whole forward, no break, on every rank. The ranks agree
either way: each builds the same model and shards it the same way.

Run it as torch does: torchrun --nproc-per-node 2 snippets/ranks/fsdp2.py

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

SETTINGS = {"backend": "aot_eager", "ranks": 2}

if not dist.is_initialized():  # under torchrun; the playground joins the group before the file loads
    dist.init_process_group("gloo")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))  # the call of self.a: a graph break


torch.manual_seed(0)  # every rank builds the same weights before sharding them
model = Net()
fully_shard(model.a)
fully_shard(model)


def inputs():
    torch.manual_seed(dist.get_rank())  # each rank its own batch
    for _ in range(2):
        yield torch.randn(4, 64)


# check's report on torch 2.13/2.14 (rank 0's at the top, each rank's below), asserted by
# tests/test_gallery_ranks.py against torch itself under torchrun (tests/ranks_truth.py):
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
    "ranks": [
        {"graph_count": 1, "graph_break_count": 1, "recompile_count": 0},
        {"graph_count": 1, "graph_break_count": 1, "recompile_count": 0},
    ],
    "divergence": [],
}


if __name__ == "__main__":
    compiled = torch.compile(model, backend=SETTINGS["backend"])
    for call, x in enumerate(inputs(), 1):
        compiled(x).sum().backward()
        print(f"rank {dist.get_rank()} call {call}: local shard of a.weight {tuple(model.a.weight.to_local().shape)}")
    dist.destroy_process_group()
