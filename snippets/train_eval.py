"""model.eval() between calls: a recompile

What it shows: Dropout is active in training and the identity in eval.
Dynamo bakes the mode into the graph and guards on each module's
`training` attribute. inputs() is a generator: it yields a batch in
train mode, calls model.eval(), and yields again. The engine consumes it
lazily, so the second call arrives in eval mode, fails the guard and
compiles an eval graph. Switching back later reuses the train graph.

Look at: the status line (graphs 2, recompiles 1); the Recompiles pane
(the reason is a guard like "fn._modules['1'].training == True"); the
Graphs pane (graph 1 has the dropout, graph 2 does not).

Try next: add `model.train()` and a third yield: graphs stay 2 (both
entries are cached, so there is nothing to recompile). Put model.eval()
before the first yield: one graph, no recompile.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 2, breaks 0, recompiles 1, limit hit no, raises no
"""

import torch
from torch import nn

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Dropout(p=0.2), nn.ReLU(), nn.Linear(32, 4))


def inputs():
    torch.manual_seed(1)
    model.train()
    yield torch.randn(8, 16)
    model.eval()  # runs between the two calls: the generator is consumed lazily
    yield torch.randn(8, 16)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 2,
    "graph_break_count": 0,
    "recompile_count": 1,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}


if __name__ == "__main__":
    compiled = torch.compile(model, **SETTINGS)
    for x in inputs():
        print("training" if model.training else "eval", tuple(compiled(x).shape))
