"""Decorated functions with a graph break each (a program)

What it shows: three functions compiled with @torch.compile, with and
without arguments, driven by argparse as a script would be. Each has
one graph break of its own kind: a print (Dynamo cannot trace it), a
.item() read (a tensor's value into Python) and a data-dependent if.
Each section names its break, its line in this file and its reason; the
totals add the three up.

Look at: normalize breaks at the print (graphs 2), threshold at .item()
(graphs 2), gate at the `if` on a tensor's value: the condition is one
graph, and each branch resumes in a function of its own, so the second
call (the other branch) compiles a third graph without a recompile.

Try next: --fullgraph turns each break into an error; remove the print
and normalize becomes one graph.
"""

import argparse

import torch


@torch.compile(backend="aot_eager")
def normalize(x):
    x = x - x.mean()
    print("normalizing")  # graph break: print
    return x / (x.std() + 1e-5)


@torch.compile(backend="aot_eager")
def threshold(x):
    cut = x.abs().max().item()  # graph break: .item()
    return x.clamp(-cut / 2, cut / 2)


@torch.compile(backend="aot_eager")
def gate(x):
    if x.sum() > 0:  # graph break: a tensor's value decides the branch
        return x * 2
    return -x


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=16)
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.size)
    y = threshold(normalize(x))
    print(gate(y.abs()).sum().item(), gate(-y.abs()).sum().item())


if __name__ == "__main__":
    main()


# check's report on torch 2.13/2.14, asserted by tests/test_gallery_programs.py:
EXPECTED = {
    "args": [],
    "graph_count": 7,
    "graph_break_count": 3,
    "recompile_count": 0,
    "callables": {
        "normalize": {"calls": 1, "graph_count": 2, "graph_break_count": 1, "recompile_count": 0},
        "threshold": {"calls": 1, "graph_count": 2, "graph_break_count": 1, "recompile_count": 0},
        "gate": {"calls": 2, "graph_count": 3, "graph_break_count": 1, "recompile_count": 0},
    },
}
