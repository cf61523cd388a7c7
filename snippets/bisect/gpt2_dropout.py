"""GPT-2 in training: dropout's decomposition draws other random numbers

What it shows: a real model. A 2-layer GPT-2 (transformers, random
weights, no download) in training mode, so its dropout layers are on.
Eager draws dropout's mask with aten.native_dropout; Inductor first
decomposes native_dropout into its own random draws, so from the same
seed the masks, and every value after them, differ.

Look at: `compile-playground bisect snippets/bisect/gpt2_dropout.py`
names backend aot_eager_decomp_partition (the first stage that applies
Inductor's decompositions), subsystem decomposition,
aten.native_dropout as the decomposition applied last, and as the
first diverging op torch.nn.functional.dropout, at the line of
transformers' modeling_gpt2.py that calls a dropout layer (self.drop):
the snippet never calls it itself. It takes about 15 steps, each a
fresh process compiling the model (about 3 minutes on 2 cores).

Try next: the workaround `--config inductor.fallback_random=true`
makes Inductor keep torch's own random ops: bisect then says eager and
compiled agree. The app's runs set fallback_random=True, so there the
Equiv pane passes; set the model to `.eval()` and dropout is off.
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

SETTINGS = {"backend": "inductor"}

torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64, use_cache=False)
model = GPT2LMHeadModel(config).train()


def inputs():
    tokens = torch.Generator().manual_seed(1)
    yield torch.randint(0, 256, (2, 16), generator=tokens)
