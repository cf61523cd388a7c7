"""A tiny call that pays for its guards

What it shows: before every call torch.compile checks the guards of the
compiled entry: here 64 Python floats read off the module, each one a
guard, plus the module and the tensor. The graph itself is one multiply
(Dynamo folds the floats into one constant), so on a 4-element tensor
the compiled call is slower than eager: the guards and the code around
the graph are most of what it costs.

Look at: the guard cost (about 140 guards in one entry, their check in
microseconds and as a share of the compiled call) beside the timings
(compiled slower than eager); the Guards pane (the gain_N guards).

Try next: make the gains one tensor buffer
(`self.register_buffer("gains", torch.linspace(1, 1.063, 64))` and
`return x * self.gains.prod()`): a handful of guards, one graph.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


class Calibrated(torch.nn.Module):
    def __init__(self, n=64):
        super().__init__()
        self.names = [f"gain_{i}" for i in range(n)]
        for i, name in enumerate(self.names):
            setattr(self, name, 1.0 + i / 1000)

    def forward(self, x):
        scale = 1.0
        for name in self.names:
            scale = scale * getattr(self, name)  # a guard on each float
        return x * scale


model = Calibrated()


def inputs():
    torch.manual_seed(0)
    yield torch.randn(4)
    yield torch.randn(4)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}


if __name__ == "__main__":
    compiled = torch.compile(model, **SETTINGS)
    for x in inputs():
        print("out", [round(v, 4) for v in compiled(x).tolist()])
