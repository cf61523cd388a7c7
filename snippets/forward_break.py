"""A break inside forward: a NaN check on data

What it shows: a defensive `if torch.isnan(h).any(): raise ...` in the
middle of forward is data-dependent branching. The compiled module runs
the first Linear as one graph, comes back to Python to evaluate the
check, and runs the rest as a second graph. The branch that raises is
never reached, so it is never compiled.

Look at: the Breaks pane (the if line inside forward); the status line
(graphs 2, breaks 1); the Graphs pane (graph 1 ends with isnan and any,
graph 2 is the second Linear).

Try next: replace the if with
`torch._assert_async(~torch.isnan(h).any(), "NaN")`: the check stays,
inside the graph, and fullgraph=True (press f) passes with 1 graph.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch
from torch import nn

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 32)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        if torch.isnan(h).any():
            raise RuntimeError("NaN in the hidden layer")
        return self.out(h)


torch.manual_seed(0)
model = Net()


def inputs():
    torch.manual_seed(1)
    yield torch.randn(8, 16)
    yield torch.randn(8, 16)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press f: Unsupported
    {
        "settings": {"fullgraph": True},
        "expected": {
            "graph_count": 0,
            "error": "compile",
            "error_type": "Unsupported",
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(model, **SETTINGS)
    for x in inputs():
        print("out", tuple(compiled(x).shape))
