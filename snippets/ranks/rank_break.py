"""A break on one rank: ranks compile different graphs

What it shows: Dynamo reads `dist.get_rank()` while it traces, as a
constant, so `if dist.get_rank() == 0: print(...)` is decided at compile
time on each rank: rank 0 traces the print (a graph break, two graphs),
rank 1 skips it (one graph). The ranks now run different graphs; were
there a collective after the break, rank 0 would run it in a later
graph than rank 1, the way "works on one GPU, hangs on eight" starts.

Look at: the Breaks pane (2): "graph breaks differ between ranks", rank
0's break with its line; press o for rank 1's report, which has none.

Try next: press f (fullgraph): rank 0 raises at the print and rank 1
does not, and the run says so per rank. Move the print out of fn
(return the value, print it outside) and the ranks agree again.

Run it as torch does: torchrun --nproc-per-node 2 snippets/ranks/rank_break.py

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}


def fn(x):
    y = x.relu() * 2
    if dist.get_rank() == 0:
        print("rank 0 logs a value")  # a graph break on rank 0 only
    return y.sum() + x.mean()


def inputs():
    torch.manual_seed(0)
    for _ in range(2):
        yield torch.randn(16)


# check's report on torch 2.13/2.14 (rank 0's at the top, each rank's below), asserted by
# tests/test_gallery_ranks.py against torch itself under torchrun (tests/ranks_truth.py):
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
    "ranks": [
        {"graph_count": 2, "graph_break_count": 1, "recompile_count": 0},
        {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
    ],
    "divergence": ["graph_breaks", "graph_count", "guards"],
}


if __name__ == "__main__":
    dist.init_process_group("gloo")  # torchrun's environment
    compiled = torch.compile(fn, backend=SETTINGS["backend"])
    for call, x in enumerate(inputs(), 1):
        print(f"rank {dist.get_rank()} call {call}: {compiled(x).item():.4f}")
    dist.destroy_process_group()
