"""nn.LSTM: Dynamo skips the whole forward

What it shows: a tagger (a 2-layer nn.LSTM, then a Linear head) is the
plainest recurrent model, and Dynamo refuses it: "Attempted to wrap
RNN, GRU, or LSTM" (GB0014). The break is not a split: Dynamo gives up
on the whole frame and runs it eagerly, the Linear head included, so
there is no graph at all. Nothing fails and equivalence is trivially
ok: eager is compared with eager, and the notes say so.

Look at: the status line (graphs 0, breaks 1); the Breaks pane (the
reason, GB0014, and torch's hint: dynamo.allow_rnn); the notes (torch
compiled no graph).

Try next: ctrl+p, then type dynamo.allow_rnn=true: Dynamo traces the
LSTM op by op. Graphs 2, recompiles 1: the lengths change (12, 20,
30), and after the first change the length is dynamic, so 30 reuses
the second graph.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 0, breaks 1, recompiles 0, limit hit no, raises no
"""

import torch
from torch import nn

SETTINGS = {
    "fullgraph": False,
    "dynamic": None,
    "backend": "eager",
    "mode": None,
}


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out)


torch.manual_seed(0)
model = Tagger()


def inputs():
    torch.manual_seed(1)
    yield torch.randn(4, 12, 16)  # (batch, length, features)
    yield torch.randn(4, 20, 16)
    yield torch.randn(4, 30, 16)


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 0,
    "graph_break_count": 1,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # ctrl+p: dynamo.allow_rnn=true
    {
        "settings": {"config": {"dynamo.allow_rnn": True}},
        "expected": {"graph_count": 2, "graph_break_count": 0, "recompile_count": 1, "equivalence_ok": True},
    },
]


if __name__ == "__main__":
    compiled = torch.compile(model, **SETTINGS)
    for x in inputs():
        print("tags", tuple(compiled(x).shape))
