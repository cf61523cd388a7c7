"""Every toggle in one table: its key and words, what it does (a setting key's step, `f`, `d`,
`b`, `m`, `c`, `n`, or a pass switched on or off, `k`, `u`) and how the settings bar shows it.

The key table (`tui/keys/table.py`) makes a key of each row whose action is `toggle('NAME')`;
the pipeline's `toggle` looks NAME up here, and the palette runs the key's own action; the
settings bar (`tui/widgets/summary_bar.py`) draws a row per toggle from the same table. A new
toggle is a row here, nothing else (its setting or pass aside), and a row here is all
tests/tui/test_tui_new_toggle.py adds to see one reach a run by its key and by the palette.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from playground.engine.hello import WorkerHello
from playground.engine.passes import Passes
from playground.engine.settings import CORE_BACKENDS, DYNAMICS, MODES, RANK_CHOICES, Settings, cycle, dynamic_name

#: A setting's next value: from the settings now and the worker's handshake (what `b` cycles
#: depends on whether CUDA is there).
Step = Callable[[Settings, "WorkerHello | None"], Settings]
#: What the settings bar says of a toggle now, or None where it says nothing (a pass off).
Shown = Callable[[Settings, Passes], "str | None"]
#: Whether the key may be pressed now (the settings, the worker's handshake).
Offered = Callable[[Settings, "WorkerHello | None"], bool]


def cycle_backends(hello: WorkerHello | None) -> tuple[str, ...]:
    """What `b` cycles: the backends that work wherever torch runs (eager, aot_eager,
    inductor), and cudagraphs when the worker says CUDA is available. The others torch
    registers (tvm, openxla, onnxrt…) mostly need packages a machine lacks: palette only."""
    cuda = hello is not None and hello.cuda_available
    return (*CORE_BACKENDS, *(("cudagraphs",) if cuda else ()))


def cuda_allowed(settings: Settings, hello: WorkerHello | None) -> bool:
    """`c` is offered with CUDA, or to come back from it (a --device cuda from the command line)."""
    return (hello is not None and hello.cuda_available) or settings.device == "cuda"


def _always(_settings: Settings, _hello: WorkerHello | None) -> bool:
    return True


@dataclass(frozen=True)
class Toggle:
    """One toggle: `name` is what its key hands the pipeline (`toggle('NAME')`), a `Settings`
    field stepped by `step`, or, with no step, a `Passes` field switched on and off (`reason`:
    the run's words for it). `key`, `label`, `title`, `help` and `id` make its key in the key
    table; `bar` is its name on the settings bar from longest to none (the bar shortens them in
    that order when it needs the room) and `shown` its value there. A toggle whose `shown` is
    None while it is off (`when_set`) is named only when on, after the ones always named."""

    name: str
    key: str
    label: str
    title: str
    help: str
    id: str
    bar: tuple[str, str, str]
    shown: Shown
    step: Step | None = None
    reason: str = ""
    when_set: bool = False
    offered: Offered = _always

    @property
    def action(self) -> str:
        return f"toggle('{self.name}')"


def _pass_on(name: str) -> Shown:
    return lambda _settings, passes: "on" if getattr(passes, name) else None


#: Every toggle, in the key table's order; the settings bar names the ones always shown in this
#: order, then a program's callable, then the ones shown when set.
TOGGLES: tuple[Toggle, ...] = (
    Toggle(
        "fullgraph",
        "f",
        "fullgraph",
        "Toggle fullgraph",
        "fullgraph=True refuses any graph break (raises) instead of splitting the graph",
        "fullgraph",
        bar=("fullgraph", "full", ""),
        shown=lambda s, _: "on" if s.fullgraph else "off",
        step=lambda s, _: replace(s, fullgraph=not s.fullgraph),
    ),
    Toggle(
        "dynamic",
        "d",
        "dynamic",
        "Cycle dynamic",
        "auto (None: static first, dynamic after a shape change), then true, then false",
        "dynamic",
        bar=("dynamic", "dyn", ""),
        shown=lambda s, _: dynamic_name(s.dynamic),
        step=lambda s, _: replace(s, dynamic=cycle(DYNAMICS, s.dynamic)),
    ),
    Toggle(
        "backend",
        "b",
        "backend",
        "Cycle backend",
        "eager, aot_eager, inductor (and cudagraphs with CUDA); the worker's other registered "
        "backends are in the command palette (ctrl+p)",
        "backend",
        bar=("backend", "", ""),
        shown=lambda s, _: s.backend,
        step=lambda s, hello: replace(s, backend=cycle(cycle_backends(hello), s.backend)),
    ),
    Toggle(
        "mode",
        "m",
        "mode",
        "Cycle mode",
        "default, reduce-overhead, max-autotune, max-autotune-no-cudagraphs (Inductor only)",
        "mode",
        bar=("mode", "", ""),
        shown=lambda s, _: s.mode or "default",
        step=lambda s, _: replace(s, mode=cycle(MODES, s.mode)),
    ),
    Toggle(
        "device",
        "c",
        "device",
        "Switch device",
        "cpu or cuda; cuda only when the worker reports it available",
        "device",
        bar=("device", "", ""),
        shown=lambda s, _: s.device,
        step=lambda s, _: replace(s, device="cpu" if s.device == "cuda" else "cuda"),
        # Shown but disabled without cuda, unless already on cuda (e.g. from the CLI).
        offered=cuda_allowed,
    ),
    Toggle(
        "ranks",
        "n",
        "ranks",
        "Cycle ranks",
        "1, 2 or 4 processes joined by torch.distributed as torchrun joins them (gloo on CPU): each "
        "rank's own run and what differs between them, at the top of Breaks; o shows one rank",
        "ranks",
        bar=("ranks", "ranks", ""),
        # Said only when more than one, as the passes are.
        shown=lambda s, _: str(s.ranks) if s.ranks > 1 else None,
        step=lambda s, _: replace(s, ranks=cycle(RANK_CHOICES, s.ranks)),
        when_set=True,
    ),
    Toggle(
        "kernels",
        "k",
        "kernels",
        "Profile kernels",
        "profile Inductor's kernels in every run from now on, rerunning at once (off by default: it "
        "costs a profiler pass after the timing and a compile with provenance); Timing lists them, "
        "Source marks their lines K; k again turns it off",
        "kernels",
        bar=("kernels", "kernels", ""),
        shown=_pass_on("kernels"),
        reason="kernels profile",
        when_set=True,
    ),
    Toggle(
        "guard_what_if",
        "u",
        "what-if",
        "Guard what-if",
        "measure in every run from now on what torch's unsafe guard switches would save the timed "
        "call (a guard filter, recompiled; skip_guard_eval_unsafe), with the risk of each, shown in "
        "Timing; never applied to the run itself; u again turns it off",
        "guard-what-if",
        bar=("what-if", "what-if", ""),
        shown=_pass_on("guard_what_if"),
        reason="guard what-if",
        when_set=True,
    ),
)


def toggle_named(name: str) -> Toggle:
    """The row whose key hands the pipeline `name`."""
    return next(toggle for toggle in TOGGLES if toggle.name == name)
