"""Compiled and eager agree: nothing to bisect

What it shows: a plain pointwise function. Inductor's kernel matches
eager within float32's tolerance, so `compile-playground bisect` runs
no bisection and says why.
"""

import torch

SETTINGS = {"backend": "inductor", "fullgraph": True}


def fn(x):
    return torch.relu(x) * 2 + x.sin()


def inputs():
    yield (torch.randn(32),)
