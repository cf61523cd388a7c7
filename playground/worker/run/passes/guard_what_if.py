"""The guard what-if: what torch's unsafe guard switches would save the timed call, measured on
request after the timing and the other passes, never applied to the run itself.

Two switches, both from torch.compiler, both named unsafe by torch:
- a guard filter (`options={"guard_filter_fn": ...}`), applied at compile time: the target is
  recompiled under it (`reset()`, the same calls of inputs() with their recorded arguments,
  forward only), and its entries are compared with the run's own. For a module, torch's
  `skip_guard_on_inbuilt_nn_modules_unsafe` (its docstring: most users never modify the
  attributes of torch's own modules); for a function, `skip_guard_on_globals_unsafe`: the only
  filter that drops what the program's code reads rather than its arguments or torch's state
  (measured on the gallery: it drops the guards on `torch` and on global helpers and
  constants; the nn-module filters drop nothing on a function, and the tensor and portable
  filters drop the guards on Python arguments and grad mode, which change between calls).
- `set_stance(skip_guard_eval_unsafe=True)`, no recompile: only the guards that tell the cache
  entries apart are checked, none with one entry. Its cost is the profiler's cache lookup
  (`check()` still evaluates every guard, so guard_cost's timing cannot see it).

The filter the recompile runs asks every other filter torch ships about the same guards, so
what each would drop is counted without compiling again.
The run's report is final before this starts: the capture is paused, and the recompile uses the
backend itself, not the counting one, so nothing here reaches the run's graphs, breaks, guards
or recompiles. Worker-side.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import torch

from playground.engine.report import FilterPreview, GuardWhatIf
from playground.engine.settings import Settings
from playground.worker import compat
from playground.worker.capture.explain import user_name
from playground.worker.run.compare import tensor_diff
from playground.worker.run.spine.calls import CallsDone, clone_args
from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.failures import Cancelled, first_line
from playground.worker.run.spine.leaves import leaves
from playground.worker.run.spine.module_state import StateTracker
from playground.worker.run.timing.guard_cost import check_sequence

MODULE_FILTER = "skip_guard_on_inbuilt_nn_modules_unsafe"
FUNCTION_FILTER = "skip_guard_on_globals_unsafe"
MARKER = "compile_playground.guard_what_if"
#: The compiled call is timed in BLOCKS blocks of about BLOCK_S each (one call at least).
BLOCKS, BLOCK_S = 9, 0.01
#: The profiled pass for the cache lookup aims at this long, within MIN_CALLS..MAX_CALLS calls.
PASS_S = 0.2
MIN_CALLS, MAX_CALLS = 5, 20
#: Sources named in the report (the count is always whole).
SOURCES_SHOWN = 8
#: The recompile is started only while the run's timeout leaves this many times what the run's
#: own calls took, plus MARGIN_S.
RECOMPILE_FACTOR, MARGIN_S = 2.0, 1.0


class _Stop(Exception):
    """A part of the what-if that cannot go on: its message is the report's note."""


def what_if(
    ctx: RunContext,
    done: CallsDone,
    target: Any,
    tracker: StateTracker | None,
    *,
    calls_s: float,
    deadline: float | None,
    on_output: Callable[[], None] | None = None,
) -> GuardWhatIf:
    """Measure the what-if for the last call of inputs(); every failure is a note in the value,
    beside what was measured before it, never the run's. `calls_s`: what the run's own calls
    took (a recompile costs about as much); `deadline`: perf_counter time past which nothing new
    starts (the run's timeout)."""
    measure = _Measure(ctx, done, target, tracker, calls_s, deadline, on_output)
    try:
        return measure.run()
    except _Stop as stop:
        return replace(measure.found, note=str(stop))
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - a what-if never fails the run
        return replace(measure.found, note=f"the what-if stopped: {type(exc).__name__}: {first_line(str(exc))}")


