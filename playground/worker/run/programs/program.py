"""A program's run: the file run as `python FILE ARGS` runs it (`__name__ == "__main__"`,
`sys.argv == [FILE, *ARGS]`), in the run's fresh child after torch._dynamo.reset(), with its own
torch.compile calls recorded (program_compiles.py). The report's totals are the whole capture,
as a fresh `python FILE` gives torch; each compiled callable gets its section. Worker-side.

Bounds end a long program (a training loop) between two calls of its compiled callables, as a
complete report of what ran, never an error. A program that raises keeps every section captured
before: its exception is the program's (a snippet error), or torch.compile's when it came out of
a compiled callable from torch's compiler.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from playground.engine.program import callable_key, matches
from playground.engine.report import (
    CompiledCallable,
    ProgramException,
    ProgramExit,
    Report,
    RunError,
    Stopped,
)
from playground.worker.capture import diagnostics
from playground.worker.capture.records import RunCapture
from playground.worker.run.compare.reference import References
from playground.worker.run.programs import program_compare, program_reference
from playground.worker.run.programs.made import (
    Bounds,
    Made,
    Unseen,
)
from playground.worker.run.programs.program_compiles import (
    TOGGLABLE,
    CompiledCallables,
    code_of,
)
from playground.worker.run.programs.program_reference import our_files
from playground.worker.run.programs.stops import (
    Alarm,
    AtExitPatch,
    OsExitPatch,
    ProgramOsExit,
    ProgramStopped,
    program_seconds,
)
from playground.worker.run.spine import decomp_table, loading
from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.failures import first_line, safe_str

#: Seconds between two live reports of a running program (calls, graphs, recompiles so far),
#: at least; and the share of the run's time they may take (a long capture takes longer to read).
LIVE_INTERVAL_S = 0.5
LIVE_SHARE = 0.02


def run_program(ctx: RunContext, capture: RunCapture, base: Report) -> Report:
    """Run the program once; its report (without the notes and duration the caller adds)."""
    program = ctx.request.run.program
    assert program is not None
    path = ctx.request.run.path
    settings = ctx.settings
    overrides = {key: getattr(settings, key) for key in program.toggled if key in TOGGLABLE}
    seconds, by_timeout = program_seconds(program.max_seconds, ctx.request.run.flags.timeout_s)
    deadline = time.monotonic() + seconds if seconds else None
    bounds = Bounds(max_calls=program.max_calls, deadline=deadline)
    base = replace(base, kind="program", program=program)
    live = _Live(ctx, capture, base)
    recorder = program_reference.Recorder(budget=program_reference.compare_calls(ctx.request), device=settings.device)
    made = CompiledCallables(
        capture, path, settings.device, overrides, bounds, on_call=live, only=program.only, on_return=recorder
    )
    live.made = made
    ctx.notes.append(_mode_note(program.forced, program.args, overrides, program.only))
    ctx.progress("loading", "running the program")
    scope = loading.SnippetScope(path, "__main__", not ctx.request.warmup)
    saved_argv, saved_main = sys.argv, sys.modules.get("__main__")
    exit_: ProgramExit
    stopped: Stopped | None = None
    error: RunError | None = None
    code = loading.compiled_source(ctx)
    module = scope.open()
    sys.argv = [path, *program.args]
    made.install()
    backward = program_reference.BackwardPatch(made, recorder)
    backward.install()
    exits = OsExitPatch()
    exits.install()
    at_exit = AtExitPatch()
    at_exit.install()
    timer = Alarm(seconds, made.keep)
    began = time.perf_counter()
    os_exited = False
    try:
        loading.seed_everything()
        with Unseen(*our_files()), timer:
            loading.run_code(code, module)
        exit_ = ProgramExit(code=0)
    except ProgramStopped as stop:
        stopped = Stopped(by=stop.by, at=stop.at)
        exit_ = ProgramExit(code=None)
        if by_timeout and stop.by == "max_seconds":
            ctx.notes.append(
                f"program: no --max-seconds, so it was bounded at {seconds:g} s, a third of the run's "
                "timeout (the eager reference runs it again after): --max-seconds or --timeout sets it"
            )
    except ProgramOsExit as exc:
        os_exited = True  # os._exit skips the exit functions, in python too
        exit_ = ProgramExit(code=_exit_code(exc.code))
        if exit_.code:
            error = RunError(
                kind="snippet",
                type="SystemExit",
                message=f"the program called os._exit({exc.code})",
                line=_program_line(exc, path),
            )
    except SystemExit as exc:
        exit_ = ProgramExit(code=_exit_code(exc.code))
        if exit_.code:
            # `python FILE` would have failed (argparse's usage error exits 2): said, with the
            # program's line, never a quiet exit status in the JSON alone.
            shown = f": {exc.code}" if isinstance(exc.code, str) else ""
            error = RunError(
                kind="snippet",
                type="SystemExit",
                message=f"the program exited with status {exit_.code}{shown}",
                line=_program_line(exc, path),
            )
    except BaseException as exc:  # noqa: BLE001 - the program's exception is its report
        exit_, error = _raised(exc, path, made)
    finally:
        timer.cancel()
        at_exit.uninstall()
        if not os_exited:
            with Unseen(*our_files()):
                at_exit.run()
        exits.uninstall()
        backward.uninstall()
        made.uninstall()
        sys.argv = saved_argv
        program_s = time.perf_counter() - began
    if made.stopped is not None and stopped is None:
        # The program caught the stop (a bare `except:`) and went on or ended otherwise: it
        # was stopped all the same, and each later call of a compiled callable raised it again.
        stopped = Stopped(by=made.stopped.by, at=made.stopped.at)
        ctx.notes.append(
            "program: it caught the playground's stop (a bare `except:` or `except BaseException`) and went "
            "on; every later call of a compiled callable raised it again"
        )
        if error is None:
            exit_ = ProgramExit(code=None)
    try:
        found = diagnostics.read(capture).apply(base)
        found_sections = sections(made)
        # Read while the program's module is still __main__: what its callables returned may
        # hold instances of its own classes, which unpickle only there.
        began = time.perf_counter()
        compared = _against_eager(ctx, found, found_sections, made, recorder)
        eager_s = time.perf_counter() - began
    finally:
        local_modules = scope.close()
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    if table := decomp_table.note():
        ctx.notes.append(table)
    if compared is not None:
        found_sections = tuple(program_compare.with_comparison(s, compared) for s in found_sections)
        ctx.notes.extend(compared.notes)
    if program.only is not None and not any(matches(program.only, m.name, m.index) for m in made.made):
        names = [m.name for m in made.made]
        keys = ", ".join(callable_key(m.name, m.index, names) for m in made.made) or "none"
        ctx.notes.append(f"program: no compiled callable is {program.only!r}, so nothing was toggled (made: {keys})")
    return replace(
        found,
        calls=made.calls,
        error=error,
        callables=found_sections,
        stopped=stopped,
        program_exit=exit_,
        local_modules=tuple(local_modules),
        equivalence=compared.total if compared is not None else None,
        # The program's own run (what `python FILE` would take, less its start and imports),
        # and its eager reference run with the comparison.
        phase_s=MappingProxyType({"program": round(program_s, 4), "reference": round(eager_s, 4)}),
    )


def _against_eager(
    ctx: RunContext, found: Report, sections: tuple[CompiledCallable, ...], made: CompiledCallables, recorder: Any
) -> program_compare.Compared | None:
    """The diagnostics first (the app shows them now), then the eager reference started and
    waited for, and each callable's calls compared with it. None: no reference to compare."""
    if not recorder.calls:
        return None
    if ctx.request.references is None:
        ctx.notes.append("program: no eager reference in this run (isolation is off), so nothing was compared")
        return None
    early = replace(found, stage="traced", calls=made.calls, callables=sections, notes=tuple(ctx.notes))
    ctx.emit({"event": "diagnostics", "report": early.to_dict()})
    references = References(ctx)
    # The reference runs the program only as far as the compared calls reach.
    program_reference.write_plan(os.path.join(ctx.request.references.folder, "eager.plan"), recorder.last_kept())
    references.start()
    ctx.progress("reference", f"the program again under {program_reference.STANCE}")
    eager = references.eager()
    if eager.note and not eager.program_calls:
        ctx.notes.append(f"program: nothing compared: {eager.note}")
        return None
    return program_compare.compare(made.made, recorder, eager.program_calls, eager.note)


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
        if code is not None and made.capture_of(m).graphs:
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
    found = diagnostics.read(made.capture_of(m)).report
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
    elif found.graph_count == 0 and made.skips(m):
        notes.append(f"compiled nothing over {m.calls} call(s): {made.skipped_reason(m)}")
    elif found.graph_count == 0 and (served := _served_by(m, code, compiled_by)) is not None:
        notes.append(
            f"compiled nothing over {m.calls} call(s): its calls ran what Dynamo compiled for the same code "
            f"under callable #{served.index} ({served.name}, line {served.line}); Dynamo's cache is per code "
            "object, shared by every torch.compile of it"
        )
    elif found.graph_count == 0:
        notes.append(f"compiled nothing over {m.calls} call(s): {made.skipped_reason(m)}")
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


