"""The frames Dynamo was handed and how many it converted (`dynamo_frames`): what torch's own
counter says in a plain program making only the snippet's calls, and a line in the calls' words
when they say the calls ran eagerly however the code looked."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from playground.cli.textreport import render
from playground.engine.report import Report
from playground.engine.wording.explained import frame_lines

from .conftest import EAGER, run

if TYPE_CHECKING:
    from tests.standalone import StandaloneRunner

#: Two graphs around a print: Dynamo converts fn and the resume function after the break.
BREAK = """\
import torch


def fn(x):
    y = torch.sin(x)
    print("between")
    return torch.cos(y)


def inputs():
    return [(torch.ones(4),), (torch.ones(4),), (torch.ones(5),)]
"""

#: Nothing but a print and a tolist: Dynamo converts frames into no graph at all.
NO_GRAPH = """\
import torch


def fn(x):
    print("looked at")
    return x.tolist()


def inputs():
    return [(torch.ones(3),)]
"""

PLAIN_PROGRAM = r"""
import json, runpy, sys
import torch
from torch._dynamo.utils import counters

ns = runpy.run_path(sys.argv[1])
compiled = torch.compile(ns["fn"], backend="eager")
for call in ns["inputs"]():
    compiled(*call)
print(json.dumps(dict(counters["frames"])))
"""


def plain_frames(standalone: StandaloneRunner, path: Path) -> dict[str, int]:
    program = path.with_name("plain_frames.py")
    program.write_text(PLAIN_PROGRAM, encoding="utf-8")
    done = standalone.run(program, str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("source", [BREAK, NO_GRAPH], ids=["break", "no_graph"])
def test_the_frames_are_what_torchs_counter_says_in_a_plain_program(worker, standalone, tmp_path, source):
    path = tmp_path / "frames.py"
    path.write_text(source, encoding="utf-8")
    report = run(worker, str(path), EAGER)
    assert report["error"] is None
    truth = plain_frames(standalone, path)
    assert report["dynamo_frames"] == {"total": truth.get("total", 0), "converted": truth.get("ok", 0)}


#: No break, two shapes: two frame compiles, with fullgraph or without.
WHOLE = """\
import torch


def fn(x):
    return torch.cos(torch.sin(x))


def inputs():
    return [(torch.ones(4),), (torch.ones(5),)]
"""


def test_under_fullgraph_the_frames_are_those_it_converts_without(worker, standalone, tmp_path):
    """torch's counter is empty under fullgraph=True (ConvertFrameAssert keeps none): the report
    still counts the frames, the ones torch's counter counts for the same code without
    fullgraph, and says nothing about frames Dynamo was not handed."""
    path = tmp_path / "whole.py"
    path.write_text(WHOLE, encoding="utf-8")
    report = run(worker, str(path), replace(EAGER, fullgraph=True))
    assert report["error"] is None and report["graph_count"] >= 1
    truth = plain_frames(standalone, path)
    assert truth.get("total", 0) >= 1
    assert report["dynamo_frames"] == {"total": truth["total"], "converted": truth.get("ok", 0)}
    assert frame_lines(Report.from_dict(report)) == ()


def test_no_frame_at_all_is_said_in_every_view(worker, tmp_path):
    """A run Dynamo was handed no frame of (made here from a real report: what torch does with a
    program that compiles nothing is the program mode's to show) says so in the text report,
    and the Markdown export alike, from the one line of words (the Recompiles pane lays out the
    same call_lines)."""
    from playground.engine.exports import markdown_report
    from playground.engine.report import DynamoFrames

    path = tmp_path / "break.py"
    path.write_text(BREAK, encoding="utf-8")
    report = Report.from_dict(run(worker, str(path), EAGER))
    nothing = replace(report, explanation=replace(report.explanation, frames=DynamoFrames(0, 0)))
    (line,) = frame_lines(nothing)
    words = line.text
    assert words.startswith("Dynamo was handed no frame")
    assert words in render(nothing)
    assert words in markdown_report(nothing)


def test_no_line_when_the_frames_made_graphs_or_were_not_read(worker, tmp_path):
    path = tmp_path / "break.py"
    path.write_text(BREAK, encoding="utf-8")
    report = Report.from_dict(run(worker, str(path), EAGER))
    assert report.graph_count > 0 and frame_lines(report) == ()
    older = Report.from_dict({k: v for k, v in report.to_dict().items() if k != "dynamo_frames"})
    assert older.explanation.frames is None and frame_lines(older) == ()
