"""bfloat16 on Inductor: looser, stated tolerance

What it shows: bfloat16 keeps about 3 significant decimal digits. Eager
rounds to bfloat16 after every operation; Inductor fuses the pointwise
chain (gelu, sigmoid, pow, add), computes it in float32 and rounds once
at the end. Both are legitimate, and they differ by a bfloat16 step or
so. The gradients are sums of 64 products of size up to about 30, where
one bfloat16 step is 0.125, so their error is absolute, not relative: a
tiny gradient can be off by 0.125. TOLERANCE states what is close enough
here: atol 0.25 (two steps at that magnitude), rtol 1.6e-2 (bfloat16's
default), and the equivalence check uses it for values and gradients.

Look at: the Equivalence pane (max_abs 0.125 on the output and both
gradients, and a large max_rel on tiny gradient entries, all within
TOLERANCE); the Graphs pane (Inductor's generated code, computing in
float32 between bfloat16 loads and stores). Compiling with Inductor
takes seconds, not milliseconds: see the Timings pane.

Try next: delete TOLERANCE and save: the values now fail bfloat16's
default tolerance (rtol 1.6e-2, atol 1e-5), so the playground judges
them as PyTorch's accuracy harness does, against a float64 run of the
same calls: Inductor's result is closer to float64 than eager's own
(it rounds once, eager after every op), and the verdict reads "within
rounding". Then set SETTINGS "backend" to "aot_eager" and save (in the
app, b cycles on past inductor through every registered backend, so
editing is quicker): the same ops in the same order as eager, and the
difference is exactly 0.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "inductor",
    "mode": None,
}
TOLERANCE = {"atol": 0.25, "rtol": 1.6e-2}


def fn(x, w):
    h = x @ w
    return torch.nn.functional.gelu(h) * torch.sigmoid(h) + h.pow(2) * 0.01


def inputs():
    torch.manual_seed(0)
    w = torch.randn(128, 64, dtype=torch.bfloat16, requires_grad=True)
    yield torch.randn(64, 128, dtype=torch.bfloat16, requires_grad=True), w


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings named under "Try next" change (keys given are checked):
VARIANTS = [
    # backend aot_eager: exactly eager's rounding
    {
        "settings": {"backend": "aot_eager"},
        "expected": {
            "graph_count": 1,
            "error": None,
            "equivalence_ok": True,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x, w in inputs():
        out, ref = compiled(x, w), fn(x, w)
        diff = (out.float() - ref.float()).abs().max().item()
        print("max abs difference vs eager:", diff)
        torch.testing.assert_close(out, ref, **TOLERANCE)
        print("within TOLERANCE", TOLERANCE)
