"""Graph break sites in words: where each is, why, how often it fired, and torch's hints."""

from __future__ import annotations

import os
import re

from playground.engine.report import BreakSite, GraphBreak, Report
from playground.engine.wording.line import BAD, DIM, HEADING, HINT, WARN, Line, plural

#: The part of a path up to a library's own: site-packages (or Debian's dist-packages), or the
#: standard library's folder. What follows names the file as an import does (torch/nn/...).
_LIBRARY = re.compile(r".*/(?:site-packages|dist-packages)/|.*/lib/python\d+\.\d+/")


def short_file(path: str) -> str:
    """A file named as its library names it ("torch/nn/parallel/distributed.py", "contextlib.py"),
    or by its name alone."""
    library = _LIBRARY.match(path)
    return path[library.end() :] if library else os.path.basename(path)


def elsewhere(path: str, own: str | None = None) -> bool:
    """Whether `path` is another file than the snippet's or the program's own (`own`, the
    report's `snippet`): one of torch's or a library's (known by its folder when `own` is not
    given), or another file of the user's."""
    if not path:
        return False
    if _LIBRARY.match(path):
        return True
    return bool(own) and os.path.realpath(path) != os.path.realpath(own or "")


def where(site: GraphBreak | BreakSite, own: str | None = None) -> str:
    """ "line 10" in the snippet's (or the program's) own file; "torch/nn/parallel/distributed.py:1757"
    in another file (`elsewhere`); the file's name when torch gave no line; or "outside the snippet"."""
    if site.line:
        return f"{short_file(site.file)}:{site.line}" if elsewhere(site.file, own) else f"line {site.line}"
    return os.path.basename(site.file) or "outside the snippet"


def hints(site: GraphBreak) -> tuple[str, ...]:
    """Every hint torch gave (reports from before `hints` carry only `hint`)."""
    return tuple(dict.fromkeys(h for h in (*site.hints, site.hint) if h))


def site_lines(site: GraphBreak, own: str | None = None) -> tuple[Line, ...]:
    """The site's title (where, the reason, how often, torch's id), then torch's explanation
    and its hints under it. `own`: the report's snippet (or program), for `where`."""
    title = Line.of(
        f"{where(site, own)}  ",
        (site.reason or site.gb_type or "graph break", BAD),
        (f"  fired {plural(site.count, 'time')}", DIM),
        (f"  [{site.gb_id}]" if site.gb_id else "", DIM),
        tag=HEADING,
    )
    why = Line.of(f"why: {site.explanation}" if site.explanation else "", depth=1)
    return tuple(
        line for line in (title, why, *(Line.of(f"hint: {h}", tag=HINT, depth=1) for h in hints(site))) if line.pieces
    )


#: torch's hint categories (torch/_dynamo/graph_break_hints.py), and what each asks of the user.
CATEGORY_WORDS = {
    "FUNDAMENTAL": "fundamental: rewrite the code",
    "USER_ERROR": "an error in the code",
    "SUPPORTABLE": "supportable: torch may trace it later",
    "DIFFICULT": "hard for torch: rewrite or wait",
    "DYNAMO_BUG": "a Dynamo bug: report it",
    "CAUSED_BY_EARLIER_GRAPH_BREAK": "caused by an earlier break",
    "INFERENCE_MODE": "inference mode",
    "SPARSE_TENSOR": "sparse tensors",
}


def category_words(categories: tuple[str, ...]) -> str:
    return "; ".join(CATEGORY_WORDS.get(c, c.lower().replace("_", " ")) for c in categories)


def distinct_lines(report: Report) -> tuple[Line, ...]:
    """The distinct breaks: one line per site and break type, the records torch logged there
    counted, what kind of break torch says it is, and what it set off; () for a report without
    them (no break, or one from before they were counted)."""
    sites = report.break_sites
    if not sites:
        return ()
    records = sum(site.count for site in sites)
    out = [Line.of(f"distinct breaks: {plural(len(sites), 'site')}, {plural(records, 'record')}", tag=HEADING)]
    for site in sites:
        out.append(
            Line.of(
                f"{where(site, report.snippet)}  ",
                (site.gb_type or "graph break", BAD),
                f"  x{site.count}",
                (f"  [{site.gb_id}]" if site.gb_id else "", DIM),
                (f"  {category_words(site.categories)}" if site.categories else "", WARN),
                depth=1,
            )
        )
        out += [Line.of(f"then: {caused}", tag=DIM, depth=2) for caused in site.caused]
    return tuple(out)
