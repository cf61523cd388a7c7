"""The reports of runs that ended without a report of their own. Torch-free.

A run may never reach torch (the file cannot be read, its SETTINGS are wrong), or its process
may end first: the child died or timed out (the template lives on), or the template itself
died or stopped answering (the client restarts it on the next run). Each is a typed `Report`
with nothing found and the reason in `error`.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from playground.engine import last_words
from playground.engine.channel import WorkerChannel
from playground.engine.errors import RunCancelled
from playground.engine.events import Progress, RunEnded
from playground.engine.program import ProgramRun
from playground.engine.report import Report, RunError
from playground.engine.settings import Settings
from playground.engine.snippet import snippet_line_in_stack

#: Inlined calls from which a crash while tracing is put down to the depth.
DEEP_TRACE = 200


def failure_report(path: str, settings: Settings, error: RunError | None, torch_version: str = "") -> Report:
    """A report with nothing found yet: the whole report of a run that never reached torch."""
    return Report(torch_version=torch_version, settings=settings, error=error, snippet=str(path))


class RunFailures:
    """How one run sent to the worker ended when no report came: `doing` is the last progress
    message seen, for the sentence that says where it stopped."""

    def __init__(
        self,
        channel: WorkerChannel,
        path: str,
        settings: Settings,
        stderr_mark: int,
        run_id: int | None = None,
        program: ProgramRun | None = None,
    ) -> None:
        self.channel = channel
        self.run_id = run_id
        self.path = path
        self.settings = settings
        self.stderr_mark = stderr_mark
        self.doing = "loading the snippet"
        #: The call of inputs() the run was making, from its last progress event that named one.
        self.call: int | None = None
        #: Where Dynamo was tracing the snippet (its line, and how many calls deep it had
        #: inlined), from the worker's last word on it (playground/worker/process/tracer_watch.py).
        self.tracing: tuple[int, int] | None = None
        #: How the request runs the file as a program (None: a snippet), and its last streamed
        #: report (its sections so far): a program whose process dies keeps them.
        self.program_run = program
        self.program: Report | None = None

    def _torch_version(self) -> str:
        """The version the worker's handshake named ("" before it answered)."""
        return self.channel.hello.torch_version if self.channel.hello is not None else ""

    def progressed(self, progress: Progress) -> None:
        """A progress message of this run: what it was doing, and where Dynamo was, if it said."""
        self.doing = progress.message or self.doing
        if progress.call is not None:
            self.call = progress.call
        if progress.tracing is not None:
            self.tracing = (progress.tracing.line, progress.tracing.depth)
        elif progress.phase != "compiling":
            self.tracing = None

    def diagnosed(self, report: Report) -> None:
        """An early report of this run: a program's is kept, for the report of its death."""
        if report.kind == "program":
            self.program = report

    def _failed(self, error: RunError) -> Report:
        """The report of a run that ended without one: a program keeps the sections it streamed
        (a training loop killed at call 900 still shows its 899 calls), anything else starts bare."""
        if self.program is None:
            report = failure_report(self.path, self.settings, error, self._torch_version())
            if self.program_run is None:
                return report
            return replace(report, kind="program", program=self.program_run)  # died before its first call
        note = "the sections are those the program had streamed when its process ended"
        return replace(
            self.program,
            stage="complete",
            error=error,
            equivalence=None,
            timings=None,
            notes=(*self.program.notes, note),
        )

    async def _report(self, exc_type: str, message: str) -> Report:
        await asyncio.sleep(0.05)  # let the stack dump that preceded the kill arrive on stderr
        stack = self.channel.stderr.since(self.stderr_mark)
        line = snippet_line_in_stack(stack, self.path)
        if line is None and self.tracing is not None:
            line = self.tracing[0]  # a stack dump names only torch's frames while Dynamo traces
        where = f" at line {line}" if line else ""
        error = RunError(
            kind="worker", type=exc_type, message=message.format(where=where), line=line, detail=stack[-4000:]
        )
        return self._failed(error)

    def _snippet_took_its_voice(self) -> Report | None:
        """The run's own last words, when the snippet closed its channel or killed the worker
        (`last_words`): the snippet's error, in the step it was in, not the worker's."""
        words = last_words.read(self.channel.scratch, self.run_id)
        error = last_words.error(words) if words else None
        if error is None:
            return None
        return failure_report(self.path, self.settings, error, self._torch_version())

    async def child_ended(self, ended: RunEnded, timeout: float) -> Report:
        """The template's "ended" message for a run that sent no report; RunCancelled when the
        run was cancelled."""
        outcome = ended.outcome
        if outcome not in ("timeout", "cancelled") and (report := self._snippet_took_its_voice()):
            return report
        if outcome == "timeout":
            return await self._report(
                "Timeout", f"the run timed out after {timeout:g} s while {self.doing}{{where}}; its process was killed"
            )
        if outcome == "cancelled":
            raise RunCancelled()
        if ended.signal is not None:
            sig = ended.signal
            hint = " (SIGKILL from outside is most often the kernel's out-of-memory killer)" if sig == "SIGKILL" else ""
            how = f"was killed by {sig}{hint}"
        elif ended.returncode == 0:
            how = "exited before reporting (the snippet called os._exit?)"
        else:
            how = f"exited with code {ended.returncode}"
        blamed = self._eager_failed_first(ended, how) or self._crashed_in_dynamo(ended)
        if blamed is not None:
            return blamed
        return await self._report("WorkerDied", f"the run's process {how} while {self.doing}{{where}}")

    def _eager_failed_first(self, ended: RunEnded, how: str) -> Report | None:
        """The snippet's error when its eager reference raised on the call the dead run was making
        (or before): a compiled kernel that aborts on an out-of-range index is what eager's
        IndexError looks like once compiled."""
        failed = ended.eager_failed_call
        if ended.eager_error is None or failed is None or (self.call is not None and failed > self.call):
            return None
        error = RunError.from_dict(ended.eager_error)
        report = failure_report(self.path, self.settings, error, self._torch_version())
        note = f"the compiled run's process {how} on call {self.call or failed}, where eager raised too"
        return replace(report, notes=(note,))

    def _crashed_in_dynamo(self, ended: RunEnded) -> Report | None:
        """torch.compile's crash, not ours, when the process died of a fault while Dynamo was
        tracing the snippet: a deep recursion takes Dynamo's tracer past the C stack (a plain
        `python` dies the same way), and the stack dump names only torch's frames."""
        if ended.signal not in ("SIGSEGV", "SIGBUS") or self.tracing is None:
            return None
        line, depth = self.tracing
        deep = f", at least {depth:,} calls deep" if depth > 1 else ""
        why = (
            ": a recursion this deep takes Dynamo's own tracer past the C stack (a fresh python crashes "
            "the same way); make it shallower, or keep it out of the graph with torch.compiler.disable"
            if depth >= DEEP_TRACE
            else ""
        )
        error = RunError(
            kind="compile",
            type="DynamoCrashed",
            message=f"the run's process was killed by {ended.signal} while Dynamo traced line {line}{deep}{why}",
            line=line,
            detail=self.channel.stderr.since(self.stderr_mark)[-4000:],
        )
        return failure_report(self.path, self.settings, error, self._torch_version())

    async def template_died(self) -> tuple[Report, str]:
        """The report, and the reason the next run gives for the fresh worker it starts."""
        how = await self.channel.exit_words()
        report = self._snippet_took_its_voice()
        if report is not None:
            return report, f"the previous worker {how}: the snippet killed it"
        report = await self._report("WorkerDied", f"the worker process {how} while {self.doing}{{where}}")
        return report, f"the previous worker {how} while {self.doing}"

    async def template_stuck(self, timeout: float) -> tuple[Report, str]:
        report = await self._report(
            "Timeout",
            f"the worker stopped answering {timeout:g} s into a run, while {self.doing}{{where}}; it was killed",
        )
        return report, "the previous worker stopped answering"
