"""Each compiled callable's section of a program's report: the diagnostics of the records that
arrived while it ran (`capture_of`), in the contract's order (first called first), with the notes
that say why a callable compiled nothing (never called, the recompile limit its code hit, a
call that raised, Dynamo's trace_rules, graphs another torch.compile of the same code made).
Worker-side.
"""

from __future__ import annotations

import os
import types
from typing import Any

import torch

from playground.engine.report import CompiledCallable
from playground.worker.capture import diagnostics
from playground.worker.capture.records import RunCapture
from playground.worker.run.programs.made import Made, Owned
from playground.worker.run.programs.program_compiles import CompiledCallables

_NOT_SKIPPED = "Dynamo traced no tensor operation"


def ordered(made: list[Made]) -> list[Made]:
    """The contract's order: first called first; the ones never called after, as made."""
    called = sorted((m for m in made if m.first_call is not None), key=lambda m: m.first_call or 0)
    return called + [m for m in made if m.first_call is None]


def sections(made: CompiledCallables) -> tuple[CompiledCallable, ...]:
    """Every callable's section, in the contract's order."""
    limited: dict[Any, Made] = {}
    compiled_by: dict[Any, Made] = {}
    for m in made.made:
        code = code_of(m.original)
        if code is not None and capture_of(made, m).graphs:
            compiled_by.setdefault(code, m)
    return tuple(section(made, m, limited, compiled_by) for m in ordered(made.made))


def section(
    made: CompiledCallables,
    m: Made,
    limited: dict[Any, Made] | None = None,
    compiled_by: dict[Any, Made] | None = None,
) -> CompiledCallable:
    """One callable's section: the diagnostics of the records that arrived while it ran.
    `limited`: the code objects whose recompile_limit a callable before it hit (Dynamo's cache
    is per code object, so every torch.compile of the same function shares the limit), and it
    gets this one's if it hits it."""
    found = diagnostics.read(capture_of(made, m)).report
    code = code_of(m.original)
    hit_by = limited.get(code) if limited is not None and code is not None else None
    if found.recompile_limit_hit and limited is not None and code is not None and hit_by is None:
        limited[code] = m
    notes: list[str] = []
    if m.calls == 0:
        notes.append("never called: torch.compile compiles at the first call, so nothing was compiled")
    elif found.graph_count == 0 and found.recompile_limit_hit:
        notes.append(
            f"compiled nothing over {m.calls} call(s): its code hit recompile_limit here, so Dynamo "
            "ran it eagerly (Dynamo's cache is per code object, shared by every torch.compile of it)"
        )
    elif found.graph_count == 0 and hit_by is not None:
        notes.append(
            f"compiled nothing over {m.calls} call(s): its code ({hit_by.name}, line {hit_by.line}) already hit "
            f"recompile_limit under callable #{hit_by.index}, so Dynamo ran it eagerly (Dynamo's cache is "
            "per code object, shared by every torch.compile of it)"
        )
    elif found.graph_count == 0 and m.raised:
        notes.append(f"compiled nothing over {m.calls} call(s): a call raised {m.raised}")
    elif found.graph_count == 0 and skips(m):
        notes.append(f"compiled nothing over {m.calls} call(s): {skipped_reason(m)}")
    elif found.graph_count == 0 and (served := _served_by(m, code, compiled_by)) is not None:
        notes.append(
            f"compiled nothing over {m.calls} call(s): its calls ran what Dynamo compiled for the same code "
            f"under callable #{served.index} ({served.name}, line {served.line}); Dynamo's cache is per code "
            "object, shared by every torch.compile of it"
        )
    elif found.graph_count == 0:
        notes.append(f"compiled nothing over {m.calls} call(s): {skipped_reason(m)}")
    if code is not None and {"is_compiling", "is_dynamo_compiling"} & set(code.co_names):
        notes.append(
            "its code asks torch.compiler.is_compiling(), True only while Dynamo traces it: its compiled "
            "and eager calls may take different branches there, by design"
        )
    if m.raised and found.graph_count > 0:
        # Never compared (a call that raised returned nothing); the program may have caught it.
        notes.append(f"its call {m.raised_at} raised {m.raised} (a call that raised is never compared)")
    if m.unwrapped:
        notes.append(m.unwrapped)
    for key, change in m.toggled.items():
        notes.append(f"program: {key}={change} (toggled)")
    return CompiledCallable(
        name=m.name,
        file=m.file,
        line=m.line,
        options=m.options,
        calls=m.calls,
        graph_count=found.graph_count,
        graph_breaks=found.graph_breaks,
        graph_break_count=found.graph_break_count,
        recompiles=found.recompiles,
        recompile_count=found.recompile_count,
        recompile_limit_hit=found.recompile_limit_hit,
        guards=found.guards,
        notes=tuple(notes),
        kind=m.kind,
        toggled=m.toggled,
        index=m.index,
    )


