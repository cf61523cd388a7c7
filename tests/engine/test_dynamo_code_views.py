"""`check --code` headless: the text report and the Markdown export show the code Dynamo wrote,
worded as the app's Code pane words it (a canned report: gallery default.py, eager, torch 2.13,
decompiled by depyf)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from playground.cli.textreport import render
from playground.engine.exports import markdown_report
from playground.engine.report import DynamoCode, Report

FIXTURE = Path(__file__).resolve().parents[1] / "tui" / "fixtures" / "dynamo_code.json"


def _report() -> Report:
    return Report.from_dict(json.loads(FIXTURE.read_text()))


def test_text_report_shows_each_piece_under_its_heading():
    text = render(_report())
    section = text[text.index("Dynamo's code:") :]
    assert "  decompiled by depyf" in section
    assert "  2 compiled frames  resume after the break at line 33" in section
    assert "  resume function  torch_dynamo_resume_in_fn_at_33  resumes after the break at line 33" in section
    assert "\n    |     return torch.cos(y) + 1\n" in section


def test_text_report_without_code_has_no_section():
    assert "Dynamo's code" not in render(replace(_report(), dynamo_code=None, dynamo_code_note=""))


def test_markdown_sets_names_as_code_and_fences_the_source():
    md = markdown_report(_report())
    section = md[md.index("## Dynamo's code") :]
    # a name like __guard_0_for_fn would be bold in Markdown without backticks
    assert "guard function  `__guard_0_for_fn`" in section
    assert "```python\ndef __guard_0_for_fn(" in section


def test_markdown_fence_outlasts_backticks_in_the_code():
    item = DynamoCode(name="__transformed_code_0_for_f", kind="transformed", function="f", source='s = "```"\n')
    md = markdown_report(replace(_report(), dynamo_code=(item,)))
    assert '````python\ns = "```"\n````' in md


def test_no_frame_compiled_says_so():
    md = markdown_report(replace(_report(), dynamo_code=()))
    assert "no code: Dynamo compiled no frame in this run" in md
    assert "no code: Dynamo compiled no frame" in render(replace(_report(), dynamo_code=()))
