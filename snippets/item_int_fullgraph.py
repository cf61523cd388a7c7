"""int .item() in an if, fullgraph: no error

What it shows: common teaching says fullgraph=True turns every .item()
break into an error. On torch 2.13/2.14 that is not what happens for an
integer tensor: Dynamo reads the value while tracing, specializes the
graph on the outcome of the `if`, and guards on it (`1 <= flag.item()`).
A flag that takes the other branch fails the guard and recompiles;
values on the same side of the test share a graph.

Look at: the status line (no error despite fullgraph=on; graphs 2,
recompiles 1); the Guards pane (entry 0/0 ends with `1 <=
L['flag'].item()`, entry 0/1 with `L['flag'].item() <= 0`); the
Recompiles pane (reason "1 <= flag.item()" when flag 0 arrives); the
Graphs pane (flag is not even a graph input: the branch was decided
while tracing). Flags 1 and 3 share one graph, 0 and -2 the other.

Try next: change the flags to floats (1.0, 0.0, ...) and rerun:
fullgraph=True now raises (item_float_fullgraph.py). Press f to turn
fullgraph off: an ordinary Tensor.item() break returns (item_break.py).

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 0, recompiles 1, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": True,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


def fn(x, flag):
    y = torch.relu(x)
    if flag.item() > 0:
        return y * 2
    return y - 1


def inputs():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    for value in (1, 0, 3, -2):
        yield x, torch.tensor(value)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 0,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press f (off): an ordinary Tensor.item() break
    {
        "settings": {"fullgraph": False},
        "expected": {"graph_count": 4, "graph_break_count": 1, "recompile_count": 2, "error": None},
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x, flag in inputs():
        print("flag", flag.item(), "sum", round(compiled(x, flag).sum().item(), 4))