class _Measure:
    """One what-if, step by step; `found` holds what the steps so far measured."""

    def __init__(
        self,
        ctx: RunContext,
        done: CallsDone,
        target: Any,
        tracker: StateTracker | None,
        calls_s: float,
        deadline: float | None,
        on_output: Callable[[], None] | None,
    ) -> None:
        self.ctx, self.done, self.target, self.tracker = ctx, done, target, tracker
        self.calls_s, self.deadline, self.on_output = calls_s, deadline, on_output
        self.record = done.records[-1]
        module = isinstance(target, torch.nn.Module)
        self.found = GuardWhatIf(
            timed_call=self.record.index,
            target="module" if module else "function",
            filter=MODULE_FILTER if module else FUNCTION_FILTER,
        )

    def note(self, **values: Any) -> None:
        self.found = replace(self.found, **values)

    def run(self) -> GuardWhatIf:
        ctx, done, record = self.ctx, self.done, self.record
        chosen = compat.guard_filter(self.found.filter)
        if chosen is None:
            raise _Stop(f"this torch has no torch.compiler.{self.found.filter}")
        code, entries, args, f_locals, before = self._the_runs_entries()
        if self.on_output is not None:
            self.on_output()  # the profiler's own lines and the snippet's prints are not the run's output
        state = _Followed(self.tracker)
        t0 = time.perf_counter()
        out_before = _seeded(done.compiled, record.snapshot, record.index)
        budget = _Budget(self.deadline, time.perf_counter() - t0)

        def plain() -> None:
            done.compiled(*args)

        call_before, calls, lookup_before = self._time_the_runs_entries(plain, budget)
        if len(compat.cache_entries(code)) != len(entries):
            raise _Stop("the what-if's own calls compiled again: no figure after this is the run's")
        self.note(stance_probe_stale=_stance_probe(ctx.settings))
        compiled = self._recompiled_under_filter(chosen, code, f_locals, before, budget)
        state.restore()
        out_after = _seeded(compiled, record.snapshot, record.index)
        agree, max_abs = _same(out_before, out_after)
        self.note(outputs_agree=agree, output_max_abs=max_abs)

        def filtered() -> None:
            compiled(*args)

        (call_after,) = _per_call(filtered)
        lookup_after = _lookup(filtered, calls, ctx.settings.device)
        self.note(
            call_us_after=_us(call_after[0]),
            call_noise_us=_us(max(call_before[1], call_after[1])),
            lookup_us_after=lookup_after[0],
            lookup_noise_us=round(max(lookup_before[1], lookup_after[1]), 3),
        )
        return self.found

    def _the_runs_entries(self) -> tuple[Any, list[Any], tuple[Any, ...], dict[str, Any], Any]:
        """The target's entries, the timed call's arguments as its locals, and which entry passes."""
        code = compat.target_code(self.target)
        entries = compat.cache_entries(code)
        if not entries:
            raise _Stop(
                "the target's own frame has no compiled entry (nothing compiled, or a break made torch skip it): "
                "nothing to filter"
            )
        args = clone_args(self.record.snapshot)
        f_locals = compat.guard_locals(self.target, args)
        if f_locals is None:
            raise _Stop("the call's arguments do not bind to the target's signature")
        self.ctx.progress("timing", "guard what-if: the run's own guards", self.record.index)
        before = check_sequence(entries, f_locals)
        self.note(
            entries_before=len(entries),
            guards_before=_guards(entries, before.passed),
            check_us_before=_us(before.seconds),
        )
        if before.passed is None:
            raise _Stop(
                "no entry of the run passes the timed call's arguments (it recompiled or ran eagerly): "
                "nothing to compare"
            )
        return code, entries, args, f_locals, before

    def _time_the_runs_entries(self, plain: Callable[[], None], budget: _Budget) -> tuple[Any, int, Any]:
        """The run's own entries per call and per guard lookup, with and without the stance."""
        settings = self.ctx.settings
        budget.need(budget.timed(2) + budget.profiled(2), "timing the run's own entries")
        # The first profile in a process runs slower: a short pass first, whose figures are dropped.
        compat.profiled(plain, MIN_CALLS, settings.device, MARKER)
        try:
            # The run's entries with and without the stance, in alternating blocks (the stance
            # set once a block): no side timed while the machine was busier than for the other.
            call_before, stance_call = _per_call(plain, plain, around_b=lambda: compat.skip_guard_eval(settings.stance))
            calls = _profiled_calls(call_before[0])
            lookup_before = _lookup(plain, calls, settings.device)
            # One pass each, the stance held through its pass: set and unset around every call,
            # it made the plain calls between slower to look up (guard_cost.py, 2.13 and 2.14:
            # by 1-20%, in each of six rounds).
            with compat.skip_guard_eval(settings.stance):
                self.note(
                    stance_call_us=_us(stance_call[0]), stance_lookup_us=_lookup(plain, calls, settings.device)[0]
                )
        except Exception as exc:  # noqa: BLE001 - torch refusing the call under the stance: a finding
            # Measured on 2.13 and 2.14: a function with a graph break raises "Recompilation
            # triggered with skip_guard_eval_unsafe stance" after warm-up.
            self.note(stance_error=f"{type(exc).__name__}: {first_line(str(exc))}")
            (call_before,) = _per_call(plain)
            calls = _profiled_calls(call_before[0])
            lookup_before = _lookup(plain, calls, settings.device)
        self.note(call_us_before=_us(call_before[0]), lookup_us_before=lookup_before[0])
        return call_before, calls, lookup_before

    def _recompiled_under_filter(
        self, chosen: Any, code: Any, f_locals: dict[str, Any], before: Any, budget: _Budget
    ) -> Any:
        """The target compiled again under the guard filter, every call of the run made through
        it, and the guards its entries then check for the timed call."""
        recompile = RECOMPILE_FACTOR * self.calls_s + MARGIN_S + budget.timed(1) + budget.profiled(1)
        budget.need(recompile, f"recompiling under the filter (the run's calls took {self.calls_s:.1f} s)")
        self.ctx.progress("timing", f"guard what-if: recompiling under {self.found.filter}", self.record.index)
        spy = _Spy(chosen)
        compiled = _recompiled(self.ctx, self.target, spy)
        try:
            with compat.artifact_logs_off():  # the filter sees what a plain program's filter sees
                for call in self.done.records:
                    _seeded(compiled, call.snapshot, call.index)
        except Exception as exc:  # noqa: BLE001 - the snippet's calls under the filter: a finding
            self.found = spy.found(self.found, self.target)
            raise _Stop(
                f"a call under the filter raised ({type(exc).__name__}: {first_line(str(exc))}): "
                "no figure after the filter's compile"
            ) from None
        self.found = spy.found(self.found, self.target)
        after_entries = compat.cache_entries(code)
        after = check_sequence(after_entries, f_locals) if after_entries else None
        self.note(
            entries_after=len(after_entries),
            guards_after=_guards(after_entries, after.passed) if after is not None else None,
            check_us_after=_us(after.seconds) if after is not None else None,
            check_noise_us=_us(max(before.spread, after.spread)) if after is not None else None,
        )
        if after is None or after.passed is None:
            raise _Stop("no entry compiled under the filter passes the timed call's arguments")
        return compiled


