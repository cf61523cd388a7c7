"""A break fullgraph=True refused is worded alike by `check`'s text report and the app: the
words come from the error's typed `refused` field, which the worker reads from torch's text.
A canned report through both views, then a real worker run of the gallery's refusal."""

from __future__ import annotations

from pathlib import Path

from tui_fakes import FIXTURES, load_fixture, plain

from playground.cli.textreport import render
from playground.engine.exports import markdown_report
from playground.engine.report import Report
from playground.engine.settings import Settings
from playground.engine.wording.errors import FULL_WIDTH, refusal_words
from tui.panes import render_breaks, render_source
from tui.run.view import RunState, View
from tui.widgets.summary_bar import summary_text

ROOT = Path(__file__).resolve().parents[2]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _app_words(report: Report, source: str) -> tuple[str, str, str]:
    """The Source pane's head, the summary bar, and the Breaks pane's text (unwrapped)."""
    head = plain(render_source(source, report, report.error), width=200).splitlines()[0].strip()
    bar = summary_text(View(report=report, run=RunState("done")), width=None).plain
    return head, bar, _flat(plain(render_breaks(report), width=200))


def _check_words(report: Report) -> tuple[str, list[str]]:
    """`check`'s refusal line and the site's why/hint lines under it."""
    lines = [line.strip() for line in render(report).splitlines()]
    refusal = next(line for line in lines if line.startswith("fullgraph=True refused"))
    return refusal, [line for line in lines if line.startswith(("why:", "hint:"))]


def _assert_worded_alike(report: Report, source: str) -> str:
    words = refusal_words(report, width=FULL_WIDTH)
    assert words.startswith("fullgraph=True refused the break at line ")
    head, bar, app_site = _app_words(report, source)
    refusal, check_site = _check_words(report)
    assert head == refusal == words
    assert refusal_words(report, width=40) in bar  # the bar's narrower cut of the same words
    assert check_site, "check words the refused site's explanation and hints"
    for line in check_site:
        assert _flat(line) in app_site, line
    text = render(report)
    assert "ERROR" not in text  # a refusal is the run's finding, as in the app
    markdown = markdown_report(report)
    assert f"`{words}`" in markdown and "## Error" not in markdown  # and in the Markdown export
    return words


def test_a_canned_refusal_is_worded_alike_in_check_and_the_app():
    report = Report.from_dict(load_fixture("fullgraph_refusal"))
    words = _assert_worded_alike(report, (FIXTURES / "branch.py").read_text())
    assert words == "fullgraph=True refused the break at line 10: Unsupported: Data-dependent branching"


def test_the_gallerys_refusal_from_a_real_worker_is_worded_alike(worker):
    path = ROOT / "snippets" / "sum_if_fullgraph.py"
    report = worker.run(str(path), Settings(backend="eager", fullgraph=True), timing=False).report
    assert report.error is not None and report.error.type == "Unsupported"
    refused = report.error.refused
    assert refused is not None and refused.line == 32  # `if y.sum() > 0:`
    assert "if y.sum() > 0:" in path.read_text().splitlines()[refused.line - 1]
    assert refused.explanation and refused.hints  # torch's own words, read in the worker
    words = _assert_worded_alike(report, path.read_text())
    assert words.startswith("fullgraph=True refused the break at line 32: Unsupported: Data-dependent branching")
    # The JSON carries the typed field: `check --json` and the app read the same report.
    assert Report.from_dict(report.to_dict()).error == report.error
