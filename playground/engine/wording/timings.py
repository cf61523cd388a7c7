"""The timings section in words: the cold first call, the steady state, the speedup with the
graph and break counts beside it, and why a speedup is far from 1x when the report itself says so.

A speedup outside 0.5x-2x surprises: `0.11x` on a tiny CPU snippet, `48x` for `torch.cond`.
Each reason here is read from fields of the report (timings, graph and break counts, the
backend, the captured graphs' code), never guessed from the snippet's name: when no field
explains the figure, no reason is given.
"""

from __future__ import annotations

from playground.engine.report import Report, Timings
from playground.engine.wording.line import BAD, DIM, HEADING, WARN, Line, plural

#: Inside this band a speedup needs no explanation (and on a shared machine is partly noise).
LOW, HIGH = 0.5, 2.0
#: An eager call this short is dominated by any fixed cost per call: the compiled call's guard
#: checks and wrappers (tens of microseconds on CPU) outweigh whatever the graph saves.
TINY_MS = 0.1
#: Backends that run the captured graph without optimising it: a compiled call only adds cost.
_UNOPTIMISED = ("eager", "aot_eager")
#: How torch.cond appears in a captured graph's code.
_COND = "torch.ops.higher_order.cond"


def speedup_word(timings: Timings | None) -> str:
    """The speedup as every view shows it in one word: "2.31x", "n/a", or "unreliable" when
    the measurement itself says it is not to be believed (never a bold number then)."""
    if timings is None or timings.speedup is None:
        return "n/a"
    if timings.unreliable:
        return "unreliable"
    return f"{timings.speedup:.2f}x"


def speedup_spread(timings: Timings) -> str:
    """The ratio's quartiles over the interleaved blocks, e.g. "1.9-2.6x over 8 blocks", or ""."""
    if timings.speedup_low is None or timings.speedup_high is None or not timings.blocks:
        return ""
    return f"{timings.speedup_low:.2f}-{timings.speedup_high:.2f}x over {timings.blocks} blocks"


def unreliable_line(timings: Timings) -> str:
    """ "timing unreliable: <why>; measured 0.02x" for a speedup not to be believed, else ""."""
    if not timings.unreliable:
        return ""
    measured = "" if timings.speedup is None else f" (measured {timings.speedup:.3g}x: not a result)"
    return f"timing unreliable: {timings.unreliable}{measured}"


def machine_line(timings: Timings) -> str:
    """What the machine was doing while we timed, e.g. "others used 0.1 of 2 CPUs, load 0.4"."""
    m = timings.machine
    if m is None:
        return ""
    parts = []
    if m.others_cpu is not None:
        parts.append(f"other processes used {m.others_cpu:.2g} of {m.cpus} CPUs")
    if m.load1 is not None:
        parts.append(f"load {m.load1:.2f}")
    return ", ".join(parts)


def memory_line(report: Report) -> str:
    """ "peak memory 812 MiB (the run's process)", or "" when not known."""
    worker = report.worker
    if worker is None or worker.peak_rss_mb is None:
        return ""
    return f"peak memory {worker.peak_rss_mb:.0f} MiB (the run's process)"


def speedup_reasons(report: Report) -> tuple[str, ...]:
    """Short reasons for a speedup outside LOW..HIGH, most telling first; () when inside the
    band, not measured, or not explained by any field."""
    timings = report.timings
    if timings is None or timings.speedup is None or timings.unreliable or LOW <= timings.speedup <= HIGH:
        return ()
    if timings.speedup > HIGH:
        return _fast(report)
    return _slow(report)


def _fast(report: Report) -> tuple[str, ...]:
    if any(_COND in graph.code for graph in report.graphs):
        # Measured here (torch 2.13, CPU): eager torch.cond 11 ms, compiled 0.24 ms per call.
        return ("eager torch.cond is slow: the compiled graph runs it as one op",)
    return ()


def _slow(report: Report) -> tuple[str, ...]:
    timings = report.timings
    assert timings is not None
    reasons = []
    if timings.eager_ms is not None and timings.eager_ms < TINY_MS:
        device = timings.device.split(":")[0].upper()
        reasons.append(f"tiny input (eager {timings.eager_ms:.3f} ms): call overhead dominates on {device}")
    if report.graph_break_count:
        reasons.append(_breaks(report))
    if report.recompile_limit_hit:
        reasons.append("recompile limit hit: Dynamo fell back to eager")
    backend = report.settings.backend
    if backend in _UNOPTIMISED:
        reasons.append(f"backend {backend} does not optimise the graph: only the overhead shows")
    return tuple(reasons)


