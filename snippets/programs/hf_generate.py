"""Hugging Face generate() with a compiled forward (a program)

What it shows: the pattern from Hugging Face's docs, `model.forward =
torch.compile(model.forward)`, then `model.generate(...)`, on a 2-layer
GPT-2 with random weights (no download). generate() calls forward once
per new token, and the input grows every step: the first call is the
prompt (8 tokens), then one token at a time with a growing KV cache. The
sizes change from call to call, so Dynamo recompiles with them dynamic
(automatic dynamic), and the later steps reuse that graph.

Look at: one section, GPT2LMHeadModel.forward (a bound method), with its
calls (one per generated token), its graphs and its recompiles with the
size that changed; generate's own loop runs eagerly around it.

Try next: a static cache (cache_implementation="static" in generate) is
what Hugging Face recommends with torch.compile: fixed shapes, fewer
recompiles.
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    model.forward = torch.compile(model.forward, backend="eager")
    prompt = torch.randint(0, 256, (1, 8), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        # min_new_tokens: six steps whatever the random weights predict (no early end of text)
        out = model.generate(prompt, max_new_tokens=6, min_new_tokens=6, do_sample=False, pad_token_id=0)
    print(out.shape)


if __name__ == "__main__":
    main()


# check's report on torch 2.13/2.14, asserted by tests/test_gallery_programs.py:
EXPECTED = {
    "args": [],
    "graph_count": 3,
    "graph_break_count": 0,
    "recompile_count": 2,
    "callables": {
        "GPT2LMHeadModel.forward": {"calls": 6, "graph_count": 3, "graph_break_count": 0, "recompile_count": 2},
    },
}
