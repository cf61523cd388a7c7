"""Llama from transformers: model or the loss fn

What it shows: a 2-layer Llama (transformers, random weights, no
download) written as people write it: `model`, and `fn` returning the
language-model loss. A snippet defining both runs `model` unless
SETTINGS["target"] says "fn"; this one does, so the compiled code is
the whole loss (forward, shift, cross-entropy) in one graph, and the
gradient check compares the gradients of every Llama parameter that
fn's loss reaches. Rotary embeddings, grouped-query attention and
RMSNorm all trace: no break.

Look at: the settings line (target=fn) and the notes (which target ran
and why); the Equivalence pane (one scalar loss per call, then a row
per parameter gradient); the Guards pane (guards on `model`'s modules,
named by the path you would write: model.model.layers[0]...).

Try next: set "target" to "model": `model` runs instead, its output
is the logits, and the notes say that fn was not called. Press b for
inductor: the gradients differ from eager's by float32 rounding
(about 1e-4 on embed_tokens; eager's own error against float64 is of
the same size).

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
    "target": "fn",
}

torch.manual_seed(0)
config = LlamaConfig(
    num_hidden_layers=2,
    hidden_size=64,
    intermediate_size=128,
    num_attention_heads=4,
    num_key_value_heads=2,
    vocab_size=256,
    max_position_embeddings=128,
    use_cache=False,
)
model = LlamaForCausalLM(config)


def fn(ids):
    return model(input_ids=ids, labels=ids).loss


def inputs():
    tokens = torch.Generator().manual_seed(1)
    yield torch.randint(0, 256, (2, 16), generator=tokens)
    yield torch.randint(0, 256, (2, 16), generator=tokens)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # "target": "model": model runs
    {
        "settings": {"target": "model"},
        "expected": {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0, "equivalence_ok": True},
    },
]


if __name__ == "__main__":
    settings = {k: v for k, v in SETTINGS.items() if k != "target"}  # the playground's key, not torch's
    compiled = torch.compile(fn, **settings)
    for ids in inputs():
        loss = compiled(ids)
        loss.backward()
        print(f"loss {loss.item():.4f}  eager {fn(ids).item():.4f}")
    print("grads:", sum(p.grad is not None for p in model.parameters()), "parameters")
