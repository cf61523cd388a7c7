"""One experiment: reset, load the snippet fresh, run every call eager and compiled, then
equivalence and timings. Runs inside the worker process (imports torch).

Order matters for honesty: diagnostics first (what torch did), then equivalence (is the
result right), then timings (is it faster) - a speedup of a wrong or half-compiled program
is never reported without its graph and break counts beside it.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

import torch

from playground.engine.report import blank_report
from playground.worker import compat, equivalence, switches, timing
from playground.worker.capture import Capturer, RunCapture, snippet_line_in_text

Emit = Callable[[dict[str, Any]], None]

#: Whether this worker process has already run Inductor: its first use pays one-time costs
#: (imports, the C++ toolchain check, loading compiled modules) that a cache hit does not remove.
_inductor_used = False


class Cancelled(Exception):
    """The client asked to cancel this run (a newer save made it stale)."""


class RunFailure(Exception):
    """Ends the run early with an error the report carries."""

    def __init__(self, kind: str, exc_type: str, message: str, line: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.error = {"kind": kind, "type": exc_type, "message": message, "line": line, "detail": detail}


def _first_line(text: str, limit: int = 300) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def _exception_line(exc: BaseException, path: str) -> int | None:
    """The innermost snippet line in the traceback, else one named in the message (Dynamo
    puts the user's frames into the text of Unsupported/UserError)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == os.path.realpath(path):
            line = frame.lineno
    text_line = snippet_line_in_text(safe_str(exc), path)
    return text_line or line


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - the snippet's own exception class may raise in __str__
        return f"<{type(exc).__name__} whose str() raised>"


def _raised_in_snippet(exc: BaseException, path: str) -> bool:
    """Whether the snippet's own code is on the exception's traceback."""
    target = os.path.realpath(path)
    return any(os.path.realpath(f.filename) == target for f in traceback.extract_tb(exc.__traceback__))


def failure(kind: str, exc: BaseException, path: str, context: str) -> RunFailure:
    message = _first_line(safe_str(exc)) or type(exc).__name__
    try:
        detail = "".join(traceback.format_exception(exc))[-6000:]
    except Exception:  # noqa: BLE001 - format_exception calls the raising __str__ too
        detail = "".join(traceback.format_tb(exc.__traceback__))[-6000:]
    if isinstance(exc, SystemExit):
        message = f"sys.exit({exc.code!r}) called"
    return RunFailure(kind, type(exc).__name__, f"{context}: {message}", _exception_line(exc, path), detail)


def _as_call(call: Any, index: int) -> tuple[Any, ...]:
    if isinstance(call, torch.Tensor):
        call = (call,)
    elif isinstance(call, list):
        call = tuple(call)
    if isinstance(call, tuple):
        for name, leaf in equivalence.leaves(call, "argument"):
            if isinstance(leaf, torch.Tensor) and leaf.device.type == "meta":
                raise RunFailure(
                    "snippet",
                    "MetaTensor",
                    f"call {index} of inputs() holds a meta tensor ({name}): it has no data to run on; "
                    "make real tensors (torch.randn, torch.zeros, …)",
                )
        return call
    raise RunFailure(
        "snippet",
        "TypeError",
        f"call {index} of inputs() is a {type(call).__name__}, not a tuple of arguments or a tensor",
    )


def clone_args(value: Any, device: str | None = None) -> Any:
    """Deep copy of the tensors in a call (leaves keep requires_grad), so that in-place
    mutation in one run cannot leak into the other."""
    if isinstance(value, torch.Tensor):
        t = value.detach().clone()
        if device is not None:
            t = t.to(device)
        if t.is_leaf and (t.is_floating_point() or t.is_complex()):
            t.requires_grad_(value.requires_grad)
        # Python attributes ride along: torch._dynamo.mark_dynamic() stores its marks there.
        t.__dict__.update(value.__dict__)
        return t
    if isinstance(value, tuple):
        return tuple(clone_args(v, device) for v in value)
    if isinstance(value, list):
        return [clone_args(v, device) for v in value]
    if isinstance(value, dict):
        return {k: clone_args(v, device) for k, v in value.items()}
    return value


def _changed(before: Any, after: Any) -> bool:
    for (_, b), (_, a) in zip(equivalence.leaves(before, "input"), equivalence.leaves(after, "input")):
        if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
            if b.shape != a.shape or not torch.equal(b.detach().cpu(), a.detach().cpu()):
                return True
    return False


class _Counted:
    """A callable that counts its calls: a failure during timing names the call."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.fn(*args)


class Experiment:
    """One run of one snippet under one set of settings."""

    def __init__(
        self,
        capturer: Capturer,
        request: dict[str, Any],
        emit: Emit,
        cancelled: Callable[[], bool],
        on_timing_start: Callable[[], None] | None = None,
    ) -> None:
        self.capturer = capturer
        self.request = request
        self.path = os.path.abspath(request["path"])
        self.source: str = request["source"]
        self.settings: dict[str, Any] = dict(request.get("settings") or {})
        self.emit = emit
        self.cancelled = cancelled
        self.on_timing_start = on_timing_start
        self.notes: list[str] = []
        self.capture: RunCapture | None = None
        self.module: types.ModuleType | None = None
        self.calls_total: int | None = None
        self.compile_s: float | None = None
        self.cache_at_first_call: dict[str, int] = {}
        #: Seconds spent in each phase, so a reader can tell torch's time from ours.
        self.phase_s: dict[str, float] = {}
        #: What the run was doing last (a progress message), for errors that name the phase.
        self.phase_message = "loading the snippet"
        #: sys.modules before the snippet ran: what it imported is the difference.
        self.modules_before: set[str] = set()

    # --- plumbing ---------------------------------------------------------------------------

    def progress(self, phase: str, message: str, call: int | None = None) -> None:
        if self.cancelled():
            raise Cancelled()
        self.phase_message = message
        self.emit(
            {
                "event": "progress",
                "phase": phase,
                "call": call,
                "calls": self.calls_total,
                "message": message,
            }
        )

    def _settings_used(self) -> dict[str, Any]:
        s = self.settings
        return {
            "fullgraph": bool(s.get("fullgraph", False)),
            "dynamic": s.get("dynamic"),
            "backend": s.get("backend") or "inductor",
            "mode": s.get("mode"),
            "device": s.get("device") or "cpu",
            "cold": bool(s.get("cold", False)),
            # Torch's own switches (issue 12): applied around the run by playground.worker.switches.
            "config": dict(s.get("config") or {}),
            "stance": s.get("stance") or "default",
            "error_on_graph_break": bool(s.get("error_on_graph_break", False)),
        }

    # --- the run ----------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        started = time.perf_counter()
        settings = self._settings_used()
        self.settings = settings
        report: dict[str, Any] = self._empty_report(settings)
        warning = compat.version_warning()
        if warning:
            self.notes.append(warning)
        if settings["device"].startswith("cuda") and not torch.cuda.is_available():
            report["error"] = {
                "kind": "settings",
                "type": "DeviceUnavailable",
                "message": "device cuda requested but this torch has no CUDA device "
                f"(torch {torch.__version__}, cuda build: {torch.version.cuda or 'none'}); use --device cpu",
                "line": None,
                "detail": "",
            }
            return self._finish(report, started)
        switch_problem = switches.problem(settings)
        if switch_problem is not None:  # a config key this torch lacks, or a value of the wrong type
            report["error"] = {"kind": "settings", "type": "BadConfig", "message": switch_problem, "line": None}
            report["error"]["detail"] = ""
            return self._finish(report, started)
        if settings["backend"] == "inductor":
            self.notes.append(
                "Inductor runs with fallback_random=True so that dropout draws the same numbers as eager; "
                "in a plain script Inductor's RNG differs from eager's"
            )
        if settings["mode"] and settings["backend"] != "inductor":
            self.notes.append(f"mode {settings['mode']} ignored: only the inductor backend takes a mode")
        compat.clear_run_state()
        self.capture = self.capturer.begin(self.path, keep_trace_lines=bool(self.request.get("trace")))
        try:
            with (
                compat.compile_caches_disabled(settings["cold"]),
                compat.deterministic_inductor_rng(),
                switches.applied(settings),
            ):
                self._run_phases(report)
        except RunFailure as failure_:
            report["error"] = failure_.error
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - whoever raised, what was captured stays
            report["error"] = self._unexpected(exc)
        finally:
            self.capturer.end()
            self._fill_diagnostics(report)
            report["local_modules"] = self._local_modules()
            if self.module is not None:
                sys.modules.pop(self.module.__name__, None)
        return self._finish(report, started)

    def _unexpected(self, exc: Exception) -> dict[str, Any]:
        """An exception that no phase turned into a RunFailure: the snippet's when its code is on
        the traceback (a model that raises on its fifth call, during timing), else ours."""
        where = self.phase_message
        if _raised_in_snippet(exc, self.path):
            return failure("snippet", exc, self.path, f"raised while {where}").error
        error = failure("worker", exc, self.path, f"internal error in compile-playground's worker while {where}").error
        return error

    def _local_modules(self) -> list[str]:
        """The files of the modules the snippet imported that are not part of Python, torch or
        an installed package: its helpers, which the app and `watch` also watch."""
        if not self.modules_before:
            return []
        installed = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        installed.add(os.path.realpath(os.path.dirname(os.path.abspath(__file__))))  # playground itself
        found = set()
        for name in set(sys.modules) - self.modules_before:
            module = sys.modules.get(name)
            file = getattr(module, "__file__", None)
            if not isinstance(file, str) or module is self.module:
                continue
            real = os.path.realpath(file)
            if "site-packages" in real or "dist-packages" in real:
                continue
            if any(real.startswith(root + os.sep) for root in installed):
                continue
            found.add(real)
        return sorted(found)

    def _finish(self, report: dict[str, Any], started: float) -> dict[str, Any]:
        report["notes"] = self.notes
        report["duration_s"] = round(time.perf_counter() - started, 4)
        report["stage"] = "complete"
        return report

    def _empty_report(self, settings: dict[str, Any]) -> dict[str, Any]:
        return blank_report(self.path, settings, None, torch.__version__)

    def _fill_diagnostics(self, report: dict[str, Any]) -> None:
        cap = self.capture
        if cap is None:
            return
        breaks, total = cap.graph_breaks()
        recompiles = cap.recompiles()
        limit = cap.recompile_limit()
        codes_by_id: dict[str, list[str]] = {}
        for md, payload in cap.trace:
            if "inductor_output_code" in md and isinstance(payload, str):
                cid = f"{md.get('frame_id')}/{md.get('frame_compile_id')}"
                codes_by_id.setdefault(cid, []).append(payload)
        graphs = []
        for g in cap.graphs:
            g = dict(g)
            codes = codes_by_id.get(g.get("compile_id") or "")
            g["output_code"] = "\n\n# ---- next kernel module ----\n\n".join(codes) if codes else None
            graphs.append(g)
        report.update(
            graph_count=len(cap.graphs),
            graph_breaks=breaks,
            graph_break_count=total,
            recompiles=recompiles,
            recompile_count=len(recompiles),
            recompile_limit_hit=bool(limit),
            recompile_limit_functions=limit,
            guards=cap.guards(),
            logs=cap.logs(),
            graphs=graphs,
        )
        report.update(cap.explained())  # issue 11: why it recompiled (extension fields, explain.py)
        report.update(cap.compile_phases(), **cap.code_fields())  # issue 12: phases, Dynamo's code
        if self.request.get("trace"):
            report["trace_lines"] = cap.trace_lines
            report["trace_strings"] = compat.trace_string_table()

    def _load(self) -> types.ModuleType:
        self.progress("loading", "loading the snippet")
        try:
            code = compile(self.source, self.path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise RunFailure(
                "snippet",
                type(exc).__name__,
                f"{exc.msg} (line {exc.lineno})",
                exc.lineno,
                "".join(traceback.format_exception_only(exc)),
            ) from None
        name = f"compile_playground_snippet_{self.request.get('id', 0)}"
        if not self.request.get("warmup"):
            # As `python snippet.py` does: the snippet's folder first on sys.path, so that it
            # imports its helpers from wherever it is run. (The run's process is thrown away
            # after it, so nothing here needs undoing.)
            sys.path.insert(0, os.path.dirname(self.path))
            self.modules_before = set(sys.modules)
        module = types.ModuleType(name)
        module.__file__ = self.path
        sys.modules[name] = module
        self.module = module
        # Every generator a snippet may draw from starts from the same seed in every run, so that
        # the same bytes print the same numbers (a fresh process seeds Python's from os.urandom).
        torch.manual_seed(0)
        random.seed(0)
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            numpy.random.seed(0)
        try:
            exec(code, module.__dict__)  # noqa: S102 - running the user's snippet is the product
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
            raise failure("snippet", exc, self.path, "the snippet raised while importing") from None
        return module

    def _target(self, module: types.ModuleType) -> tuple[Callable[..., Any], torch.nn.Module | None]:
        ns = module.__dict__
        if "model" in ns:
            model = ns["model"]
            if not isinstance(model, torch.nn.Module):
                raise RunFailure(
                    "snippet",
                    "TypeError",
                    f"`model` must be a torch.nn.Module instance, not {type(model).__name__}",
                )
            return model, model
        if "fn" in ns:
            fn = ns["fn"]
            if not callable(fn):
                raise RunFailure("snippet", "TypeError", f"`fn` is not callable (it is a {type(fn).__name__})")
            return fn, fn if isinstance(fn, torch.nn.Module) else None
        raise RunFailure(
            "snippet",
            "MissingTarget",
            "the snippet defines neither `model` (an nn.Module) nor `fn` (a callable)",
        )

    def _calls(self, module: types.ModuleType) -> Any:
        factory = module.__dict__.get("inputs")
        if factory is None:
            raise RunFailure("snippet", "MissingInputs", "the snippet defines no `inputs()` function")
        if not callable(factory):
            raise RunFailure("snippet", "TypeError", "`inputs` must be a function returning the calls")
        try:
            calls = factory()
        except BaseException as exc:  # noqa: BLE001
            raise failure("snippet", exc, self.path, "inputs() raised") from None
        if isinstance(calls, torch.Tensor):
            calls = [calls]
        try:
            self.calls_total = len(calls)
        except TypeError:
            self.calls_total = None
        try:
            return iter(calls)
        except TypeError:
            raise RunFailure(
                "snippet",
                "TypeError",
                f"inputs() must return an iterable of calls, not {type(calls).__name__}",
            ) from None

    def _backend(self) -> Callable[..., Any]:
        s = self.settings
        mode = s["mode"] if s["backend"] == "inductor" else None
        try:
            real = compat.real_backend(s["backend"], mode, s["dynamic"])
        except Exception as exc:  # noqa: BLE001
            raise RunFailure(
                "settings",
                type(exc).__name__,
                f"backend {s['backend']!r} is not available: {_first_line(str(exc))}",
            ) from None
        capture = self.capture
        assert capture is not None

        def counting_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
            try:
                code = gm.print_readable(print_output=False)
            except Exception:  # noqa: BLE001 - fall back to the plain code
                code = gm.code
            ops = sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))
            capture.graphs.append(
                {
                    "index": len(capture.graphs) + 1,
                    "compile_id": compat.current_compile_id(),
                    "code": code,
                    "op_count": ops,
                }
            )
            return real(gm, example_inputs)

        return counting_backend

    def _run_phases(self, report: dict[str, Any]) -> None:
        global _inductor_used
        self.first_inductor = self.settings["backend"] == "inductor" and not _inductor_used
        if self.settings["backend"] == "inductor":
            _inductor_used = True
        t0 = time.perf_counter()
        module = self._load()
        self.phase_s["load"] = time.perf_counter() - t0
        target, params_owner = self._target(module)
        calls = self._calls(module)
        device = self.settings["device"]
        if isinstance(target, torch.nn.Module) and device != "cpu":
            target.to(device)
        compiled = torch.compile(
            target,
            fullgraph=self.settings["fullgraph"],
            dynamic=self.settings["dynamic"],
            backend=self._backend(),
        )
        records = []
        index = 0
        assert self.capture is not None
        # issue 12: depyf decompiles what Dynamo writes during these calls, when asked for.
        with self.capture.dumping_dynamo_code(bool(self.request.get("dynamo_code"))):
            while True:
                try:
                    raw = next(calls)
                except StopIteration:
                    break
                except BaseException as exc:  # noqa: BLE001 - a generator raising mid-way
                    raise failure(
                        "snippet", exc, self.path, f"inputs() raised while producing call {index + 1}"
                    ) from None
                index += 1
                records.append(self._one_call(index, raw, target, compiled, device, module, params_owner))
        report["calls"] = index
        if index == 0:
            raise RunFailure("snippet", "NoCalls", "inputs() produced no calls: nothing to run")
        self.phase_s["calls"] = time.perf_counter() - t0 - self.phase_s["load"]
        self._fill_diagnostics(report)
        report["phase_s"] = self.phase_s
        diagnostics = dict(report, stage="diagnostics", notes=list(self.notes))
        self.emit({"event": "diagnostics", "report": diagnostics})
        t1 = time.perf_counter()
        report["equivalence"] = self._equivalence(records, module, params_owner)
        self.phase_s["equivalence"] = time.perf_counter() - t1
        if self.request.get("timing", True):
            # Diagnostics and output describe the calls of inputs(); the thousands of timed
            # repetitions would only drown them.
            self.capturer.pause()
            if self.on_timing_start is not None:
                self.on_timing_start()
            t2 = time.perf_counter()
            report["timings"] = self._timings(records[-1], target, compiled, index)
            self.phase_s["timing"] = time.perf_counter() - t2

    def _one_call(
        self,
        index: int,
        raw: Any,
        target: Callable[..., Any],
        compiled: Callable[..., Any],
        device: str,
        module: types.ModuleType,
        owner: torch.nn.Module | None,
    ) -> dict[str, Any]:
        args = _as_call(raw, index)
        snapshot = clone_args(args, device)
        a_eager = clone_args(args, device)
        a_compiled = clone_args(args, device)
        seed = 1234 + index
        self.progress("compiling", f"eager call {index}", index)
        torch.manual_seed(seed)
        try:
            out_eager = target(*a_eager)
        except BaseException as exc:  # noqa: BLE001
            raise failure("snippet", exc, self.path, f"the target raised in eager mode on call {index}") from None
        # Eager's backward runs now, before the compiled forward: a module that updates buffers
        # in place (BatchNorm's running stats) would otherwise invalidate what eager's graph
        # saved, and blame the snippet for our ordering.
        eager_grads = self._eager_grads(index, out_eager, a_eager, module.__dict__.get("loss"), owner)
        self.progress("compiling", f"compiling call {index}", index)
        torch.manual_seed(seed)
        if self.capture is not None:  # issue 11: which compiled entry serves this call
            self.capture.call_started(index, target, a_compiled)
        t0 = time.perf_counter()
        try:
            out_compiled = compiled(*a_compiled)
            timing.synchronize(device)
        except BaseException as exc:  # noqa: BLE001 - eager ran: this is a finding about torch.compile
            raise failure("compile", exc, self.path, f"compiled call {index} raised") from None
        elapsed = time.perf_counter() - t0
        if self.capture is not None:
            self.capture.call_finished(target, a_compiled)
        if index == 1:
            self.compile_s = elapsed
            self.cache_at_first_call = compat.cache_counts()
        return {
            "index": index,
            "eager_grads": eager_grads,
            "snapshot": snapshot,
            "eager_args": a_eager,
            "compiled_args": a_compiled,
            "eager_out": out_eager,
            "compiled_out": out_compiled,
        }

    def _equivalence(
        self, records: list[dict[str, Any]], module: types.ModuleType, params_owner: torch.nn.Module | None
    ) -> dict[str, Any]:
        override, tolerance_notes = equivalence.validate_tolerance(module.__dict__.get("TOLERANCE"))
        self.notes += tolerance_notes
        outputs: list[dict[str, Any]] = []
        grads: list[dict[str, Any]] = []
        self.progress("equivalence", "comparing values")
        for rec in records:
            outputs += equivalence.compare_values(rec["eager_out"], rec["compiled_out"], rec["index"], override)
            if _changed(rec["snapshot"], rec["eager_args"]) or _changed(rec["snapshot"], rec["compiled_args"]):
                outputs += equivalence.compare_values(
                    rec["eager_args"], rec["compiled_args"], rec["index"], override, root="input (mutated)"
                )
        loss_fn = module.__dict__.get("loss")
        grad_note = ""
        for rec in records:
            self.progress("gradients", f"checking gradients of call {rec['index']}", rec["index"])
            got = self._grads_for(rec, loss_fn, params_owner, override)
            if got is None:
                grad_note = "no gradients: nothing in the output requires grad"
                continue
            grads += got
        ok = all(o["ok"] for o in outputs) and all(g["ok"] for g in grads)
        return {"ok": ok, "outputs": outputs, "grads": grads, "note": grad_note if not grads else ""}

    def _loss(self, loss_fn: Any, output: Any, which: str, index: int) -> torch.Tensor | None:
        if loss_fn is None:
            return equivalence.default_loss(output, self.notes)
        try:
            value = loss_fn(output)
        except BaseException as exc:  # noqa: BLE001
            raise failure("snippet", exc, self.path, f"loss() raised on the {which} output of call {index}") from None
        if not isinstance(value, torch.Tensor) or value.numel() != 1:
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise RunFailure(
                "snippet",
                "TypeError",
                f"loss() must return a scalar tensor, got {shape} for call {index}",
            )
        return value if value.requires_grad else None

    def _eager_grads(
        self, index: int, out: Any, args: tuple[Any, ...], loss_fn: Any, owner: torch.nn.Module | None
    ) -> dict[str, torch.Tensor | None] | None:
        """Eager's gradients for one call (None when nothing requires grad)."""
        equivalence.zero_grads(args, owner)
        loss_e = self._loss(loss_fn, out, "eager", index)
        if loss_e is None:
            return None
        try:
            loss_e.reshape(()).backward()
        except BaseException as exc:  # noqa: BLE001
            raise failure("snippet", exc, self.path, f"eager backward of call {index} raised") from None
        grads = equivalence.collect_grads(args, owner)
        # Parameters are shared by the module and its compiled wrapper: clear them between passes.
        equivalence.zero_grads(args, owner)
        return grads

    def _grads_for(
        self, rec: dict[str, Any], loss_fn: Any, owner: torch.nn.Module | None, override: Any
    ) -> list[dict[str, Any]] | None:
        index = rec["index"]
        g_eager = rec["eager_grads"]
        if g_eager is None:
            return None
        equivalence.zero_grads(rec["compiled_args"], owner)
        loss_c = self._loss(loss_fn, rec["compiled_out"], "compiled", index)
        if loss_c is None:
            return [
                {
                    "name": "loss",
                    "call": index,
                    "ok": False,
                    "max_abs": None,
                    "max_rel": None,
                    "note": "compiled output does not require grad",
                }
            ]
        try:
            loss_c.reshape(()).backward()
        except BaseException as exc:  # noqa: BLE001
            raise failure("compile", exc, self.path, f"compiled backward of call {index} raised") from None
        g_compiled = equivalence.collect_grads(rec["compiled_args"], owner)
        equivalence.zero_grads(rec["compiled_args"], owner)
        return equivalence.compare_grads(g_eager, g_compiled, index, override)

    def _timings(
        self, rec: dict[str, Any], target: Callable[..., Any], compiled: Callable[..., Any], index: int
    ) -> dict[str, Any]:
        device = self.settings["device"]
        self.progress("timing", f"timing eager vs compiled on call {index}", index)
        min_run_time = float(self.request.get("min_run_time", 0.2))
        eager_args = clone_args(rec["snapshot"])
        compiled_args = clone_args(rec["snapshot"])
        eager_counted = _Counted(target)
        compiled_counted = _Counted(compiled)
        try:
            steady = timing.steady_state(
                eager_counted, compiled_counted, eager_args, compiled_args, min_run_time=min_run_time, device=device
            )
        except Exception as exc:  # noqa: BLE001 - the timing loop calls the snippet again, many times
            side, counted = ("eager", eager_counted) if compiled_counted.calls == 0 else ("compiled", compiled_counted)
            # The snippet raising by itself (a model that fails on its fifth call) is the snippet's;
            # only the compiled side raising without the snippet's code on the stack is torch.compile's.
            kind = "snippet" if side == "eager" or _raised_in_snippet(exc, self.path) else "compile"
            raise failure(
                kind, exc, self.path, f"raised during timing, {side} call {counted.calls} of the timing loop"
            ) from None
        counts = self.cache_at_first_call
        if self.settings["backend"] != "inductor":
            cache = "n/a"
        elif self.settings["cold"]:
            cache = "disabled"
        else:
            hits = counts.get("fxgraph_hit", 0) + counts.get("autograd_hit", 0)
            misses = counts.get("fxgraph_miss", 0) + counts.get("autograd_miss", 0)
            cache = "hit" if hits and not misses else "miss" if misses and not hits else "partial" if hits else "n/a"
        for key in ("eager_ms", "compiled_ms", "speedup", "eager_iqr_ms", "compiled_iqr_ms"):
            if steady.get(key) is not None and not math.isfinite(steady[key]):
                steady[key] = None
        note = ""
        if self.settings["backend"] == "inductor" and self.first_inductor:
            note = "first Inductor run in this worker: compile_s includes Inductor's one-time start-up"
        return {
            "note": note,
            "compile_s": self.compile_s,
            "device": device,
            "compile_cache": cache,
            "cache_counts": counts,
            "timed_call": index,
            **steady,
        }
