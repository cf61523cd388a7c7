"""A top-level script: names a `fn` and `inputs` of its own that are no snippet's (inputs is a
tensor, not a function), compiles and calls at module level."""

import torch

inputs = torch.randn(8, 8)


def fn(x, y):
    return torch.mm(x, y).relu()


compiled = torch.compile(fn, backend="eager")
out = compiled(inputs, inputs)
out = compiled(inputs, inputs.t())
print(out.shape)
