"""Randomness without fallback_random: Inductor draws its own numbers

What it shows: torch.rand inside a compiled function. Inductor generates
random numbers with its own generator unless
torch._inductor.config.fallback_random is True, so with the same seed the
compiled values differ from eager's.

Look at: `compile-playground bisect snippets/bisect/random_without_fallback.py`
names backend inductor, subsystem fallback_random, and the workaround
`--config inductor.fallback_random=true`.
"""

import torch

SETTINGS = {"backend": "inductor", "fullgraph": True, "target": "fn"}


def fn(x):
    return x + torch.rand(x.shape)


def inputs():
    yield (torch.randn(16),)
