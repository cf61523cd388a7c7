"""Tensor.item() in an if: the classic break

What it shows: `flag.item()` turns a tensor into a Python number, and
Dynamo does not capture Python numbers read out of tensors by default,
so it breaks the graph there. The break costs more than one split: the
code after it is a "resume function" that receives the number as an
argument (___stack0), and Dynamo guards on it. The first flag (1.0) is
specialized exactly; the second (0.0) fails that guard and makes it a
symbolic float guarded on the side of the test (`<= 0.0`); a flag on the
other side (3.0) compiles once more; -2.0 reuses an entry. 4 graphs, 2
recompiles.

Look at: the Breaks pane (one break, GB0124 "Unsupported Tensor.item()
call with capture_scalar_outputs=False", at the `if` line); the
Recompiles pane (function torch_dynamo_resume_in_fn_at_NN, NN the `if`
line; reasons "___stack0 == 1.0", then "___stack0 <= 0.0"); the Graphs
pane (0/0 before the break, 1/0 to 1/2 the resume variants).

Try next: press f (fullgraph) and rerun: this float flag now raises a
UserError (item_float_fullgraph.py); an int flag does not
(item_int_fullgraph.py). Or move the choice into the graph: `return
torch.where(flag > 0, y * 2, y - 1)`.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 4, breaks 1, recompiles 2, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
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
    for value in (1.0, 0.0, 3.0, -2.0):
        yield x, torch.tensor(value)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 4,
    "graph_break_count": 1,
    "recompile_count": 2,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press f: a float flag raises
    {
        "settings": {"fullgraph": True},
        "expected": {
            "graph_count": 0,
            "error": "compile",
            "error_type": "UserError",
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x, flag in inputs():
        print("flag", flag.item(), "sum", round(compiled(x, flag).sum().item(), 4))
