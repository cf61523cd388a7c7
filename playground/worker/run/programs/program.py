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
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from playground.engine.program import callable_key, matches
from playground.engine.report import (
    CompiledCallable,
    ProgramExit,
    Report,
    Stopped,
)
from playground.engine.report.timings import TorchBenchmark
from playground.worker.capture import diagnostics
from playground.worker.capture.records import RunCapture
from playground.worker.run import ranks
from playground.worker.run.compare.reference import References
from playground.worker.run.programs import program_bench, program_compare, program_reference
from playground.worker.run.programs.live import Live
from playground.worker.run.programs.made import (
    Bounds,
    Unseen,
)
from playground.worker.run.programs.program_compiles import (
    TOGGLABLE,
    CompiledCallables,
)
from playground.worker.run.programs.program_exit import Ended, ended
from playground.worker.run.programs.program_reference import our_files
from playground.worker.run.programs.sections import sections
from playground.worker.run.programs.stops import (
    Alarm,
    AtExitPatch,
    OsExitPatch,
    PythonsSigint,
    flush_open_files,
    program_seconds,
)
from playground.worker.run.spine import decomp_table, loading
from playground.worker.run.spine.context import RunContext


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
    live = Live(ctx, capture, base)
    recorder = program_reference.Recorder(budget=program_reference.compare_calls(ctx.request), device=settings.device)
    made = CompiledCallables(
        capture, path, settings.device, overrides, bounds, on_call=live, only=program.only, on_return=recorder
    )
    live.made = made
    # torch's own benchmark beside the program's times: only where the run times (a collective in
    # a callable, across ranks, would wait for ranks that time other counts).
    made.keep_steady = ctx.request.run.flags.timing and ctx.request.rank is None
    ctx.notes.append(_mode_note(program.forced, program.args, overrides, program.only))
    ctx.progress("loading", "running the program")
    scope = loading.SnippetScope(path, "__main__", not ctx.request.warmup)
    saved_main = sys.modules.get("__main__")
    code = loading.compiled_source(ctx)
    end, program_s = _run_file(made, recorder, code, scope.open(), [program.argv0 or path, *program.args], seconds)
    failed_rank = _failed_across_ranks(ctx, end, recorder)
    if end.stopped is not None and by_timeout and end.stopped.by == "max_seconds":
        ctx.notes.append(
            f"program: no --max-seconds, so it was bounded at {seconds:g} s, a third of the run's "
            "timeout (the eager reference runs it again after): --max-seconds or --timeout sets it"
        )
    _stopped_though_caught(ctx, made, end)
    try:
        found = diagnostics.read(capture).apply(base)
        found_sections = sections(made)
        # Read while the program's module is still __main__: what its callables returned may
        # hold instances of its own classes, which unpickle only there.
        began = time.perf_counter()
        # Before the reference starts: torch's figure alone on the machine, as the program's were.
        benchmarks = _benchmarks(ctx, made)
        bench_s = time.perf_counter() - began
        began = time.perf_counter()
        compared = None if failed_rank else _against_eager(ctx, found, found_sections, made, recorder)
        eager_s = time.perf_counter() - began
    finally:
        local_modules = scope.close()
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    if table := decomp_table.note():
        ctx.notes.append(table)
    if compared is not None:
        # --no-timing: the program's own calls were timed (a perf_counter each side), but no
        # steady-state figure is shown where the user turned timings off.
        timed = compared.timings if ctx.request.run.flags.timing else {}
        compared.timings = {i: program_bench.beside(t, benchmarks.get(i)) for i, t in timed.items()}
        found_sections = tuple(program_compare.with_comparison(s, compared) for s in found_sections)
        ctx.notes.extend(compared.notes)
    if program.only is not None and not any(matches(program.only, m.name, m.index) for m in made.made):
        names = [m.name for m in made.made]
        keys = ", ".join(callable_key(m.name, m.index, names) for m in made.made) or "none"
        ctx.notes.append(f"program: no compiled callable is {program.only!r}, so nothing was toggled (made: {keys})")
    return replace(
        found,
        calls=made.calls,
        error=end.error,
        callables=found_sections,
        stopped=end.stopped,
        program_exit=end.exit,
        local_modules=tuple(local_modules),
        equivalence=compared.total if compared is not None else None,
        # The program's own run (what `python FILE` would take, less its start and imports),
        # and its eager reference run with the comparison.
        phase_s=MappingProxyType(
            {"program": round(program_s, 4), "benchmark": round(bench_s, 4), "reference": round(eager_s, 4)}
        ),
    )