class _Budget:
    """What is left of the run's timeout, and what each step of the what-if will take, from one
    compiled call's time (`one_s`): a step that would not finish is not started (the template
    kills a run at its timeout, and its whole report with it)."""

    def __init__(self, deadline: float | None, one_s: float) -> None:
        self.deadline = deadline
        self.one_s = max(one_s, 1e-6)

    def timed(self, sides: int) -> float:
        """_per_call's seconds for `sides` sides: warm-up calls and BLOCKS blocks each."""
        return (3 + sides * BLOCKS) * max(self.one_s, BLOCK_S)

    def profiled(self, sides: int) -> float:
        """_lookups' seconds for `sides` sides (the profiler about doubles a call), with the
        warm-up pass and the profiler's own start and stop."""
        return 2 * (MIN_CALLS + sides * _profiled_calls(self.one_s)) * self.one_s + 0.5

    def need(self, seconds: float, step: str) -> None:
        if self.deadline is None:
            return
        left = self.deadline - time.perf_counter()
        if left < seconds:
            raise _Stop(
                f"stopped before {step}: the run's timeout leaves {max(left, 0):.1f} s, about {seconds:.1f} s needed"
            )


def _recompiled(ctx: RunContext, target: Any, guard_filter: Callable[[list[Any]], list[bool]]) -> Callable[..., Any]:
    """The target compiled afresh as the run compiled it (settings, backend and its options),
    under `guard_filter`, with the backend itself: no graph of it reaches the run's capture."""
    settings: Settings = ctx.settings
    mode = settings.mode if settings.backend == "inductor" else None
    kernels = ctx.request.run.passes.kernels and settings.backend == "inductor"
    backend = compat.real_backend(
        settings.backend, mode, settings.dynamic, compat.KERNEL_PROFILE_OPTIONS if kernels else None
    )
    torch.compiler.reset()  # the run's entries go: the filter applies only to a new compile
    return torch.compile(
        target,
        fullgraph=settings.fullgraph,
        dynamic=settings.dynamic,
        backend=backend,
        options={"guard_filter_fn": guard_filter},
    )


