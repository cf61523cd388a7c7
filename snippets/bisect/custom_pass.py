"""A library's own Inductor pass: a faster erf that is not erf

What it shows: a library installs a custom post-grad pass
(torch._inductor.config.post_grad_custom_post_pass) that swaps every
erf in the graph for tanh(1.2025 x), a cheaper curve close to it. GELU
is built on erf, so the compiled GELU is off by up to about 0.02 (0.04
after the * 2), far more than float32 rounding: the Equiv pane says
FAIL under Inductor, while eager (which never runs Inductor's passes)
is right.

Look at: press s on the Equiv pane (or `compile-playground bisect
snippets/bisect/custom_pass.py`): the bisector names backend inductor,
subsystem post_grad_passes, torch's debug info
post_grad_custom_post_pass, and the first diverging op is
torch.nn.functional.gelu on fn's line: the GELU whose erf the pass
replaced, not the multiplication after it. The workaround turns that
one pass off by name:
inductor.disabled_passes="post_grad_custom_post_pass"; press a to
apply it and rerun, and the Equiv pane passes.

Try next: press b for aot_eager: no Inductor, no pass, a pass.
"""

import torch
from torch._inductor import config
from torch._inductor.custom_graph_pass import CustomGraphPass

SETTINGS = {"backend": "inductor", "fullgraph": True}


class FastErf(CustomGraphPass):
    """Replaces aten.erf(z) with tanh(1.2025 * z) in the post-grad graph."""

    def __call__(self, graph: torch.fx.Graph) -> None:
        for node in list(graph.nodes):
            if node.op == "call_function" and node.target is torch.ops.aten.erf.default:
                with graph.inserting_before(node):
                    scaled = graph.call_function(torch.ops.aten.mul.Tensor, (node.args[0], 1.2025))
                    curve = graph.call_function(torch.ops.aten.tanh.default, (scaled,))
                node.replace_all_uses_with(curve)
                graph.erase_node(node)

    def uuid(self) -> bytes:
        return b"fast-erf-1"  # Inductor's FX cache keys on it: a new pass, a new uuid


config.post_grad_custom_post_pass = FastErf()


def fn(x):
    return torch.nn.functional.gelu(x) * 2


def inputs():
    torch.manual_seed(0)
    yield (torch.randn(4096),)
