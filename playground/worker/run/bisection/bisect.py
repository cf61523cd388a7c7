"""A bisection: torch's compiler bisector with the playground's verdict as its test.

Run as `python -m playground.worker.run.bisection.bisect SNIPPET [--config KEY=JSON]...`; it writes JSON
lines on stdout (its channel): `progress` events, then one `result`. The bisector's own prints
go elsewhere. Each step of the bisection is a fresh process, forked from this driver (which has
imported torch but never run an op), that loads the snippet, calls it eagerly and compiled with
Inductor, and compares values and gradients with the snippet's tolerance.

What the step's verdict is: every call's output leaves (and, when the output has a gradient,
the parameters' and inputs' gradients of its sum) compared by the run's rule: within
`tolerances.tolerance_for` with the snippet's TOLERANCE, else within the accuracy harness's
tolerance, else compiled's RMS error against a float64 run (a float64 copy of the model, float
inputs cast) at most k x eager's own (equivalence.py's constants). Simpler than a run's
equivalence: no separate reference processes, no built-state digests, no module-state diffs. Unlike a run, Inductor is not given `fallback_random=True` here:
the bisection is about torch.compile as a plain script gets it.
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from playground.engine.bisecting import BisectStep
from playground.worker.run.bisection import bisect_snippet
from playground.worker.run.bisection.bisect_snippet import _leaf_ok, load_snippet, prepared, snippet_settings, target_of
from playground.worker.run.spine import decomp_table

#: Each subsystem whose fix is a config switch, in --config's syntax.
WORKAROUNDS: dict[str, dict[str, Any]] = {
    "fallback_random": {"inductor.fallback_random": True},
    "emulate_precision_casts": {"inductor.emulate_precision_casts": True},
    "layout_optimization": {"inductor.layout_optimization": False},
    "comprehensive_padding": {"inductor.comprehensive_padding": False},
}
#: Subsystems that are Inductor's passes, turned off by name.
PASS_SUBSYSTEMS = ("joint_graph_passes", "post_grad_passes", "pre_grad_passes")
#: Random ops whose decomposition draws other numbers than eager's kernel; with
#: fallback_random=True Inductor keeps torch's own op (measured: GPT-2's native_dropout).
RANDOM_OPS = frozenset(
    {"native_dropout", "dropout", "bernoulli", "bernoulli_", "rand", "rand_like", "randn", "randn_like"}
    | {"randint", "randint_like", "uniform", "uniform_", "normal", "normal_", "exponential", "multinomial"}
)


def workaround(backend: str, subsystem: str | None, debug_info: str | None) -> dict[str, Any] | None:
    name = subsystem.removeprefix("inductor_") if subsystem else None
    if name in WORKAROUNDS:
        return {"config": dict(WORKAROUNDS[name])}
    if name == "decomposition" and _op_name(debug_info) in RANDOM_OPS:
        return {"config": dict(WORKAROUNDS["fallback_random"])}
    if name == "decomposition" and (op := _overload_name(debug_info)):
        # No torch switch drops one decomposition; ours takes it out of Inductor's table.
        return {"config": {decomp_table.KEY: [op]}}
    if subsystem in PASS_SUBSYSTEMS and debug_info:
        return {"config": {"inductor.disabled_passes": debug_info}}
    return None


def _tensors(value: Any) -> list[Any]:
    import torch
    from torch.utils._pytree import tree_leaves

    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _side(module: dict[str, Any], target: Any, compiled: Any, seed: int) -> list[list[Any]]:
    """Each call's output tensors, then its gradients (params and tensor args), detached."""
    import torch

    calls = []
    model = module.get("model")
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    torch.manual_seed(1)
    for index, args in enumerate(_calls(module)):
        args = args if isinstance(args, tuple) else (args,)
        args = tuple(
            a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args
        )
        for p in params:
            p.grad = None
        torch.manual_seed(seed + index)
        out = compiled(*args)
        leaves = _tensors(out)
        grads: list[Any] = []
        floats = [t for t in leaves if t.requires_grad and t.is_floating_point()]
        if floats:
            sum(t.sum() for t in floats).backward()
            grads = [p.grad for p in params] + [a.grad for a in args if isinstance(a, torch.Tensor)]
        calls.append(
            [t.detach().clone() for t in leaves] + [g.detach().clone() if g is not None else None for g in grads]
        )
    return calls