class _Live:
    """After a call of a compiled callable, at most every LIVE_INTERVAL_S: progress and the
    sections so far as a "traced" diagnostics event (the app shows a long loop as it runs)."""

    def __init__(self, ctx: RunContext, capture: RunCapture, base: Report) -> None:
        self.ctx = ctx
        self.capture = capture
        self.base = base
        self.made: CompiledCallables | None = None
        #: None until the first call: that one is always sent, so that a program whose process
        #: dies soon after still has its first section in the client's report.
        self.last: float | None = None
        self.interval = LIVE_INTERVAL_S

    def __call__(self, m: Made) -> None:
        if self.made is None or (self.last is not None and time.monotonic() - self.last < self.interval):
            return
        self.last = began = time.monotonic()
        try:
            self._send(m, self.made)
        finally:
            # A live report reads the whole capture: never more than LIVE_SHARE of the run's time.
            self.interval = max(LIVE_INTERVAL_S, (time.monotonic() - began) / LIVE_SHARE)

    def _send(self, m: Made, made: CompiledCallables) -> None:
        try:
            limit = made.bounds.max_calls
            of = f" of {limit}" if limit else ""
            self.ctx.progress(
                "calls", f"running the program: call {made.calls}{of}, {m.name}'s call {m.calls}", made.calls
            )
            early = replace(
                diagnostics.read(self.capture).apply(self.base),
                stage="traced",
                calls=made.calls,
                callables=sections(made),
                notes=tuple(self.ctx.notes),
            )
            self.ctx.emit({"event": "diagnostics", "report": early.to_dict()})
        except Exception:  # noqa: BLE001 - a courtesy must never fail the program
            pass


