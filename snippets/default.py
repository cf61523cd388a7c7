"""Start here: one print(), one break. Fix it.

What it shows: torch.compile does not refuse code it cannot capture. It
splits the function at the print() (printing needs the real value of a
tensor), runs the print eagerly, and compiles the code before and after
it as two separate graphs.

Look at: the status line (graphs 2, breaks 1), the Breaks pane (the
print line, "Failed to trace builtin operator"), and the Graphs pane
(graph 1 ends at mean(), graph 2 starts at cos()). The Output pane shows
what print() wrote.

Try next: press f (fullgraph) and rerun: the same break now raises. Then
delete the print() line, save, and watch graphs drop to 1 and breaks to
0 with values still equal.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def fn(x):
    y = torch.sin(x) * 2
    print("mean of y:", y.mean())  # the graph break: delete this line
    return torch.cos(y) + 1


def inputs():
    torch.manual_seed(0)
    yield torch.randn(4, 8, requires_grad=True)
    yield torch.randn(4, 8, requires_grad=True)


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
    # press f: the print now raises
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
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("out", tuple(compiled(x).shape))