class InputsFailed(Exception):
    """inputs() raised: on the compiled side too it is the snippet's failure, not the compile's."""


def _calls(module: dict[str, Any]) -> Iterator[Any]:
    """inputs()'s calls, what it raises as InputsFailed (the compiled side's exceptions are
    otherwise the compile's)."""
    try:
        made = iter(module["inputs"]())  # an iterable, as the contract has it: a list too
    except BaseException as exc:  # noqa: BLE001 - the user's own, sys.exit too
        raise InputsFailed(str(exc)) from exc
    while True:
        try:
            args = next(made)
        except StopIteration:
            return
        except BaseException as exc:  # noqa: BLE001 - the user's own, sys.exit too
            raise InputsFailed(str(exc)) from exc
        yield args


def _agree(
    eager: list[list[Any]], compiled: list[list[Any]], ref: list[list[Any]] | None, tolerance: dict[str, float] | None
) -> bool:
    if len(eager) != len(compiled):
        return False
    for i, (e_call, c_call) in enumerate(zip(eager, compiled, strict=True)):
        if len(e_call) != len(c_call):
            return False
        r_call = ref[i] if ref is not None and i < len(ref) and len(ref[i]) == len(e_call) else [None] * len(e_call)
        for e, c, r in zip(e_call, c_call, r_call, strict=True):
            if not _leaf_ok(e, c, r, tolerance):
                return False
    return True


def _fp64_side(module: dict[str, Any], target: Any) -> list[list[Any]] | None:
    """The calls in float64 (a float64 copy of the model, float inputs cast), or None."""
    import copy

    import torch

    try:
        wide = copy.deepcopy(target).double() if isinstance(target, torch.nn.Module) else target
        if isinstance(target, torch.nn.Module) and module.get("model") is target:
            module = dict(module, model=wide)
        inputs = module["inputs"]

        def wide_inputs() -> Any:
            for args in inputs():
                args = args if isinstance(args, tuple) else (args,)
                yield tuple(a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)

        return _side(dict(module, inputs=wide_inputs), wide, wide, 7)
    except Exception:  # noqa: BLE001 - no float64 value: the leaf is judged without one
        return None


class StepStopped(Exception):
    """A step that ends the bisection with an error instead of a verdict: its process timed
    out, the snippet failed on its own, or the bisector's state files went while it ran (each
    later step would run plain Inductor, fail, and the bisector would name the backend it stood
    at)."""

    def __init__(self, phase: str, message: str) -> None:
        super().__init__(message)
        self.phase, self.message = phase, message


def at_most(steps: int, where: dict[str, Any]) -> int | None:
    """The most steps the bisection can take, counting this one, once it is halving a range
    (`low..high`, ceil(log2(size)) halvings); None before: until the bisector has counted a
    subsystem's applications, no bound is known."""
    low, high = where.get("low"), where.get("high")
    if where.get("state") != "bisect" or not isinstance(low, int) or not isinstance(high, int) or high < low:
        return None
    return steps - 1 + max(1, math.ceil(math.log2(high - low + 1)))


class SnippetFailed(Exception):
    """The snippet itself failed (loading, no target, its eager run): nothing to bisect."""


def verdict(snippet: str, config: dict[str, Any], compiled_side: bool = True, on_eager: Any = None) -> bool:
    """In this process: True when eager and compiled (Inductor) agree.

    Raises SnippetFailed when the snippet fails before anything is compiled: a bisection of
    that would blame the first backend for the user's own exception."""
    import torch

    torch.manual_seed(0)
    try:
        module, settings, target, tolerance = prepared(snippet, config)
        if target is None or not callable(module.get("inputs")):
            raise SnippetFailed("MissingTarget: the file defines no model or fn with inputs() to bisect")
        eager = _side(module, target, target, 7)
    except SnippetFailed:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's own (sys.exit too), named with its line
        cause = exc.__cause__ if isinstance(exc, InputsFailed) and exc.__cause__ is not None else exc
        raise SnippetFailed(_one_line(cause, snippet)) from cause
    if on_eager is not None:
        on_eager()
    if not compiled_side:
        return True
    kwargs = {k: settings[k] for k in ("fullgraph", "dynamic", "mode") if settings.get(k) is not None}
    compiled_fn = torch.compile(target, backend="inductor", **kwargs)
    try:
        compiled = _side(module, target, compiled_fn, 7)
    except InputsFailed as exc:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        raise SnippetFailed(f"inputs() raised on the compiled run: {_one_line(cause, snippet)}") from cause
    if _agree(eager, compiled, None, tolerance):
        return True
    return _agree(eager, compiled, _fp64_side(module, target), tolerance)


