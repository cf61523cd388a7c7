"""capture_dynamic_output_shape_ops: x[x > 0]

What it shows: a second switch of torch's own, set from SETTINGS. A
boolean mask keeps as many elements as there are positive values, so
the size of `pos` depends on the data, not on the input's shape. By
default Dynamo stops before such an op (GB0036, "Dynamic shape
operator"): the graph ends at `x > 0`, the mask runs eagerly, and the
rest is a resume function guarded on pos's size, recompiled when the
count changes. The SETTINGS line below sets
torch._dynamo.config.capture_dynamic_output_shape_ops = True: the mask
goes into the graph and pos gets an "unbacked" size, u0, known only
when the graph runs. One graph for every count; torch adds runtime
checks that 0 <= u0 <= 16.

The cost: u0 has no value at compile time, so Python that decides on
it (`if pos.numel() == 0:`) cannot be traced: a GB0170 break again.
Backends must handle sizes they learn at run time, and on a GPU the
count still waits for the device. torch._check(...) tells torch facts
about u0 that it cannot prove.

Look at: the status line (graphs 1, breaks 0); the Graphs pane (`pos:
"f32[u0]" = l_x_[gt]` and the two `_assert_scalar` checks on u0); the
end of the settings bar (at 80 columns the toggles shorten to make
room for it; h, the history, names the switch on every run).

Try next: change True to False in SETTINGS and save: breaks 1 at the
mask line (GB0036, its hint names this switch), graphs 3, recompiles
1 (`size mismatch at index 0`). With True again, add `if pos.numel()
== 0: return x.mean()` before the return: a GB0170 break at the `if`.
The fix that needs no switch keeps every size fixed: replace the two
lines of fn with `return torch.where(x > 0, torch.sigmoid(x),
0).sum() + x.mean()`.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
    # torch._dynamo.config.capture_dynamic_output_shape_ops: False is torch's default
    "config": {"dynamo.capture_dynamic_output_shape_ops": True},
}


def fn(x):
    pos = x[x > 0]  # how many elements survive depends on the values
    return torch.sigmoid(pos).sum() + x.mean()


def inputs():
    torch.manual_seed(0)
    for _ in range(4):
        yield torch.randn(16, requires_grad=True)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # the switch left at torch's default: the mask breaks and the count recompiles
    {
        "settings": {"config": {}},
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
    # Outside the playground the switch is torch's global config, set before compiling.
    for key, value in SETTINGS.pop("config").items():
        setattr(torch._dynamo.config, key.removeprefix("dynamo."), value)
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("positives", int((x > 0).sum()), "out", round(compiled(x).item(), 4))
