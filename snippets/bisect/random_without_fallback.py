"""Randomness without fallback_random: Inductor draws its own numbers

What it shows: torch.rand inside a compiled function. Inductor
generates random numbers with its own generator unless
torch._inductor.config.fallback_random is True, so with the same seed
the compiled values differ from eager's. The playground runs Inductor
with fallback_random on so that dropout compares; this lesson's
SETTINGS turn it off, as a plain script has it, and the Equiv pane
says FAIL.

Look at: press s on the Equiv pane (or `compile-playground bisect
snippets/bisect/random_without_fallback.py`): the bisector names
backend inductor, subsystem fallback_random, the first diverging op
torch.rand, and the workaround inductor.fallback_random=true; press a
to apply it and rerun, and the Equiv pane passes.
"""

import torch

SETTINGS = {
    "backend": "inductor",
    "fullgraph": True,
    "target": "fn",
    "config": {"inductor.fallback_random": False},
}


def fn(x):
    return x + torch.rand(x.shape)


def inputs():
    yield (torch.randn(16),)
