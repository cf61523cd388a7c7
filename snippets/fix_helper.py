"""Fixes: a helper Dynamo cannot trace

What it shows: `clip_norm` branches on a tensor's value, which Dynamo
cannot put in a graph: the graph breaks inside the helper (and at its
call in fn). torch documents four ways to stop tracing into a function
of yours, and they do not achieve the same thing: `torch.compiler.disable`
runs it in Python (the break moves to the call); `nonstrict_trace` and
`allow_in_graph` still need the branch's outcome; a custom op
(`torch.library.custom_op` with its `register_fake`) makes it one opaque
op in one graph, and has no gradient unless you register one.

Look at: the Breaks pane (the site in clip_norm); the fixes key: each
remedy with the change you would write (a custom op's is several
lines), where a moved break went, and the verdict on values and
gradients.

Try next: `check snippets/fix_helper.py --try-fixes`; or write the
clip without a branch: `g * torch.clamp(max_norm / norm, max=1.0)`.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 3, breaks 2, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
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


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 3,
    "graph_break_count": 2,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What --try-fixes tries here, each checked by tests/test_gallery_fixes.py against a plain
# `python` run of this file with `apply` added (the counts are torch's, computed in the test):
FIXES = [
    {
        "kind": "break",
        "at": "if norm > max_norm",
        "remedy": "disable",
        "apply": "clip_norm = torch.compiler.disable(clip_norm)",
    },
    {
        "kind": "break",
        "at": "if norm > max_norm",
        "remedy": "nonstrict_trace",
        "apply": "clip_norm = torch._dynamo.nonstrict_trace(clip_norm)",
    },
    {
        "kind": "break",
        "at": "if norm > max_norm",
        "remedy": "custom_op",
        "apply": (
            "_clip_norm = clip_norm\n"
            '@torch.library.custom_op("lesson::clip_norm", mutates_args=())\n'
            "def clip_norm_op(g: torch.Tensor, max_norm: float) -> torch.Tensor:\n"
            "    return _clip_norm(g, max_norm).clone()\n"
            "@clip_norm_op.register_fake\n"
            "def _(g, max_norm):\n"
            "    return torch.empty_like(g)\n"
            "clip_norm = clip_norm_op\n"
        ),
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for w, grad in inputs():
        print("step norm", round((w - compiled(w, grad)).norm().item(), 4))
