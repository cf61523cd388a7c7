"""One rank recompiles: the others never see it

What it shows: every rank compiles its own copy of fn, with its own
guards. Rank 1's third batch is shorter (an uneven last shard, as a
DistributedSampler without drop_last hands out), so only rank 1's size
guard fails: it recompiles while rank 0 runs its first graph. A rank
that recompiles spends that time while the others wait for it at the
next collective; one that compiles a different graph may run its
collectives in another order.

Look at: the Breaks pane (2) opens with what differs between ranks
("only rank 1 recompiled, at call 3: size of x dim 0 4 → 3") and a line
per rank; press o to show rank 1's own report in every pane (the
Recomp pane (5) has its row), o again for rank 0.

Try next: press d (dynamic auto): rank 1 still recompiles, now with a
symbolic size (its new guard: 2 <= x.size()[0]), so a further change
of length would not. Press d again (dynamic true): x is symbolic from
the first call, one graph on every rank and nothing differs;
`torch._dynamo.mark_dynamic(x, 0)` in inputs() does the same for the
batch dimension alone. Press n for 4 ranks; n again for one process,
where dist.get_rank() has no group to ask, and the error says so.

Run it as torch does: torchrun --nproc-per-node 2 snippets/ranks/one_rank_recompiles.py

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "dynamic": False, "ranks": 2}


def fn(x):
    return torch.sin(x) * 2 + x.mean()


def inputs():
    torch.manual_seed(0)
    last = 3 if dist.get_rank() == 1 else 4  # rank 1's last shard is short
    for step in range(3):
        yield torch.randn(last if step == 2 else 4, 8)


# check's report on torch 2.13/2.14 (rank 0's at the top, each rank's below), asserted by
# tests/test_gallery_ranks.py against torch itself under torchrun (tests/ranks_truth.py):
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
    "ranks": [
        {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
        {"graph_count": 2, "graph_break_count": 0, "recompile_count": 1},
    ],
    "divergence": ["graph_count", "guards", "recompiles"],
}

# What the settings keys under "Try next" change, per rank (checked against torch the same way):
VARIANTS = [
    # press d twice: dynamic true
    {
        "settings": {"dynamic": True},
        "ranks": [
            {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
            {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
        ],
    },
]


if __name__ == "__main__":
    dist.init_process_group("gloo")  # torchrun's environment
    compiled = torch.compile(fn, backend=SETTINGS["backend"], dynamic=SETTINGS["dynamic"])
    for call, x in enumerate(inputs(), 1):
        print(f"rank {dist.get_rank()} call {call}: x {tuple(x.shape)} -> {compiled(x).sum().item():.4f}")
    dist.destroy_process_group()
