"""A break hit in a loop: one site, counted

What it shows: fn calls scale four times in a loop, and scale's
`if y.sum() > 0:` is data-dependent. Dynamo cannot resume fn inside a
for loop, so it gives up on fn ("graph break in loop": fn runs eagerly)
and compiles scale as a frame of its own, which breaks at the same if.
The step number is a Python int: the second step recompiles scale (the
int becomes dynamic then), and that compile breaks there again. Three
break records, one site: torch's category for it is FUNDAMENTAL
(rewrite the code, do not wait for torch).

Look at: the distinct-break list (one row, line 34, count 3, category
FUNDAMENTAL, caused "graph break in loop"); the status line (graphs 4,
breaks 3, recompiles 1).

Try next: replace the if with `y = torch.where(y.sum() > 0, y - 1, y)`:
same values, no break, and fn compiles as one graph with the loop
unrolled.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 4, breaks 3, recompiles 1, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def scale(x, step):
    y = x * (step + 1)
    if y.sum() > 0:  # data-dependent: the break, on every step
        y = y - 1
    return y.cos()


def fn(x):
    for step in range(4):
        x = scale(x, step)
    return x


def inputs():
    torch.manual_seed(0)
    yield torch.randn(8)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 4,
    "graph_break_count": 3,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("out", [round(v, 4) for v in compiled(x).tolist()[:3]])