def _exit_code(code: Any) -> int:
    """sys.exit's argument as the process's exit status, as Python gives it."""
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    return 1  # sys.exit("message") prints it and exits 1


def _raised(exc: BaseException, path: str, made: CompiledCallables) -> tuple[ProgramExit, RunError]:
    line = _program_line(exc, path)
    message = first_line(safe_str(exc)) or type(exc).__name__
    try:
        detail = "".join(traceback.format_exception(exc))[-6000:]
    except Exception:  # noqa: BLE001
        detail = ""
    inside = made.raised_in.get(id(exc))
    kind = "compile" if inside is not None and _from_torch_compiler(exc) else "snippet"
    where = f" in {inside.name} (compiled at line {inside.line})" if inside is not None else ""
    said = message
    if isinstance(exc, EOFError):
        # input() or a read of sys.stdin: the run has no terminal to read from.
        said += " (a program's stdin is empty in the playground: it runs without a terminal)"
    error = RunError(
        kind=kind,
        type=type(exc).__name__,
        message=f"the program raised{where}: {said}",
        line=line,
        detail=detail,
    )
    return ProgramExit(code=1, exception=ProgramException(type(exc).__name__, message, line)), error


def _from_torch_compiler(exc: BaseException) -> bool:
    """Whether torch's compiler raised it (a fullgraph refusal, a backend failure)."""
    try:
        from torch._dynamo.exc import TorchDynamoException

        if isinstance(exc, TorchDynamoException):
            return True
    except ImportError:  # pragma: no cover
        pass
    return type(exc).__module__.startswith(("torch._dynamo", "torch._inductor"))


def _program_line(exc: BaseException, path: str) -> int | None:
    """The innermost line of the program file on the exception's traceback."""
    real = os.path.realpath(path)
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if os.path.realpath(frame.f_code.co_filename) == real:
            line = lineno
    return line


def _mode_note(forced: bool, args: tuple[str, ...], overrides: dict[str, Any], only: str | None) -> str:
    why = (
        "--program asks for it"
        if forced
        else "it calls torch.compile itself, with no `model` or `fn` and `inputs()` to run as a snippet"
    )
    argv = f" with sys.argv[1:] = {list(args)!r}" if args else ""
    over = "every torch.compile call" if only is None else f"{only}'s torch.compile call"
    toggles = (
        f"; toggled over {over}: " + ", ".join(f"{k}={v!r}" for k, v in overrides.items())
        if overrides
        else "; each torch.compile call as the program wrote it"
    )
    return f"program: ran as `python FILE`{argv} ({why}){toggles}"
