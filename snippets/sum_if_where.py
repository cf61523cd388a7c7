"""Fix for if x.sum() > 0: torch.where, one graph

What it shows: when both branches are cheap and safe to evaluate on
every input (no division by zero, no side effects), torch.where(cond, a,
b) with a 0-d tensor condition gives the same values as the if, inside
one graph. Unlike torch.cond it always runs both branches, and the
gradient flows only through the selected one (the other gets zeros),
which matches the if here.

Look at: the status line (graphs 1, breaks 0 with fullgraph=on); the
Graphs pane (sum, gt, sin, cos and where in one graph); Equivalence:
values and gradients agree.

Try next: change torch.sin to torch.sqrt. On the negative input the
unselected sqrt is NaN; where hides it from the values, but the gradient
becomes NaN (0 times the NaN derivative), in eager and compiled alike,
so equivalence stays ok while the function no longer means what the `if`
meant. That is when torch.cond (sum_if_cond.py) is the right fix and
where is not.

Expected (torch 2.13/2.14, default SETTINGS):
graphs 1, breaks 0, recompiles 0, limit hit no, raises no
"""

import torch

SETTINGS = {
    "fullgraph": True,
    "dynamic": None,
    "backend": "aot_eager",
    "mode": None,
}


def fn(x):
    y = x * 2
    return torch.where(y.sum() > 0, torch.sin(y), torch.cos(y))


def inputs():
    torch.manual_seed(0)
    base = torch.rand(4, 8) + 0.1
    yield base.clone().requires_grad_()
    yield (-base).requires_grad_()
    yield (base * 3).requires_grad_()


# check's report on torch 2.13/2.14, asserted by tests/test_gallery.py:
EXPECTED = {
    "graph_count": 1,
    "graph_break_count": 0,
    "recompile_count": 0,
    "recompile_limit_hit": False,
    "error": None,
    "equivalence_ok": True,
}


if __name__ == "__main__":
    compiled = torch.compile(fn, **SETTINGS)
    for x in inputs():
        print("sum", round(compiled(x).sum().item(), 4))