def _op_name(debug_info: str | None) -> str | None:
    """The op a bisect's debug_info names, `<OpOverload(op='aten.sin', ...)>` -> "sin"."""
    if not debug_info:
        return None
    marker = "op='"
    if marker in debug_info:
        qualified = debug_info.split(marker, 1)[1].split("'", 1)[0]
        return qualified.rsplit(".", 1)[-1]
    return None


def _overload_name(debug_info: str | None) -> str | None:
    """The overload a decomposition's debug_info names, `<OpOverload(op='aten.sin',
    overload='default')>` -> "aten.sin.default"; None when it names none."""
    if not debug_info or "op='" not in debug_info:
        return None
    op = debug_info.split("op='", 1)[1].split("'", 1)[0]
    marker = "overload='"
    if marker not in debug_info:
        return op
    overload = debug_info.split(marker, 1)[1].split("'", 1)[0]
    return f"{op}.{overload}"


def op_line(snippet: str, config: dict[str, Any], op: str) -> int | None:
    """In this process: the snippet line of the first FX node Dynamo captured calling `op`
    (by its name), read from the node's stack trace."""
    import torch

    lines: list[int] = []
    path = os.path.abspath(snippet)

    def recorder(gm: Any, _example: Any) -> Any:
        for node in gm.graph.nodes:
            name = getattr(node.target, "__name__", str(node.target))
            if node.op in ("call_function", "call_method") and name == op and not lines:
                trace = node.meta.get("stack_trace") or ""
                for row in trace.splitlines():
                    row = row.strip()
                    if row.startswith(f'File "{path}", line '):
                        lines.append(int(row.split(", line ", 1)[1].split(",", 1)[0]))
        return gm.forward

    module = load_snippet(snippet)
    target = target_of(module, snippet_settings(module))
    compiled = torch.compile(target, backend=recorder)
    for args in module["inputs"]():
        compiled(*(args if isinstance(args, tuple) else (args,)))
        break
    return lines[-1] if lines else None


#: The longest one process of the bisection may take (load, eager, compile, compare): a compile
#: that never ends would otherwise hold the bisection forever. `--timeout S` sets it.
STEP_TIMEOUT_S = 600.0


class StepTimedOut(Exception):
    """A step's process did not answer in time; `eager_done` says whether its eager side had
    finished (then it was the compile that hung)."""

    def __init__(self, eager_done: bool) -> None:
        super().__init__("timed out")
        self.eager_done = eager_done


#: Written by a step's process once its eager side has finished, before its answer.
EAGER_DONE = b"e"


