"""A program's report parts: one section per compiled callable the program made, where a long
program was stopped, and how the program itself ended."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from playground.engine.report.breaks import GraphBreak
from playground.engine.report.equivalence import Equivalence
from playground.engine.report.guards import GuardSet
from playground.engine.report.recompiles import Recompile
from playground.engine.report.timings import Timings
from playground.engine.report.wire import Wire, wire

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class CompiledCallable(Wire):
    """One compiled callable: where the program made it, with which options, and what torch
    compiled while it ran (its own calls, and whatever they compiled below them).

    `options` are the program's own arguments to torch.compile, each as its repr; `toggled` the
    ones the user's settings replaced, "was → now". `kind` says how it was made: "function"
    (torch.compile(f) or a decorator), "module" (torch.compile(module)), "module.compile"
    (nn.Module.compile()), "method" (a bound method)."""

    name: str = ""
    file: str = ""
    line: int | None = None
    options: Mapping[str, str] = wire(factory=lambda: _EMPTY)
    calls: int = 0
    graph_count: int = 0
    graph_breaks: tuple[GraphBreak, ...] = ()
    graph_break_count: int = 0
    recompiles: tuple[Recompile, ...] = ()
    recompile_count: int = 0
    recompile_limit_hit: bool = False
    guards: tuple[GuardSet, ...] = ()
    equivalence: Equivalence | None = None
    timings: Timings | None = None
    notes: tuple[str, ...] = ()
    kind: str = "function"
    toggled: Mapping[str, str] = wire(factory=lambda: _EMPTY)
    #: The order torch.compile was called in (1-based): two callables made on one line (in a
    #: loop) tell apart by it.
    index: int = 0

    def summary_line(self) -> str:
        return (
            f"graphs {self.graph_count}  breaks {self.graph_break_count}  "
            f"recompiles {self.recompile_count}  calls {self.calls}"
        )


@dataclass(frozen=True)
class ProgramRun(Wire):
    """How a program runs: its argv after the file (`-- ARGS`), the bounds of a long program
    (calls of compiled callables, seconds; None: unbounded), and which settings the user set
    (flags or keys), which then override what the program passes to torch.compile. A setting
    not named here leaves the program's own choice alone."""

    args: tuple[str, ...] = ()
    max_calls: int | None = None
    max_seconds: float | None = None
    toggled: tuple[str, ...] = ()
    #: Whether `--program` forced the mode (the file also defines a target).
    forced: bool = False
    #: The one compiled callable the toggles act on, by its report key (`callable_key`: its
    #: name, or name#N for the N-th torch.compile call where names repeat); None: every one.
    only: str | None = None
    #: How many of each callable's first calls are compared with the eager reference (None: the
    #: worker's default); the reference runs the program only as far as those calls reach.
    compare_calls: int | None = None
    #: The program's sys.argv[0] as the command line spelled the file ("": its absolute path),
    #: as `python prog.py` gives it.
    argv0: str = ""


@dataclass(frozen=True)
class Stopped(Wire):
    """Where a bound ended a long program: `by` "max_calls" (at = the calls made) or
    "max_seconds" (at = the seconds it ran)."""

    by: str = ""
    at: float = 0


@dataclass(frozen=True)
class ProgramException(Wire):
    """The exception a program ended with: its type, its message and the program's own line."""

    type: str = ""
    message: str = ""
    line: int | None = None


@dataclass(frozen=True)
class ProgramExit(Wire):
    """How the program ended: `code` as `python FILE` would exit (0, sys.exit's code, 1 after an
    exception; None when a bound stopped it first), and the exception when it raised one."""

    code: int | None = 0
    exception: ProgramException | None = None
