"""Why it recompiled: the table, the guard line

What it shows: every compiled entry carries guards, and each guard was
made by one line of your code. `y = x * scale` makes `scale == 2.0` (a
Python float is a constant to Dynamo); `if act == "relu":` makes
`act == 'relu'` (the branch taken is baked into the graph). Call 3
changes scale, call 4 changes act: two recompiles. Call 5 brings the
first values back and reuses entry 0/0: no compile.

Look at: the Recomp pane (5): a table, one row per recompile and
argument: call 3, entry 0/1, scale, was 2.0, now 3.0, line 38. Call 4
has two rows: act failed entry 0/1, scale failed entry 0/0 (torch tries
every entry, newest first, and names the first guard each failed). Below
the table, which entry ran each call. The Guards pane (4): the guards of
each entry grouped by the line that made them, torch's internal ones
folded into one line. The Source pane (1): G marks lines 38 and 39.

Try next: press d (dynamic auto): scale turns symbolic at its first
change, so `scale == 2.0` disappears from entry 0/1's guards, while act
still recompiles. Edit the call to pass torch.tensor(scale): no guard
on its value at all.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 3, breaks 0, recompiles 2, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": False,
    "dynamic": False,
    "backend": "eager",
    "mode": None,
}


def fn(x, scale, act):
    y = x * scale  # guard: scale == <its value>
    if act == "relu":  # guard: act == 'relu'
        y = y.relu()
    return y.sum()


def inputs():
    torch.manual_seed(0)
    x = torch.randn(8)
    yield x, 2.0, "relu"  # call 1: compiles entry 0/0
    yield x, 2.0, "relu"  # call 2: every guard of 0/0 passes
    yield x, 3.0, "relu"  # call 3: scale changed
    yield x, 3.0, "tanh"  # call 4: act changed
    yield x, 2.0, "relu"  # call 5: back to 0/0's values


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 3,
    "graph_break_count": 0,
    "recompile_count": 2,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}

# What the settings keys under "Try next" change (keys given are checked):
VARIANTS = [
    # press d: auto
    {
        "settings": {"dynamic": None},
        "expected": {
            "graph_count": 3,
            "recompile_count": 2,
            "recompile_limit_hit": False,
        },
    },
]


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for call, (x, scale, act) in enumerate(inputs(), 1):
        print(f"call {call}: scale={scale} act={act!r} -> {compiled(x, scale, act).item():.4f}")
    print("run with TORCH_LOGS=recompiles_verbose,guards to see torch's own text")