def _breaks(report: Report) -> str:
    """The breaks named: where and why, so the reader knows what to fix first."""
    sites = [f"line {s.line}: {s.reason}" if s.line else s.reason for s in report.graph_breaks[:2]]
    more = len(report.graph_breaks) - len(sites)
    named = "; ".join(sites) + (f"; {more} more" if more > 0 else "")
    count = report.graph_break_count
    head = f"{count} graph break{'s' if count != 1 else ''}: {report.graph_count} graphs with Python between them"
    return f"{head} ({named})" if named else head


#: The compile caches' state in words (`Timings.compile_cache`).
CACHE_WORDS = {
    "hit": "compile caches hit: this was not a cold compile",
    "miss": "compile caches missed: a true cold compile",
    "partial": "compile caches partly hit",
    "disabled": "compile caches disabled: a true cold compile",
    "n/a": "no compile caches for this backend",
}


def cache_words(timings: Timings) -> str:
    """What the compile caches did, in words."""
    return CACHE_WORDS.get(timings.compile_cache, f"compile cache: {timings.compile_cache}")


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f} ms"


def cold_call_line(timings: Timings) -> Line:
    """ "cold first call (compile included): 0.903 s  (compile caches missed: ...)"."""
    seconds = "n/a" if timings.compile_s is None else f"{timings.compile_s:.3f} s"
    return Line.of(f"cold first call (compile included): {seconds}", (f"  ({cache_words(timings)})", DIM))


def steady_words(timings: Timings) -> str:
    """The medians and their IQRs on one line."""
    eager = "" if timings.eager_iqr_ms is None else f" ±{timings.eager_iqr_ms:.3f}"
    compiled = "" if timings.compiled_iqr_ms is None else f" ±{timings.compiled_iqr_ms:.3f}"
    return (
        f"steady state on {timings.device} (median, IQR): eager {_ms(timings.eager_ms)}{eager}  "
        f"compiled {_ms(timings.compiled_ms)}{compiled}"
    )


def speedup_line(report: Report, timings: Timings) -> Line:
    """The speedup, never without the graph and break counts beside it (a speedup over a
    graph-broken target is a different claim)."""
    spread = speedup_spread(timings)
    return Line.of(
        f"speedup {speedup_word(timings)}",
        (f" ({spread})" if spread and not timings.unreliable else "", DIM),
        (
            f"  with graphs {report.graph_count}  breaks {report.graph_break_count}",
            BAD if report.graph_break_count else "",
        ),
        tag=BAD if timings.unreliable else HEADING,
    )


def timing_notes(report: Report, timings: Timings, *, figure: bool = True) -> tuple[Line, ...]:
    """What qualifies the speedup: unreliable, what else the machine ran, the peak memory,
    and each reason it is far from 1x ("why 0.22x: ...", or "why: ..." without `figure`,
    where the speedup stands just above)."""
    notes = [Line.of(unreliable_line(timings), tag=BAD)]
    if machine_line(timings):
        notes.append(Line.of(f"machine while timing: {machine_line(timings)}", tag=DIM))
    notes.append(Line.of(memory_line(report), tag=DIM))
    if timings.threads:
        notes.append(Line.of(f"torch ran on {plural(timings.threads, 'thread')} (torch.get_num_threads())", tag=DIM))
    notes.append(guard_line(report))
    why = f"why {speedup_word(timings)}" if figure else "why"
    notes += [Line.of(f"{why}: {reason}", tag=WARN) for reason in speedup_reasons(report)]
    return tuple(line for line in notes if line.pieces)


#: From this share of the compiled call on, the guards are the call's cost worth naming.
GUARDS_MATTER = 0.2


def guard_line(report: Report) -> Line:
    """What checking the guards cost the timed call, measured after the timing."""
    cost = report.guard_cost
    if cost is None or cost.check_us is None:
        return Line.of(cost.note if cost is not None else "", tag=DIM)
    # Over several entries the count is the leaves of each: a failing entry stops at its first
    # failing guard, so the sum is an upper bound.
    bound = "up to " if cost.entries_tried > 1 else ""
    checked = f"{bound}{cost.guards_evaluated} guards" if cost.guards_evaluated is not None else "the guards"
    share = f", {cost.share:.0%} of the compiled call" if cost.share is not None else ""
    words = f"guards: {checked} checked per call in {cost.check_us:.1f} us{share}"
    if cost.entries_tried > 1:
        words += f" ({cost.entries_tried} cache entries tried)"
    matters = cost.share is not None and cost.share >= GUARDS_MATTER
    return Line.of(
        words + ("; the call is small enough for guard checks to matter" if matters else ""),
        tag=WARN if matters else DIM,
    )


def timed_words(report: Report, timings: Timings) -> str:
    """What the steady-state figures measured: which call, and only its forward pass."""
    if timings.timed_call:
        of = f" of {report.calls}" if report.calls else ""
        call = f"call {timings.timed_call}{of} of inputs()"
    else:
        call = "one call of inputs()"
    # The worker times `fn(*args)` alone: the gradient check's backward pass is not in these figures.
    return f"timed: {call}, forward only (no backward)"
