"""A break inside a helper: the caller pays too

What it shows: fn calls clip_norm, whose `if norm > max_norm:` is
data-dependent. Dynamo first tries to inline clip_norm into fn's graph,
hits the branch, and breaks fn at the call; clip_norm is then compiled
as a frame of its own and breaks again at the same line. The
graph_breaks log reports the site twice (the second time "user stack
suppressed due to duplicate graph break"): one site, two breaks, three
graphs (fn after the call, clip_norm before the if, clip_norm's scaling
branch).

Look at: the Breaks pane (one site in clip_norm, count 2); the status
line (graphs 3, breaks 2); the Graphs pane (which graph holds which
piece).

Try next: replace the if with `return g * torch.clamp(max_norm / norm,
max=1.0)`: same values, one graph, and fullgraph=True passes (press f to
prove it).

Expected (torch 2.13/2.14, default SETTINGS):
graphs 3, breaks 2, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def clip_norm(g, max_norm):
    norm = g.norm()
    if norm > max_norm:
        g = g * (max_norm / norm)
    return g


def fn(w, grad):
    return w - 0.1 * clip_norm(grad, 1.0)


def inputs():
    torch.manual_seed(0)
    w = torch.randn(16, requires_grad=True)
    yield w, torch.randn(16) * 5  # large: clipped
    yield w, torch.randn(16) * 0.01  # small: passed through
    yield w, torch.randn(16) * 5


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 3,
    "graph_break_count": 2,
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
    compiled = torch.compile(fn, **SETTINGS)
    for w, grad in inputs():
        print("step norm", round((w - compiled(w, grad)).norm().item(), 4))
