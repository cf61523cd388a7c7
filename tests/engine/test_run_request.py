"""The run's request and the worker's handshake, as typed values end to end.

A front end's `RunRequest` is what the worker's `WorkerRequest` reads (through a real worker,
the client's wire and the template's fork), the hello a real template sends is exactly a
`WorkerHello`, both codecs round-trip any value, and nobody between builds or reads either one
by string key.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground.engine.hello import ConfigKey, WorkerHello
from playground.engine.passes import Passes
from playground.engine.report import WireTypeError
from playground.engine.run_request import RunFlags, RunRequest, UnreadableSettings
from playground.engine.settings import Settings
from playground.engine.snippet import PreparedRun, SnippetSource, prepare_run
from playground.engine.sync import SyncWorker
from playground.worker.run.spine.request import MAX_TIMEOUT_S, WorkerRequest

ROOT = Path(__file__).resolve().parents[2]

# --- the codecs, on any value ---------------------------------------------------------------------

_TEXT = st.text(alphabet=string.printable + "é∑\u2028", max_size=40)
_SECONDS = st.floats(min_value=0.001, max_value=3600, allow_nan=False)
_SETTINGS = st.builds(
    Settings,
    fullgraph=st.booleans(),
    dynamic=st.sampled_from([None, True, False]),
    backend=st.sampled_from(["eager", "aot_eager", "inductor"]),
    mode=st.sampled_from([None, "reduce-overhead", "max-autotune"]),
    cold=st.booleans(),
    stance=st.sampled_from(["default", "force_eager"]),
    error_on_graph_break=st.booleans(),
    target=st.sampled_from([None, "model", "fn"]),
)


@st.composite
def _requests(draw: st.DrawFn) -> RunRequest:
    path = "/" + draw(st.text(alphabet=string.ascii_letters + "/_ é", min_size=1, max_size=20)) + ".py"
    sha = draw(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
    source = SnippetSource(path, draw(_TEXT), sha)
    prepared = PreparedRun(path, draw(_SETTINGS), None, sha, source)
    flags = RunFlags(draw(st.booleans()), draw(_SECONDS), draw(st.none() | _SECONDS))
    passes = Passes(draw(st.booleans()), draw(st.booleans()), draw(st.booleans()))
    return RunRequest(prepared, flags, passes, trace=draw(st.booleans()), last=draw(st.booleans()))


_JSON_SCALAR = st.none() | st.booleans() | st.integers(-(2**31), 2**31) | _TEXT
_HELLOS = st.builds(
    WorkerHello,
    torch_version=_TEXT,
    cuda_available=st.booleans(),
    backends=st.lists(_TEXT, max_size=4).map(tuple),
    config_keys=st.lists(st.builds(ConfigKey, name=_TEXT, type=_TEXT, default=_JSON_SCALAR), max_size=4).map(tuple),
    pid=st.integers(0, 2**22),
    python=_TEXT,
    import_s=_SECONDS,
    warm_s=_SECONDS,
    isolation=st.sampled_from(["fork", "none"]),
    fork_ok=st.booleans(),
    threads=st.integers(-1, 512),
    rss_mb=_SECONDS,
)


@settings(max_examples=150, deadline=None)
@given(_requests())
def test_a_request_reads_back_from_its_json_as_the_same_value(request: RunRequest):
    wire = json.loads(json.dumps(request.to_dict()))
    assert RunRequest.from_dict(wire, strict=True) == request
    # The worker's own request wraps it whole, and its pipes carry it whole too.
    worker = WorkerRequest.from_message({"op": "run", "id": 7, **wire, "key": "k"})
    assert worker.run == request and worker.id == 7 and worker.key == "k"
    assert WorkerRequest.from_message(json.loads(json.dumps(worker.to_message()))) == worker


@settings(max_examples=150, deadline=None)
@given(_HELLOS)
def test_a_hello_reads_back_from_its_json_as_the_same_value(hello: WorkerHello):
    assert WorkerHello.from_dict(json.loads(json.dumps({"event": "hello", **hello.to_dict()})), strict=True) == hello


def test_an_older_workers_hello_takes_the_defaults_for_what_it_did_not_send():
    old = WorkerHello.from_dict({"event": "hello", "torch_version": "2.4.0", "pid": 12}, strict=True)
    assert old == WorkerHello(torch_version="2.4.0", pid=12)
    assert old.backends == () and old.config_keys == () and not old.cuda_available


def test_a_hello_of_the_wrong_shape_is_refused_strictly_and_read_leniently():
    bad = {
        "torch_version": "2.13.0",
        "cuda_available": "yes",
        "config_keys": ["x", {"name": "dynamo.a", "type": "bool"}],
    }
    with pytest.raises(WireTypeError):
        WorkerHello.from_dict(bad, strict=True)
    lenient = WorkerHello.from_dict(bad, strict=False)
    assert lenient.config_keys == (ConfigKey("dynamo.a", "bool"),) and lenient.cuda_available is True
    assert WorkerHello.from_dict(["not", "an", "object"], strict=False) == WorkerHello()


def test_a_request_of_the_wrong_type_is_refused_strictly(tmp_path: Path):
    wire = _request(tmp_path).to_dict()
    with pytest.raises(WireTypeError):
        RunRequest.from_dict({**wire, "timing": "no"}, strict=True)
    assert RunRequest.from_dict({**wire, "timing": 0}, strict=False).flags.timing is False  # as bool() reads it


def test_settings_that_do_not_read_are_the_workers_to_report(tmp_path: Path):
    wire = {"op": "run", "id": 3, **_request(tmp_path).to_dict(), "settings": {"dynamic": "sometimes"}}
    with pytest.raises(UnreadableSettings):
        RunRequest.from_dict(wire)
    worker = WorkerRequest.from_message(wire)
    assert worker.settings_problem.startswith("the request's settings could not be read")
    assert worker.run.settings == Settings() and worker.run.path == wire["path"]
    # Handed on to a spare child, the problem goes with it.
    assert (
        WorkerRequest.from_message(json.loads(json.dumps(worker.to_message()))).settings_problem
        == worker.settings_problem
    )


def test_the_worker_makes_a_timeout_and_a_path_it_can_use(tmp_path: Path):
    wire = _request(tmp_path).to_dict()
    assert WorkerRequest.from_message({**wire, "timeout_s": 1e12}).run.flags.timeout_s == MAX_TIMEOUT_S
    assert WorkerRequest.from_message({**wire, "timeout_s": -1}).run.flags.timeout_s is None
    assert math.isfinite(WorkerRequest.from_message({**wire, "min_run_time": float("inf")}).run.flags.min_run_time)
    relative = WorkerRequest.from_message({**wire, "path": "snip.py"}).run
    assert Path(relative.path).is_absolute() and relative.prepared.source.path == relative.path


def test_a_refused_run_is_never_put_on_the_wire(tmp_path: Path):
    missing = RunRequest(prepare_run(tmp_path / "nope.py"))
    bad = tmp_path / "bad.py"
    bad.write_text('SETTINGS = {"backend": 3}\ndef fn(x):\n    return x\n')
    for request in (missing, RunRequest(prepare_run(bad))):
        assert not request.sendable and request.refusal is not None
        with pytest.raises(ValueError, match="never sent"):
            request.to_dict()


def _request(tmp_path: Path, text: str = "def fn(x):\n    return x\n") -> RunRequest:
    path = tmp_path / "snip.py"
    path.write_text(text)
    return RunRequest(prepare_run(path))


# --- through a real worker ------------------------------------------------------------------------

#: A snippet that prints the request its own process was handed: the run's child's WorkerRequest.
ECHO = """
import gc, json
from playground.worker.run.spine.request import WorkerRequest

