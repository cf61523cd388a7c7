"""capture_scalar_outputs: .item() in the graph

What it shows: one of torch's own switches set from SETTINGS. `.item()`
turns a tensor into a Python number. By default Dynamo does not trace
that read: it breaks the graph there (GB0124), runs the rest as a
resume function that receives the number as ___stack0, and guards on
its value, so the second gain recompiles it. The SETTINGS line below
sets torch._dynamo.config.capture_scalar_outputs = True for this run:
the read becomes an op inside the graph and its result an "unbacked"
symbol, zuf0, a float whose value nobody knows at compile time. One
graph serves every gain; values and gradients still agree with eager.

The cost: Dynamo cannot guard on an unbacked value, so Python that
decides on it (`if g > 0:`, a size, range(n)) cannot be traced. Such a
decision is a break again (GB0170, data-dependent branching) or, under
fullgraph, an error. On a GPU the read still waits for the device. In
plain torch the switch is global: `torch._dynamo.config.X = True`
holds for every later compile; the playground sets it per run only.

Look at: the status line (graphs 1, breaks 0); the Graphs pane
(`item: "Sym(zuf0)" = l_gain_.item()` between tanh and mul); the end
of the settings bar, capture_scalar_outputs=True (at 80 columns the
toggles shorten to make room; h, the history, names it on every run).

Try next: change True to False in SETTINGS and save: breaks 1 at the
`.item()` line (GB0124, its hint names this switch), graphs 3,
recompiles 1; h (history) shows the config change between the runs.
Set it back to True and add `if g > 0:` before the return: the break
comes back as GB0170 at the `if` (see item_break.py). The fix that
needs no switch: delete the `.item()` line and use the tensor,
`return y * gain + 1`.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
    # torch._dynamo.config.capture_scalar_outputs: False is torch's default
    "config": {"dynamo.capture_scalar_outputs": True},
}


def fn(x, gain):
    y = torch.tanh(x)
    g = gain.item()  # a Python float read out of a tensor
    return y * g + 1


def inputs():
    torch.manual_seed(0)
    x = torch.randn(4, 8, requires_grad=True)
    for value in (0.5, 2.0, 3.0, -1.0):
        yield x, torch.tensor(value)


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
    # the switch left at torch's default: the .item() break and a recompile
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
    for x, gain in inputs():
        print("gain", gain.item(), "sum", round(compiled(x, gain).sum().item(), 4))