def _in_fresh_fork(work: Any, children: list[int], timeout_s: float = STEP_TIMEOUT_S) -> tuple[bytes, int]:
    """`work(say)`'s bytes, computed in a process forked from here (stdout to /dev/null, default
    signal handlers) and read back on a pipe (`say` writes to it early); the child is on
    `children` while it runs, so a signal kills it. Past `timeout_s` the child is killed and
    StepTimedOut raised. With the bytes, the child's wait status (a signal that killed it)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        answer = b""
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            answer = work(lambda data: os.write(write, data))
        finally:
            os.write(write, answer)
            os._exit(0)
    os.close(write)
    children.append(pid)
    deadline = time.monotonic() + timeout_s
    try:
        data = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                if time.monotonic() < deadline:
                    continue
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise StepTimedOut(data.startswith(EAGER_DONE))
            chunk = os.read(read, 4096)
            if not chunk:
                break
            data += chunk
        status = os.waitpid(pid, 0)[1]
    finally:
        children.remove(pid)
        os.close(read)
    return data, status


def _fresh_line(snippet: str, config: dict[str, Any], op: str, children: list[int]) -> int | None:
    def work(_say: Any) -> bytes:
        try:
            line = op_line(snippet, config, op)
        except BaseException:  # noqa: BLE001 - no line is an answer, not a failure
            return b""
        return str(line).encode() if line is not None else b""

    try:
        data, _ = _in_fresh_fork(work, children)
    except StepTimedOut:
        return None
    return int(data) if data.isdigit() else None


def _fresh_diverging(snippet: str, config: dict[str, Any], children: list[int]) -> dict[str, Any] | None:
    """diverging.py's first diverging op, in a fresh process; None when it could not be found
    (its own failure is not the bisection's)."""

    def work(_say: Any) -> bytes:
        from playground.worker.run.bisection.diverging import first_diverging_op

        try:
            return json.dumps(first_diverging_op(snippet, config), allow_nan=False).encode()
        except BaseException:  # noqa: BLE001 - no answer is an answer, not a failure
            return b""

    try:
        data, _ = _in_fresh_fork(work, children)
        found = json.loads(data) if data else None
    except (StepTimedOut, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _one_line(exc: BaseException, snippet: str) -> str:
    """`Type: message (line N)`, N the snippet's deepest frame in the traceback."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(snippet):
            line = tb.tb_lineno
        tb = tb.tb_next
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
    return f"{text} (line {line})" if line else text


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _fresh_verdict(
    snippet: str, config: dict[str, Any], children: list[int], timeout_s: float = STEP_TIMEOUT_S
) -> bool | tuple[str, str]:
    """The verdict in a fresh process: True or False (agree or not), or (phase, one-line cause)
    when it could not be judged: the snippet itself failed, or its process died during its eager
    run ("snippet"); the compiled run raised or its process died during it ("compile"; for a step
    of the bisection that is a failing step, as in torch's own). Raises StepTimedOut past
    `timeout_s`."""

    def work(say: Any) -> bytes:
        try:
            return b"1" if verdict(snippet, config, on_eager=lambda: say(EAGER_DONE)) else b"0"
        except SnippetFailed as exc:
            return b"S" + str(exc).encode("utf-8", "replace")[:2000]
        except BaseException as exc:  # noqa: BLE001 - the compiled side raised
            return b"C" + _one_line(exc, snippet).encode("utf-8", "replace")[:2000]

    data, status = _in_fresh_fork(work, children, timeout_s)
    eager_done = data.startswith(EAGER_DONE)
    data = data.removeprefix(EAGER_DONE)
    if data[:1] in (b"S", b"C"):
        return ("snippet" if data[:1] == b"S" else "compile", data[1:].decode("utf-8", "replace"))
    if data not in (b"0", b"1"):
        how = (
            f"was killed by {_signal_name(os.WTERMSIG(status))}"
            if os.WIFSIGNALED(status)
            else f"exited with status {os.waitstatus_to_exitcode(status)}"
        )
        # Before its eager side had finished, it was the snippet's own run (os._exit, a signal).
        phase = "compile" if eager_done else "snippet"
        side = "the compiled run" if eager_done else "the snippet's eager run"
        return (phase, f"its process {how} during {side}, without an answer")
    return data == b"1"


def _on_parent_death(sig: int) -> None:
    """prctl(PR_SET_PDEATHSIG, sig) for this process (Linux; elsewhere nothing)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    snippet = argv[0]
    config: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    timeout_s = STEP_TIMEOUT_S
    parent = os.getppid()
    for i, arg in enumerate(argv):
        if arg == "--config":
            key, _, raw = argv[i + 1].partition("=")
            config[key] = json.loads(raw)
        elif arg == "--timeout":
            timeout_s = float(argv[i + 1])
        elif arg == "--parent":
            parent = int(argv[i + 1])
        elif arg == "--setting":
            key, _, raw = argv[i + 1].partition("=")
            settings[key] = json.loads(raw)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    # The bisector prints to stdout (its cleanup too, after the redirect in compat), and so may
    # the snippet: never onto our channel, nor onto the user's terminal.
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    children: list[int] = []
    made: list[str] = []

    def stop(signum: int, _frame: Any) -> None:
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    # Made once the handlers are in place, so that a signal never leaves it behind.
    state = tempfile.mkdtemp(prefix="compile-playground-bisect-")
    made.append(state)
    # Its own process group (so that a cancel kills every step): a front end killed outright
    # (SIGKILL, a closed terminal) signals nothing, so the kernel's parent-death signal does.
    _on_parent_death(signal.SIGTERM)
    if os.getppid() != parent:  # it went before the kernel could be asked
        stop(signal.SIGTERM, None)

    def send(obj: dict[str, Any]) -> None:
        channel.write(json.dumps(obj) + "\n")

    from playground.worker.run.spine.switches import SwitchError, checked_config

    try:
        config = {f"{module}.{name}": value for module, name, value in checked_config(config)}
    except SwitchError as exc:  # --config's own problem, said before anything runs
        shutil.rmtree(state, ignore_errors=True)
        send({"event": "error", "phase": "settings", "message": str(exc)})
        return 0
    unknown = sorted(set(settings) - set(bisect_snippet.SETTING_KEYS))
    if unknown:
        shutil.rmtree(state, ignore_errors=True)
        keys = ", ".join(bisect_snippet.SETTING_KEYS)
        send({"event": "error", "phase": "settings", "message": f"no setting {unknown[0]!r} for a bisection ({keys})"})
        return 0
    bisect_snippet.OVERRIDES.update(settings)
    steps = [0]
    try:
        first = _fresh_verdict(snippet, config, children, timeout_s)
    except StepTimedOut as exc:
        shutil.rmtree(state, ignore_errors=True)
        what = "the compiled run" if exc.eager_done else "the snippet's eager run"
        phase = "compile" if exc.eager_done else "snippet"
        send({"event": "error", "phase": phase, "message": f"{what} did not finish in {timeout_s:g} s"})
        return 0
    if isinstance(first, tuple):
        # A compiled run that raises before any value is compared is not a wrong value: bisecting
        # it named backend eager (every step raised), whatever the cause.
        shutil.rmtree(state, ignore_errors=True)
        phase, message = first
        if phase == "compile":
            message = f"the compiled run raised before any value was compared: {message}"
        send({"event": "error", "phase": phase, "message": message})
        return 0
    if first:
        shutil.rmtree(state, ignore_errors=True)
        send({"event": "result", "bisection": None, "reason": "eager and compiled (inductor) agree", "steps": 1})
        return 0

    from playground.worker import compat
    from playground.worker.compat.bisector import bisect_status_file

    def test() -> bool:
        steps[0] += 1
        where = compat.bisect_progress()
        send({"event": "progress", "steps": steps[0], "at_most": at_most(steps[0], where), **where})
        try:
            judged = _fresh_verdict(snippet, config, children, timeout_s)
        except StepTimedOut as exc:
            raise StepStopped(
                "compile" if exc.eager_done else "snippet",
                f"step {steps[0]} ({BisectStep.from_event(where).words()}) did not finish in {timeout_s:g} s",
            ) from exc
        if not os.path.exists(bisect_status_file()):
            raise StepStopped(
                "worker",
                f"the bisection's state in {state} was removed while it ran (a cleaner of the "
                "temporary folder?): its answer would blame the wrong backend",
            )
        if isinstance(judged, tuple) and judged[0] == "snippet":
            # Its eager side failed on its own after passing the first verdict (randomness, a
            # file it reads): a bisection would blame the backend it stood at.
            raise StepStopped("snippet", f"the snippet failed on its own at step {steps[0]}: {judged[1]}")
        # A compiled run that raises or dies fails the step, as in torch's own bisector.
        return judged is True

    try:
        found = compat.bisect_in(state, test)
    except StepStopped as exc:
        send({"event": "error", "phase": exc.phase, "message": exc.message})
        return 0
    finally:
        shutil.rmtree(state, ignore_errors=True)
    if found is None:
        send(
            {
                "event": "result",
                "bisection": None,
                "reason": "the failure did not reproduce under the bisector",
                "steps": steps[0],
            }
        )
        return 0
    op = _op_name(found["debug_info"])
    found["line"] = _fresh_line(snippet, config, op, children) if op else None
    found["workaround"] = workaround(found["backend"], found["subsystem"], found["debug_info"])
    found["steps"] = steps[0]
    found["first_diverging_op"] = _fresh_diverging(snippet, config, children)
    send({"event": "result", "bisection": found})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
