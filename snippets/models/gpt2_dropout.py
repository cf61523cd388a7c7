"""GPT-2 in training: dropout under Inductor

What it shows: a 1-layer GPT-2 (transformers, random weights, no
download) in training mode, so its dropout layers are on. The
playground runs Inductor with fallback_random on so that dropout
compares; this snippet's SETTINGS turn it off, as a plain script has
it. Eager draws dropout's mask with aten.native_dropout; Inductor
decomposes native_dropout into its own random draws, so from the same
seed the masks, and every value and gradient after them, differ: the
Equiv pane says FAIL.

Look at: press s on the Equiv pane (or `compile-playground bisect
snippets/models/gpt2_dropout.py`): about 13 steps, each a fresh
process compiling the model (about a minute on 2 cores), escape
cancels. It names backend aot_eager_decomp_partition (the first stage
that applies Inductor's decompositions), subsystem decomposition,
aten.native_dropout as the decomposition applied last, and as the
first diverging op torch.nn.functional.dropout, at the line of
transformers' modeling_gpt2.py that calls a dropout layer: the snippet
never calls it itself.

Try next: press a for the workaround, inductor.fallback_random=true:
Inductor keeps torch's own random ops and the Equiv pane passes. Or set
the model to `.eval()`: dropout is off, nothing random is left.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "inductor",
    "mode": None,
    "config": {"inductor.fallback_random": False},
}

torch.manual_seed(0)
config = GPT2Config(n_layer=1, n_head=2, n_embd=64, vocab_size=256, n_positions=64, use_cache=False)
model = GPT2LMHeadModel(config).train()


def inputs():
    tokens = torch.Generator().manual_seed(1)
    yield torch.randint(0, 256, (2, 16), generator=tokens)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": False,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press a: the bisection's workaround
    {
        "settings": {"config": {"inductor.fallback_random": True}},
        "expected": {"graph_count": 1, "graph_break_count": 0, "equivalence_ok": True},
    },
]

if __name__ == "__main__":
    (ids,) = inputs()
    torch.manual_seed(7)
    eager = model(ids).logits
    torch.manual_seed(7)
    compiled = torch.compile(model, backend="inductor")(ids).logits
    print("logits", tuple(compiled.shape), "same as eager without fallback_random:", torch.allclose(eager, compiled))
