"""GPT-2 (transformers): a recompile per length

What it shows: a 2-layer GPT-2 (transformers, random weights, no
download) compiles into one graph with no break: the attention, the
causal mask and the LM head all trace. The first two calls share a
shape; the third is longer (24 tokens instead of 16), so the guard on
the input's size fails and Dynamo compiles again, this time with the
sequence length dynamic (dynamic=None: automatic dynamic after the
first change). On real text every new length would do this once.

Look at: the status line (graphs 2, recompiles 1); the Recompiles pane
("size mismatch at index 1. expected 16, actual 24"); the Guards pane
(the sizes the first graph was specialised on).

Try next: press d for dynamic=True: one graph from the start, no
recompile. Or pad every batch to one length (a fixed 32, say): the
usual fix in serving code, and one graph with dynamic=False too.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 0, recompiles 1, limit hit no, raises no
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}

torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64, use_cache=False)
model = GPT2LMHeadModel(config).eval()


def inputs():
    tokens = torch.Generator().manual_seed(1)
    yield torch.randint(0, 256, (2, 16), generator=tokens)
    yield torch.randint(0, 256, (2, 16), generator=tokens)
    yield torch.randint(0, 256, (2, 24), generator=tokens)  # a longer prompt


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 0,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press d: dynamic=True
    {
        "settings": {"dynamic": True},
        "expected": {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0, "equivalence_ok": True},
    },
]


if __name__ == "__main__":
    compiled = torch.compile(model, **SETTINGS)
    with torch.no_grad():
        for ids in inputs():
            logits = compiled(ids).logits
            print("logits", tuple(logits.shape), "equal:", torch.allclose(logits, model(ids).logits, atol=1e-5))
