"""float .item() in an if, fullgraph: UserError

What it shows: the same code as item_int_fullgraph.py with a float flag.
Dynamo cannot guard on a data-dependent float comparison, so
fullgraph=True refuses with torch._dynamo.exc.UserError "Could not guard
on data-dependent expression ...". The snippet itself is fine: eager
runs it, so the error kind is "compile" (a finding about torch.compile),
not "snippet".

Look at: the error banner (kind compile, UserError, pointing at the `if`
line); the status line (graphs 0: nothing was compiled before the
refusal).

Try next: press f to turn fullgraph off: the float flag becomes an
ordinary Tensor.item() graph break (item_break.py). Or replace the if
with `torch.where(flag > 0, y * 2, y - 1)`, which keeps the choice
inside the graph.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 0, breaks 0, recompiles 0, limit hit no, raises compile UserError
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
    for value in (1.0, 0.0):
        yield x, torch.tensor(value)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 0,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": "compile",
    "error_type": "UserError",
    "equivalence_ok": None,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press f (off): an ordinary Tensor.item() break
    {
        "settings": {"fullgraph": False},
        "expected": {
            "graph_count": 3,
            "graph_break_count": 1,
            "recompile_count": 1,
            "error": None,
            "equivalence_ok": True,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    try:
        for x, flag in inputs():
            print("flag", flag.item(), "sum", compiled(x, flag).sum().item())
    except Exception as exc:  # the refusal is the lesson
        print("raised", type(exc).__name__ + ":", str(exc).splitlines()[0][:100])
