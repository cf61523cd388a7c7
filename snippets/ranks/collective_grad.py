"""A collective in the compiled region: equal values, unequal gradients

What it shows: `dist.all_reduce(y)` inside fn. Eager runs c10d's
in-place op, which autograd does not see: x's gradient is what it would
be without the all_reduce. Dynamo traces it as a functional all_reduce
(no graph break) whose backward sums the gradient over the ranks, so
the compiled x.grad is world_size times eager's (torch itself warns at
eager's backward: "c10d::allreduce_: an autograd kernel was not
registered ... silently incorrect behavior"). Every value agrees,
bit for bit; every gradient is 2x on 2 ranks, 4x on 4. Which one your
training wants is a modelling question, but the two are not the same
program, and only the gradient check tells.

Look at: the Equiv pane (6): outputs identical, grads FAIL with a
relative error of 1.0 (2g against g) on each rank; the Breaks pane (2):
every rank agrees, no break.

Try next: press n for 4 ranks: the error is 3.0 (4g against g). Detach
the reduced value (`dist.all_reduce(y.detach())` does not reduce y: use
`y = y + (all_reduced - y).detach()`) and the two agree.

Run it as torch does: torchrun --nproc-per-node 2 snippets/ranks/collective_grad.py

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch
import torch.distributed as dist

SETTINGS = {"backend": "aot_eager", "ranks": 2}


def fn(x):
    y = x * 2
    dist.all_reduce(y)  # in place; Dynamo traces it as functional
    return y.sin()


def inputs():
    torch.manual_seed(dist.get_rank())
    yield torch.randn(4, requires_grad=True)


# check's report on torch 2.13/2.14 (rank 0's at the top, each rank's below), asserted by
# tests/test_gallery_ranks.py against torch itself under torchrun (tests/ranks_truth.py):
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": False,
    "ranks": [
        {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
        {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
    ],
    "divergence": [],
}


if __name__ == "__main__":
    dist.init_process_group("gloo")  # torchrun's environment
    (x,) = list(inputs())
    fn(x).sum().backward()
    eager = x.grad.clone()
    x.grad = None
    torch.compile(fn, backend=SETTINGS["backend"])(x).sum().backward()
    print(f"rank {dist.get_rank()}: compiled x.grad / eager x.grad = {(x.grad / eager).mean().item():.1f}")
    dist.destroy_process_group()