print("REQUESTS", json.dumps(sorted({json.dumps(o.run.to_dict(), sort_keys=True) for o in gc.get_objects()
                                      if isinstance(o, WorkerRequest)})))

import torch

def fn(x):
    return x + 1

def inputs():
    return [torch.ones(3)]
"""


def test_what_the_client_sends_is_what_the_workers_run_reads_and_the_hello_is_one_value(tmp_path: Path):
    request = dataclasses.replace(
        _request(tmp_path, ECHO),
        flags=RunFlags(timing=False, min_run_time=0.05, timeout_s=60.0),
        passes=Passes(guard_what_if=False),
        last=True,
    )
    request = dataclasses.replace(
        request, prepared=dataclasses.replace(request.prepared, settings=Settings(backend="eager"))
    )
    sent: list[dict[str, Any]] = []
    greetings: list[dict[str, Any]] = []
    with SyncWorker(timeout_s=60) as worker:
        channel = worker.client.channel
        send, greeted = channel.send, channel.greeted

        async def recording_send(message: dict[str, Any]) -> None:
            sent.append(message)
            await send(message)

        def recording_greeted(message: dict[str, Any]) -> WorkerHello:
            greetings.append(dict(message))
            return greeted(message)

        channel.send, channel.greeted = recording_send, recording_greeted  # type: ignore[method-assign]
        report = worker.run(request).report
        hello = worker.client.hello
    assert report.error is None, report.error
    # The client's wire: its own fields around the request's (sent_mono: its send time, where
    # the save's waterfall starts), nothing else.
    (run,) = [m for m in sent if m.get("op") == "run"]
    assert isinstance(run["sent_mono"], float)
    assert {k: v for k, v in run.items() if k not in ("op", "id", "key", "sent_mono")} == request.to_dict()
    # The run's child read it back as the very request the front end made.
    line = next(line for line in report.output.text.splitlines() if line.startswith("REQUESTS "))
    seen = [RunRequest.from_dict(json.loads(one), strict=True) for one in json.loads(line.removeprefix("REQUESTS "))]
    assert seen == [request]
    # The hello the template sent is a WorkerHello, key for key: none the class does not read.
    (raw,) = greetings
    assert raw.pop("event") == "hello" and raw == hello.to_dict() and WorkerHello.from_dict(raw, strict=True) == hello
    assert hello.pid > 0 and hello.torch_version and "inductor" in hello.backends and hello.config_keys


# --- nobody spells them by key -----------------------------------------------------------------

#: Keys only the request's or the hello's wire has. Their other keys are words other wires use
#: too (a report's `settings`, `source` and `torch_version`, a session's `path`, a pane named
#: `dynamo_code`, the report's `kernels`), so a grep for them would find those.
_OWN_KEYS = {
    "min_run_time",
    "timeout_s",
    "guard_what_if",
    "cuda_available",
    "backends",
    "config_keys",
    "import_s",
    "warm_s",
    "fork_ok",
}
#: The codecs themselves may name them.
_CODECS = {ROOT / "playground/engine/run_request.py", ROOT / "playground/engine/hello.py"}


def _sources() -> list[tuple[Path, ast.AST]]:
    files = [*(ROOT / "playground").rglob("*.py"), *(ROOT / "tui").rglob("*.py")]
    return [(f, ast.parse(f.read_text(encoding="utf-8"))) for f in sorted(files) if f not in _CODECS]


def test_no_request_or_hello_is_built_or_read_by_string_key():
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            keys: list[ast.expr | None] = []
            if isinstance(node, ast.Dict):
                keys = list(node.keys)
                # A run message is the request's to_dict with the sender's own fields around it.
                if any(isinstance(k, ast.Constant) and k.value == "op" for k in keys):
                    op = next(v for k, v in zip(keys, node.values) if isinstance(k, ast.Constant) and k.value == "op")
                    if isinstance(op, ast.Constant) and op.value == "run" and None not in keys:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: a run message built by hand")
            elif isinstance(node, ast.Subscript):
                keys = [node.slice]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
            ):
                keys = [node.args[0]]
            for key in keys:
                if isinstance(key, ast.Constant) and key.value in _OWN_KEYS:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {key.value!r}")
    assert not found, found


def test_no_run_takes_loose_options():
    """The engine's, the app's and the command line's runs take a request (the worker's own
    `run` wrappers of a snippet's function pass the snippet's arguments through, as they must)."""
    found = []
    gone = {"run_defaults", "WithRunDefaults", "_Options", "_request"}
    assert not hasattr(Passes, "asked")  # the passes travel as one value, never as keywords
    for path, tree in _sources():
        if path.is_relative_to(ROOT / "playground" / "worker"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "run" and node.args.kwarg:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: run(**{node.args.kwarg.arg})")
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = node.name
            if name in gone:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    assert not found, found


def test_references_forked_after_the_handover_are_read_from_their_folder(tmp_path: Path):
    """The template forks a run's references just after the run has its request and writes
    their pids; the run reads them when it first needs them, and a folder that never gets
    them (a fork that failed before writing) reads as no process, never a wait forever."""
    from playground.worker.run.spine.request import PENDING, PIDS_FILE, ReferenceProcesses

    pending = ReferenceProcesses(str(tmp_path), PENDING, PENDING, -1)
    assert pending.pending
    assert pending.resolved(timeout_s=0.05) == ReferenceProcesses(str(tmp_path), -1, -1, -1)
    (tmp_path / PIDS_FILE).write_text(json.dumps({"eager": 4242, "float64": 4243, "findings": -1}))
    assert pending.resolved() == ReferenceProcesses(str(tmp_path), 4242, 4243, -1)
    # Anything but a positive pid is no process: never 0 (os.kill(0) signals our own group).
    (tmp_path / PIDS_FILE).write_text(json.dumps({"eager": 0, "float64": True, "findings": "7"}))
    assert pending.resolved() == ReferenceProcesses(str(tmp_path), -1, -1, -1)
    (tmp_path / PIDS_FILE).write_text("[1, 2]")
    assert pending.resolved() == ReferenceProcesses(str(tmp_path), -1, -1, -1)
    known = ReferenceProcesses(str(tmp_path), 11, 12, -1)
    assert not known.pending and known.resolved() is known
