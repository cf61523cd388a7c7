"""Graph breaks: how many, where, why, and what torch suggests doing about each site."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from playground.engine.report import GraphBreak, Report
from playground.engine.wording import breaks, program
from playground.engine.wording import ranks as rank_words
from tui.panes.common import BAD, DIM, GOOD, HEADING, plural, styled_lines
from tui.run.findings import refused_break


def render_breaks(report: Report) -> RenderableType:
    """The count line, then each distinct site with its reason, hints and line. A program's
    breaks belong to its compiled callables: one section each, its breaks under it. Across
    ranks, what differs between them comes first (the run's finding), then the shown rank's."""
    if report.world_size is not None:
        return Group(*styled_lines(rank_words.rank_lines(report)), Text(""), _render_breaks(report))
    return _render_breaks(report)


def _render_breaks(report: Report) -> RenderableType:
    if report.kind == "program" and refused_break(report) is None:
        return Group(*styled_lines(program.program_lines(report, detail=True)))
    refused = refused_break(report)
    if refused is not None:
        return _refusal(refused, report.graph_count)
    count = report.graph_break_count
    if not report.graph_breaks and count == 0:
        return Group(
            Text(f"no graph breaks  (graphs {report.graph_count})", style=GOOD),
            Text("Dynamo traced the target without stopping.", style=DIM),
        )
    # The distinct sites when torch's break ids grouped them (a break in a loop is one site).
    sites = len(report.break_sites) or len(report.graph_breaks)
    headline = Text(
        f"{plural(count, 'graph break')} at {plural(sites, 'site')}  (graphs {report.graph_count})",
        style=BAD,
    )
    parts: list[RenderableType] = [headline]
    distinct = breaks.distinct_lines(report)
    if distinct:
        parts += [Text(""), *styled_lines(distinct)]
    for site in report.graph_breaks:
        parts.append(Text(""))
        parts.extend(styled_lines(breaks.site_lines(site)))
    return Group(*parts)


def _refusal(site: GraphBreak, graphs: int) -> RenderableType:
    """fullgraph=True raised at a break instead of splitting the graph: that break is the
    run's finding, shown as a site."""
    where = f"line {site.line}" if site.line else "outside the snippet"
    title = Text(f"{where}  ", style=HEADING)
    title.append(site.reason or "graph break", style=BAD)
    if site.gb_id:
        title.append(f"  [{site.gb_id}]", style=DIM)
    return Group(
        Text(f"fullgraph=True refused this graph break  (graphs {graphs})", style=BAD),
        Text("Without fullgraph, Dynamo would split the graph here (f turns it off).", style=DIM),
        Text(""),
        title,
        *styled_lines(breaks.site_lines(site)[1:]),
    )
