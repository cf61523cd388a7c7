"""if x.sum() > 0 with fullgraph: Unsupported

What it shows: sum_if_break.py with fullgraph=True. Instead of splitting
the function silently, torch.compile raises
torch._dynamo.exc.Unsupported "Data-dependent branching". That is what
fullgraph is for: a break you did not notice turns into an error you
cannot miss.

Look at: the error banner (kind compile, type Unsupported, the `if`
line); the hints under it (torch.cond is the suggested rewrite).

Try next: press f to turn fullgraph off and compare with
sum_if_break.py; open sum_if_cond.py for the fix that keeps both
branches inside one graph.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 0, breaks 0, recompiles 0, limit hit no, raises compile Unsupported
"""

import torch

SETTINGS = {
    "fullgraph": True,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def fn(x):
    y = x * 2
    if y.sum() > 0:
        return torch.sin(y)
    return torch.cos(y)


def inputs():
    torch.manual_seed(0)
    base = torch.rand(4, 8) + 0.1
    yield base.clone().requires_grad_()
    yield (-base).requires_grad_()


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 0,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": "compile",
    "error_type": "Unsupported",
    "equivalence_ok": None,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press f (off): the silent break
    {
        "settings": {"fullgraph": False},
        "expected": {"graph_count": 3, "graph_break_count": 1, "error": None, "equivalence_ok": True},
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    try:
        for x in inputs():
            print("sum", compiled(x).sum().item())
    except Exception as exc:  # the refusal is the lesson
        print("raised", type(exc).__name__ + ":", str(exc).splitlines()[0][:100])