class _Spy:
    """The guard filter the recompile runs: `chosen`'s decisions, with every entry it was handed
    noted, and what each filter torch ships would drop of the same entries (asked while the
    entries are live: the nn-module filters read the guard's source object)."""

    def __init__(self, chosen: Callable[[list[Any]], list[bool]]) -> None:
        self.chosen = chosen
        self.handed = 0
        self.dropped: list[str] = []
        self.others: dict[str, int] = {}

    def __call__(self, entries: list[Any]) -> list[bool]:
        keep = [bool(k) for k in self.chosen(entries)]
        self.handed += len(entries)
        self.dropped += [compat.filter_entry_fields(e)[0] for e, k in zip(entries, keep) if not k]
        for name in compat.GUARD_FILTERS:
            fn = compat.guard_filter(name)
            try:
                drops = sum(1 for k in fn(entries) if not k) if fn is not None else None
            except Exception:  # noqa: BLE001 - a filter that cannot read an entry: not previewed
                drops = None
            if drops is not None:
                self.others[name] = self.others.get(name, 0) + drops
        return keep

    def found(self, found: GuardWhatIf, target: Any) -> GuardWhatIf:
        """`found` with what the filter was handed and dropped, and the other filters' drops."""
        return replace(
            found,
            filter_guards=self.handed,
            dropped=len(self.dropped),
            dropped_sources=_sources(self.dropped, target),
            preview=tuple(FilterPreview(name, drops) for name, drops in self.others.items()),
        )


def _sources(names: list[str], target: Any) -> tuple[str, ...]:
    """The dropped guards' sources as the snippet names them, distinct, each only when no source
    above it is named already, torch's own aliases (builtins, imported modules) left out."""
    wrapped = isinstance(target, torch.nn.Module) and compat.inline_wrapped(target)
    out: list[str] = []
    for raw in names:
        if not raw or "__import_" in raw or "__builtins_dict___" in raw:
            continue
        if wrapped and (raw == "fn" or raw.startswith(("fn.", "fn["))):
            raw = "self" + raw[2:]  # wrap_inline's frame holds the module as `fn`
        name = user_name(raw)
        if name in out or any(name.startswith((f"{o}.", f"{o}[")) for o in out):
            continue
        out.append(name)
    return tuple(out[:SOURCES_SHOWN])


def _guards(entries: list[Any], passed: int | None) -> int | None:
    return compat.guard_count(entries[passed]) if passed is not None else None


def _us(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1e6, 3)


def _seeded(fn: Callable[..., Any], snapshot: tuple[Any, ...], index: int) -> Any:
    """One call on fresh copies of the recorded arguments, seeded as the run seeds that call."""
    torch.manual_seed(1234 + index)
    return fn(*clone_args(snapshot))


class _Followed:
    """The target's buffers and parameters as they were before the first output was taken, put
    back before the second: the calls in between (the recompile's) must not make them differ."""

    def __init__(self, tracker: StateTracker | None) -> None:
        self.saved: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        if tracker is None:
            return
        try:
            self.saved = {k: (t, t.detach().clone()) for k, t in tracker.current().items()}
        except Exception:  # noqa: BLE001 - a state we cannot copy: compared as it stands
            self.saved = {}

    def restore(self) -> None:
        with torch.no_grad():
            for live, copy in self.saved.values():
                try:
                    live.copy_(copy)
                except Exception:  # noqa: BLE001
                    pass


