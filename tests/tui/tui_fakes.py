"""A fake engine with the WorkerClient's async API, answering from rules or canned reports.

The rules stand in for torch just enough to drive the UI: a line containing `.sum() > 0`
is a graph break (a refusal under fullgraph), `SHAPES` in the file means three input
shapes (recompiles depending on dynamic), `CRASH` kills the "worker" once. A run asked for
with `trace=True` returns a canned structured trace.

`respond` functions write contract dicts (what a worker would send); the engine hands the app
what the real client does: typed events and a `RunResult` made with `Report.from_dict`.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playground.engine.errors import RunCancelled
from playground.engine.events import DiagnosticsEvent, EventHandler, ProgressEvent, RestartEvent, RunResult, Trace
from playground.engine.report import Report
from playground.engine.settings import Settings
from playground.engine.snippet import PreparedRun

FIXTURES = Path(__file__).parent / "fixtures"

HELLO = {
    "torch_version": "2.13.0+cpu",
    "cuda_available": False,
    "backends": ["cudagraphs", "eager", "inductor", "aot_eager", "tvm"],
    "pid": 4242,
}


#: What a trace run brings back besides its report.
TRACE = Trace(
    lines=('V0101 00:00:00.000000 0 fake.py:1] {"dynamo_start": {"stack": []}}',),
    strings=(("branch.py", 0),),
)


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def base_report(text: str, settings: Settings) -> dict[str, Any]:
    return {
        "torch_version": HELLO["torch_version"],
        "settings": settings.to_dict(),
        "stage": "complete",
        "content_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "calls": 1,
        "graph_count": 1,
        "graph_breaks": [],
        "graph_break_count": 0,
        "recompiles": [],
        "recompile_count": 0,
        "recompile_limit_hit": False,
        "guards": [{"compile_id": "0/0", "function": "fn", "guards": ["GLOBAL_STATE: ok"]}],
        "error": None,
        "equivalence": {"ok": True, "outputs": [{"name": "output", "max_abs": 0.0, "ok": True}]},
        "timings": {"compile_s": 0.04, "eager_ms": 0.02, "compiled_ms": 0.01, "speedup": 2.0},
        "logs": {"graph_breaks": "", "recompiles": "", "guards": ""},
        "output": {"text": "", "bytes": 0, "truncated": False},
        "duration_s": 0.5,
    }


def rule_report(text: str, settings: Settings) -> dict[str, Any]:
    """What a tiny torch would say about `text` under `settings`."""
    report = base_report(text, settings)
    break_lines = [n for n, line in enumerate(text.splitlines(), 1) if ".sum() > 0" in line]
    if break_lines and settings.fullgraph:
        report.update(
            graph_count=0,
            equivalence=None,
            timings=None,
            error={
                "kind": "compile",
                "type": "Unsupported",
                "message": "Data-dependent branching",
                "line": break_lines[0],
                # What the worker reads from torch's text (playground/worker/capture/refusals.py).
                "refused": {"reason": "Data-dependent branching", "line": break_lines[0], "count": 1},
            },
        )
        return report
    if break_lines:
        report["graph_count"] = 2
        report["graph_break_count"] = len(break_lines)
        report["graph_breaks"] = [
            {"reason": "Data-dependent branching", "hint": "use torch.cond", "line": n, "count": 1} for n in break_lines
        ]
    if "SHAPES" in text:
        extra = {None: 1, False: 2, True: 0}[settings.dynamic]
        report["graph_count"] += extra
        report["recompile_count"] = extra
        report["recompiles"] = [
            {"function": "fn", "compile_id": f"0/{k + 1}", "reasons": [f"0/{k}: tensor 'x' size mismatch"]}
            for k in range(extra)
        ]
    return report


class FakeEngine:
    """Records every run; `respond` builds the report; `gate` (if set) holds runs until set."""

    def __init__(
        self,
        respond: Callable[[str, Settings], dict[str, Any]] = rule_report,
        *,
        hello: dict[str, Any] | None = None,
        calls: int = 2,
    ) -> None:
        self.respond = respond
        self.hello: dict[str, Any] | None = None
        self._hello = dict(hello or HELLO)
        self.calls = calls
        self.runs: list[tuple[str, Settings]] = []
        #: The keyword options of each run (trace, timing, min_run_time), in order.
        self.options: list[dict[str, Any]] = []
        self.prepared: list[PreparedRun | None] = []
        self.cancels = 0
        self.closed = False
        self.crash_next = False
        self.gate: asyncio.Event | None = None
        self._cancel = asyncio.Event()

    async def start(self) -> dict[str, Any]:
        await asyncio.sleep(0)
        self.hello = self._hello
        return self.hello

    async def run(
        self,
        path: str,
        settings: Settings,
        on_event: EventHandler | None = None,
        **options: Any,
    ) -> RunResult:
        emit = on_event or (lambda event: None)
        text = Path(path).read_text()
        self.runs.append((text, settings))
        # The app sends the snippet as it read it for every run; the options recorded are the
        # ones a run asks for (trace, dynamo_code).
        self.prepared.append(options.pop("prepared", None))
        self.options.append(options)
        self._cancel = asyncio.Event()
        for call in range(1, self.calls + 1):
            emit(ProgressEvent("compiling", call, self.calls, ""))
            await asyncio.sleep(0)
        if self.gate is not None:
            waiter = asyncio.ensure_future(self.gate.wait())
            cancelled = asyncio.ensure_future(self._cancel.wait())
            await asyncio.wait({waiter, cancelled}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            cancelled.cancel()
        if self._cancel.is_set():
            raise RunCancelled()
        if self.crash_next or "CRASH" in text and len(self.runs) == 1:
            self.crash_next = False
            emit(RestartEvent("worker exited with signal 9"))
            report = base_report(text, settings)
            report.update(
                graph_count=0,
                equivalence=None,
                timings=None,
                worker_restarted=True,
                error={"kind": "worker", "type": "WorkerDied", "message": "worker exited with signal 9"},
            )
            return RunResult(Report.from_dict(report))
        report = self.respond(text, settings)
        trace = TRACE if options.get("trace") else None
        diagnostics = copy.deepcopy(report)
        diagnostics.update(stage="diagnostics", equivalence=None, timings=None)
        emit(DiagnosticsEvent(Report.from_dict(diagnostics)))
        await asyncio.sleep(0)
        return RunResult(Report.from_dict(report), trace)

    async def cancel(self) -> None:
        self.cancels += 1
        self._cancel.set()

    async def close(self) -> None:
        self.closed = True


def canned(name: str) -> Callable[[str, Settings], dict[str, Any]]:
    """A respond function that returns one fixture report whatever runs."""
    report = load_fixture(name)
    return lambda text, settings: copy.deepcopy(report)


async def settle(pilot, timeout: float = 5.0) -> None:
    """Wait until the app has no run in flight and every posted message is handled."""
    import time

    app = pilot.app
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause()
        busy = [w for w in app.workers if not w.is_finished]
        kind = app.main.view.run.kind
        if not busy and kind not in ("starting", "queued", "running"):
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise AssertionError(f"the app did not settle: {app.main.view.run}")


def plain(renderable, width: int = 100) -> str:
    """A Rich renderable as the plain text a monochrome terminal would show."""
    from rich.console import Console

    console = Console(width=width, color_system=None, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def pane_text(app, pane: str) -> str:
    """The plain text a tab pane shows right now (in the deck, shown or not)."""
    return plain(app.main.deck.body(pane))


def bar_text(app, bar: str = "summary") -> str:
    return plain(app.main.query_one(f"#{bar}").content, width=200)


def snapshot_app(respond: Any, snippet: str = "branch.py") -> Any:
    """The app as every snapshot test builds it: a fake engine answering with `respond`, the
    fixture snippet, no watcher, a fixed clock."""
    from tui.factory import make_app

    return make_app(FIXTURES / snippet, engine=FakeEngine(respond), watch=False, clock=lambda: 0.0)


def pressing(*keys: str) -> Any:
    """A snap_compare run_before that lets the first run finish, presses `keys` one by one and
    lets each settle."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before
