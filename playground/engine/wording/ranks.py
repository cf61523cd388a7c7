"""A run across ranks in words: a line per rank (its counts, its verdict, its error), then what
differs between them, first. The text report, Markdown and the app's Ranks pane all read these."""

from __future__ import annotations

from playground.engine.report import Report
from playground.engine.wording.line import BAD, DIM, GOOD, HEADING, WARN, Line


def headline(report: Report) -> Line:
    """ "ranks 2: they differ in 2 facts" or "ranks 2: all agree"."""
    n = report.world_size or 1
    if report.divergence:
        count = len(report.divergence)
        return Line.of((f"ranks {n}: ", HEADING), (f"they differ in {count} fact{'s' if count > 1 else ''}", WARN))
    return Line.of((f"ranks {n}: ", HEADING), ("every rank agrees", GOOD))


def rank_line(rank: int, report: Report, *, differs: frozenset[str] = frozenset(), shown: bool = False) -> Line:
    """One rank's counts, each marked when it is one of the facts that differ; `shown`: the
    rank whose facts the rest of the view shows."""

    def fact(words: str, what: str) -> tuple[str, str]:
        return words, WARN if what in differs else ""

    parts: list[str | tuple[str, str]] = [
        (f"{'▸' if shown else ' '} rank {rank}  ", HEADING),
        fact(f"graphs {report.graph_count}", "graph_count"),
        "  ",
        fact(f"breaks {report.graph_break_count}", "graph_breaks"),
        "  ",
        fact(f"recompiles {report.recompile_count}", "recompiles"),
        "  ",
    ]
    if "guards" in differs:  # said when it differs: the line fits 80 columns without it
        parts += [fact(f"guards {sum(len(s.guards) for s in report.guards)}", "guards"), "  "]
    word = report.equivalence_word
    parts.append((f"equiv {word}", BAD if word == "FAIL" else (WARN if "equivalence" in differs else "")))
    if "timings" in differs and report.timings is not None and report.timings.speedup is not None:
        speed = "unreliable" if report.timings.unreliable else f"{report.timings.speedup:.2f}x"
        parts += ["  ", fact(f"speedup {speed}", "timings")]
    if report.error is not None:
        parts += ["  ", (report.error.one_line(), BAD)]
    return Line.of(*parts)


def rank_lines(report: Report) -> tuple[Line, ...]:
    """The headline, what differs (the finding), then each rank's line."""
    if report.world_size is None:
        return ()
    lines = [headline(report)]
    for entry in report.divergence:
        lines.append(Line.of(("differs: ", WARN), entry.message, depth=1))
    differs = frozenset(entry.what for entry in report.divergence)
    # The rank the view shows is the one whose process made the top level's facts.
    shown = next((i for i, each in enumerate(report.ranks) if each.worker == report.worker), 0)
    for rank, each in enumerate(report.ranks):
        lines.append(rank_line(rank, each, differs=differs, shown=rank == shown))
    if not report.ranks:
        lines.append(Line.of("no rank's report came back", tag=DIM))
    bucket = bucket_line(report)
    if bucket is not None:
        lines.append(bucket)
    return tuple(lines)


def bucket_line(report: Report) -> Line | None:
    """What DDP's optimizer did to the graphs, apart from the graph breaks; None without DDP."""
    ddp = report.ddp_buckets
    if ddp is None:
        return None
    size = f"DDP buckets of {ddp.bucket_mb:g} MiB: "
    if not ddp.splits:
        return Line.of((size, HEADING), ("one graph per compiled frame (dynamo.optimize_ddp off, or one bucket)", DIM))
    cut = ", ".join(f"{cid} into {n} graphs" for cid, n in ddp.splits.items())
    return Line.of(
        (size, HEADING),
        (f"DDP's optimizer cut compile {cut} at the bucket boundaries", WARN),
        ("; graphs, not graph breaks (dynamo.optimize_ddp=false keeps one)", DIM),
    )


def summary_words(report: Report) -> str:
    """ "ranks 2 differ: graph_count, recompiles" or "ranks 2 agree", for a summary bar."""
    if report.world_size is None:
        return ""
    if report.divergence:
        return f"ranks {report.world_size} differ: " + ", ".join(d.what for d in report.divergence)
    return f"ranks {report.world_size} agree"
