"""DDP's buckets: four graphs and no break between them

What it shows: `model = DDP(Net(), bucket_cap_mb=1)`, compiled as torch
compiles a DDP model. Two kinds of split, told apart. DDP's own forward
breaks the graph 3 times (Dynamo cannot trace DDP's logger, and
`_inside_ddp_forward` is on its skip list), all in torch's code. Then
DDP's optimizer (`dynamo.optimize_ddp`, on by default) cuts the one
graph Dynamo traced of Net.forward at DDP's bucket boundaries, so that
each bucket's gradient all-reduce can start while the backward still
runs: 4.2 MiB of parameters in 1 MiB buckets give 4 graphs under one
compile id, and none of those cuts is a graph break.

Look at: the summary: graphs 4, breaks 3; the Breaks pane (2): "DDP's
optimizer cut compile 4/0 into 4 graphs at the bucket boundaries;
graphs, not graph breaks", and the 3 breaks name DDP's files, not yours.

Try next: ctrl+p, Config: dynamo.optimize_ddp=false: one graph per
rank, the same 3 breaks (no overlap of communication with the
backward). Raise bucket_cap_mb to 25 (DDP's default): one bucket, one
graph.

Run it as torch does: torchrun --nproc-per-node 2 snippets/ranks/ddp_buckets.py

Expected (torch 2.13/2.14, default SETTINGS):
graphs 4, breaks 3, recompiles 0, limit hit no, raises no
"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

SETTINGS = {"backend": "aot_eager", "ranks": 2}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(512, 512) for _ in range(4))
        self.head = torch.nn.Linear(512, 8)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.head(x)


if not dist.is_initialized():  # under torchrun; the playground joins the group before the file loads
    dist.init_process_group("gloo")
torch.manual_seed(0)  # every rank builds the same weights; DDP checks it
model = DDP(Net(), bucket_cap_mb=1)


def inputs():
    torch.manual_seed(dist.get_rank())  # each rank its own batch
    for _ in range(2):
        yield torch.randn(16, 512)


# check's report on torch 2.13/2.14 (rank 0's at the top, each rank's below), asserted by
# tests/test_gallery_ranks.py against torch itself under torchrun (tests/ranks_truth.py):
EXPECTED = {
    "graph_count": 4,
    "graph_break_count": 3,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
    "ranks": [
        {"graph_count": 4, "graph_break_count": 3, "recompile_count": 0},
        {"graph_count": 4, "graph_break_count": 3, "recompile_count": 0},
    ],
    "divergence": [],
}

# What the config under "Try next" changes, per rank (checked against torch the same way):
VARIANTS = [
    {
        "config": {"dynamo.optimize_ddp": False},
        "ranks": [
            {"graph_count": 1, "graph_break_count": 3, "recompile_count": 0},
            {"graph_count": 1, "graph_break_count": 3, "recompile_count": 0},
        ],
    },
]


if __name__ == "__main__":
    compiled = torch.compile(model, backend=SETTINGS["backend"])
    for call, x in enumerate(inputs(), 1):
        compiled(x).sum().backward()
        print(f"rank {dist.get_rank()} call {call}: grad norm {model.module.head.weight.grad.norm().item():.4f}")
    dist.destroy_process_group()