def _run_file(
    made: CompiledCallables,
    recorder: program_reference.Recorder,
    code: Any,
    module: Any,
    argv: list[str],
    seconds: float | None,
) -> tuple[Ended, float]:
    """The program's code run as `__main__` with `argv`, under our patches (torch.compile,
    Tensor.backward, os._exit, atexit, SIGINT's handler, the alarm), all taken off again; how it ended, and the
    seconds it ran (its exit functions included)."""
    saved_argv = sys.argv
    sys.argv = argv
    made.install()
    backward = program_reference.BackwardPatch(made, recorder)
    backward.install()
    exits = OsExitPatch()
    exits.install()
    at_exit = AtExitPatch()
    at_exit.install()
    sigint = PythonsSigint()
    sigint.install()
    timer = Alarm(seconds, made.keep)
    began = time.perf_counter()
    end = Ended(ProgramExit(code=0))
    try:
        loading.seed_everything()
        with Unseen(*our_files()), timer:
            loading.run_code(code, module)
    except BaseException as exc:  # noqa: BLE001 - the program's exception is its report
        end = ended(exc, made.path, made)
    finally:
        timer.cancel()
        at_exit.uninstall()
        if not end.os_exited:  # os._exit skips the exit functions, in python too
            with Unseen(*our_files()):
                at_exit.run()
            flush_open_files()
        sigint.uninstall()
        exits.uninstall()
        backward.uninstall()
        made.uninstall()
        sys.argv = saved_argv
    return end, time.perf_counter() - began


def _stopped_though_caught(ctx: RunContext, made: CompiledCallables, end: Ended) -> None:
    """The program caught the stop (a bare `except:`) and went on or ended otherwise: it was
    stopped all the same, and each later call of a compiled callable raised it again."""
    if made.stopped is None or end.stopped is not None:
        return
    end.stopped = Stopped(by=made.stopped.by, at=made.stopped.at)
    ctx.notes.append(
        "program: it caught the playground's stop (a bare `except:` or `except BaseException`) and went "
        "on; every later call of a compiled callable raised it again"
    )
    if end.error is None:
        end.exit = ProgramExit(code=None)


def _benchmarks(ctx: RunContext, made: CompiledCallables) -> dict[int, TorchBenchmark]:
    """torch.utils.benchmark's figure for each callable's newest steady call (program_bench.py)."""
    if not made.keep_steady or not any(m.steady is not None for m in made.made):
        return {}
    ctx.progress("timing", "torch.utils.benchmark on each callable's last steady call")
    return program_bench.measure(made.made)


def _failed_across_ranks(ctx: RunContext, end: Ended, recorder: program_reference.Recorder) -> bool:
    """Whether this rank of a run across ranks failed (its program would exit non-zero), said to
    the template so that it stops the other ranks, as torchrun stops them. Its eager reference is
    then not run: it would wait in the references' group for ranks that never come."""
    if ctx.request.rank is None or end.exit.code in (0, None):
        return False
    ranks.say_failed(ctx.request.rank, end.error.message if end.error is not None else "")
    if recorder.calls:
        ctx.notes.append(
            "program: not compared with eager: the program failed on this rank, which ends the run across "
            "ranks as it ends torchrun's job (the other ranks' eager runs would never come)"
        )
    return True


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
    if not getattr(ctx.request.run.program, "compare_calls", None):
        recorder.fit_to_time()
    program_reference.write_plan(
        os.path.join(ctx.request.references.folder, "eager.plan"), recorder.last_kept(), recorder.budget
    )
    references.start()
    ctx.progress("reference", f"the program again under {program_reference.STANCE}")
    eager = references.eager()
    if eager.note and not eager.program_calls:
        ctx.notes.append(f"program: nothing compared: {eager.note}")
        return None
    return program_compare.compare(made.made, recorder, eager.program_calls, eager.note)


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