def _same(before: Any, after: Any) -> tuple[bool | None, float | None]:
    """Whether two outputs are equal leaf by leaf, exactly (NaN equal to NaN), and the largest
    absolute difference of their floating-point leaves."""
    pairs = list(zip(leaves(before), leaves(after)))
    if len(pairs) != len(list(leaves(before))) or len(pairs) != len(list(leaves(after))):
        return False, None
    agree, worst = True, 0.0
    for (_, b), (_, a) in pairs:
        if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
            try:
                b, a = tensor_diff.plain(b).detach(), tensor_diff.plain(a).detach()
                if b.shape != a.shape or b.dtype != a.dtype:
                    agree = False
                    continue
                if b.is_floating_point() or b.is_complex():
                    if not torch.equal(b.isnan(), a.isnan()) or not torch.equal(b.nan_to_num(), a.nan_to_num()):
                        agree = False
                    if b.numel():
                        worst = max(worst, float((b - a).abs().nan_to_num().max()))
                elif not torch.equal(b, a):
                    agree = False
            except Exception:  # noqa: BLE001 - a tensor we cannot read: not known to agree
                return None, None
        else:
            try:
                if not bool(b == a):
                    agree = False
            except Exception:  # noqa: BLE001
                return None, None
    return agree, worst


def _per_call(*fns: Callable[[], Any], around_b: Callable[[], Any] | None = None) -> list[tuple[float, float]]:
    """Seconds per call of each of `fns`: the median over BLOCKS blocks of about BLOCK_S each,
    the sides' blocks alternating, and the blocks' interquartile range. `around_b`: a context
    the second side's blocks run in."""
    for fn in fns:
        fn()
    t0 = time.perf_counter()
    fns[0]()
    one = max(time.perf_counter() - t0, 1e-7)
    n = max(1, min(10_000, int(BLOCK_S / one)))
    per_call: list[list[float]] = [[] for _ in fns]
    with _gc_off():
        for _ in range(BLOCKS):
            for side, fn in enumerate(fns):
                with around_b() if side == 1 and around_b is not None else _nothing():
                    t0 = time.perf_counter()
                    for _ in range(n):
                        fn()
                    per_call[side].append((time.perf_counter() - t0) / n)
    out = []
    for times in per_call:
        quartiles = statistics.quantiles(times, n=4)
        out.append((statistics.median(times), quartiles[2] - quartiles[0]))
    return out


@contextmanager
def _nothing() -> Iterator[None]:
    yield


@contextmanager
def _gc_off() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _profiled_calls(call_s: float) -> int:
    return max(MIN_CALLS, min(MAX_CALLS, int(PASS_S / max(call_s, 1e-6))))


def _lookup(fn: Callable[[], Any], calls: int, device: str) -> tuple[float | None, float]:
    """The profiler's "TorchDynamo Cache Lookup" per call of `fn` (median; 0 when no call had
    one: torch skips the event when no guard is left to evaluate), and the calls'
    interquartile range."""
    events = compat.profiled(fn, calls, device, MARKER)
    per_call: dict[int, float] = {}
    for event in events:
        if event.name != compat.EVENT_LOOKUP:
            continue
        parent = event.cpu_parent
        while parent is not None and parent.name != MARKER:
            parent = parent.cpu_parent
        if parent is not None:
            per_call[id(parent)] = per_call.get(id(parent), 0.0) + event.time_range.elapsed_us()
    times = [per_call.get(id(e), 0.0) for e in events if e.name == MARKER]
    if not times:
        return None, 0.0
    quartiles = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
    return round(statistics.median(times), 3), quartiles[2] - quartiles[0]


def _probe(x: torch.Tensor, flag: bool) -> torch.Tensor:
    return x + 1 if flag else x - 1


def _stance_probe(settings: Settings) -> bool | None:
    """On this torch: does a function compiled for flag=True, called with flag=False under
    skip_guard_eval_unsafe, return flag=True's result? (One entry: no guard is checked.) None
    when the probe could not tell."""
    try:
        probe = torch.compile(_probe, backend="eager")
        x = torch.zeros(2)
        if not torch.equal(probe(x, True), x + 1) or len(compat.cache_entries(_probe.__code__)) != 1:
            return None  # not compiled (the run's config or stance may forbid it): nothing to tell
        with compat.skip_guard_eval(settings.stance):
            got = probe(x, False)
        return bool(torch.equal(got, x + 1))
    except Exception:  # noqa: BLE001
        return None