def _served_by(m: Made, code: Any, compiled_by: dict[Any, Made] | None) -> Made | None:
    """The callable called before `m` that compiled graphs for `m`'s code (None: none did)."""
    served = (compiled_by or {}).get(code) if code is not None else None
    if served is None or served is m or served.first_call is None or m.first_call is None:
        return None
    return served if served.first_call < m.first_call else None


def capture_of(made: CompiledCallables, m: Made) -> RunCapture:
    """The run's capture restricted to what arrived while `m` ran (in any thread)."""
    cap = made.capture

    def of(items: list[Any]) -> list[Any]:
        return items.of(m.index) if isinstance(items, Owned) else []

    return RunCapture(
        snippet_path=cap.snippet_path,
        records=of(cap.records),
        trace=of(cap.trace),
        graphs=of(cap.graphs),
        first_runs=cap.first_runs,
        backend_facts=cap.backend_facts,
        own_break_lines=cap.own_break_lines,
    )


def skips(made: Made) -> bool:
    """Whether Dynamo's trace_rules skip the code a callable's calls run."""
    return not skipped_reason(made).startswith(_NOT_SKIPPED)


def skipped_reason(made: Made) -> str:
    """Why a callable that was called compiled no graph, where torch's rules say."""
    target = made.original
    func = getattr(target, "__func__", None)
    if func is torch.nn.Module._call_impl:
        owner = target.__self__
        forward = getattr(type(owner), "forward", None)
        code = getattr(forward, "__code__", None)
        if code is not None and _skipped(code):
            return (
                f"{made.name}.compile() compiles only the frames of its calls, and {made.name}.forward is "
                f"torch's own code ({os.path.basename(code.co_filename)}), which Dynamo skips "
                "(trace_rules); torch.compile(model) traces the module as a whole instead"
            )
        return _NOT_SKIPPED + " in it, or skipped its frames"  # its forward is the program's
    code = getattr(getattr(target, "forward", target), "__code__", None)
    if code is not None and _skipped(code):
        return f"Dynamo skips {code.co_name} ({os.path.basename(code.co_filename)}): trace_rules list it"
    return _NOT_SKIPPED + " in it, or skipped its frames"


def code_of(target: Any) -> types.CodeType | None:
    """The code object Dynamo caches a compiled callable's frames under: a function's, a bound
    method's, a module's forward (None: none found)."""
    owner = getattr(target, "__self__", None)
    if isinstance(owner, torch.nn.Module) and getattr(target, "__func__", None) is torch.nn.Module._call_impl:
        target = type(owner).forward
    elif isinstance(target, torch.nn.Module):
        target = type(target).forward
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _skipped(code: types.CodeType) -> bool:
    try:
        from torch._dynamo import trace_rules

        return bool(trace_rules.check(code))
    except Exception:  # noqa: BLE001 - a private rule that moved: say nothing
        return False
