"""What each toggle does, in one table: a setting key's step (`f`, `d`, `b`, `m`, `c`, `n`) or a
pass switched on or off (`k`, `u`). The key table (`tui/keys/table.py`) binds a key to
`toggle('NAME')`; the pipeline's `toggle` looks NAME up here. A new toggle is a row here and a
row there, nothing else: the palette lists the key table's commands and runs the same action.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from playground.engine.hello import WorkerHello
from playground.engine.settings import CORE_BACKENDS, DYNAMICS, MODES, RANK_CHOICES, Settings, cycle

#: A setting's next value: from the settings now and the worker's handshake (what `b` cycles
#: depends on whether CUDA is there).
Step = Callable[[Settings, "WorkerHello | None"], Settings]


def cycle_backends(hello: WorkerHello | None) -> tuple[str, ...]:
    """What `b` cycles: the backends that work wherever torch runs (eager, aot_eager,
    inductor), and cudagraphs when the worker says CUDA is available. The others torch
    registers (tvm, openxla, onnxrt…) mostly need packages a machine lacks: palette only."""
    cuda = hello is not None and hello.cuda_available
    return (*CORE_BACKENDS, *(("cudagraphs",) if cuda else ()))


def cuda_allowed(settings: Settings, hello: WorkerHello | None) -> bool:
    """`c` is offered with CUDA, or to come back from it (a --device cuda from the command line)."""
    return (hello is not None and hello.cuda_available) or settings.device == "cuda"


#: Each setting key's step, by the setting's name (the name a program's toggles use too).
STEPS: dict[str, Step] = {
    "fullgraph": lambda s, _: replace(s, fullgraph=not s.fullgraph),
    "dynamic": lambda s, _: replace(s, dynamic=cycle(DYNAMICS, s.dynamic)),
    "backend": lambda s, hello: replace(s, backend=cycle(cycle_backends(hello), s.backend)),
    "mode": lambda s, _: replace(s, mode=cycle(MODES, s.mode)),
    "device": lambda s, _: replace(s, device="cpu" if s.device == "cuda" else "cuda"),
    "ranks": lambda s, _: replace(s, ranks=cycle(RANK_CHOICES, s.ranks)),
}

#: The passes a key switches on and off, by their `Passes` field's name (as attribute names, not
#: the request's wire keys), with the words the run's reason gives them.
PASS_WORDS: dict[str, str] = dict(kernels="kernels profile", guard_what_if="guard what-if")
