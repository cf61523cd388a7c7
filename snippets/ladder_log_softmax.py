"""Ladder: log_softmax's decomposed gradient

What it shows: torch's troubleshooting ladder for a wrong result,
done in one key. TOLERANCE asks for bitwise equality (atol=rtol=0), so
any change in the arithmetic counts. Under eager and aot_eager the
compiled graph calls the same ATen kernels as eager, and the output
and the gradient are bitwise equal. aot_eager_decomp_partition adds
Inductor's decompositions: log_softmax's backward becomes separate
exp, sum, mul and sub ops, which round differently, so the gradient
differs by a few 1e-6. Whether the output differs too depends on your
CPU's vector kernels (torch.backends.cpu.get_cpu_capability()): it
matched bit for bit on the machine this was written on, and is 1e-6
off on an AVX2-only one. That is the first stage the ladder names.
(Inductor may then agree again where its generated kernel happens to
round like eager's: the ladder reports the first divergence, not the
last.)

Look at: Equivalence (6: ok, max abs 0); then press x, escape (stop
the matrix) and l: the ladder runs eager, aot_eager,
aot_eager_decomp_partition and inductor and says "first divergence:
aot_eager_decomp_partition: gradients differ" (or "values differ",
where the forward rounds differently too). Its Dynamo and backend
columns split each stage's compile time; Timing (7) has the full table.

Try next: set TOLERANCE to {} (the dtype's default tolerances) and
run the ladder again: no stage diverges, the difference is rounding.
Or one stage alone: `compile-playground check
snippets/ladder_log_softmax.py --backend aot_eager_decomp_partition`.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": True,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}

# Bitwise: the decompositions' rounding shows. Comment out for torch's default tolerances.
TOLERANCE = {"atol": 0.0, "rtol": 0.0}


def fn(x):
    return torch.nn.functional.log_softmax(x, -1)


def inputs():
    torch.manual_seed(0)
    yield torch.randn(8, 512, requires_grad=True)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# The ladder's stages one at a time (keys given are checked):
VARIANTS = [
    # aot_eager: AOT autograd's joint graph, the same kernels: still bitwise equal
    {
        "settings": {"backend": "aot_eager"},
        "expected": {"graph_count": 1, "error": None, "equivalence_ok": True},
    },
    # aot_eager_decomp_partition: Inductor's decompositions change the gradient's rounding
    {
        "settings": {"backend": "aot_eager_decomp_partition"},
        "expected": {"graph_count": 1, "error": None, "equivalence_ok": False},
    },
]


if __name__ == "__main__":
    # The ladder by hand: each backend's output and gradient against eager's, bit for bit.
    (x,) = inputs()

    def run(f):
        x.grad = None
        out = f(x)
        out.sum().backward()
        return out.detach(), x.grad.clone()

    want_out, want_grad = run(fn)
    for backend in ("eager", "aot_eager", "aot_eager_decomp_partition"):
        torch._dynamo.reset()
        out, grad = run(torch.compile(fn, backend=backend, fullgraph=True))
        diff = (grad - want_grad).abs().max().item()
        print(
            f"{backend:<28} output equal {torch.equal(out, want_out)!s:<6} gradient equal "
            f"{torch.equal(grad, want_grad)!s:<6} max abs diff {diff:.3g}"
        )
