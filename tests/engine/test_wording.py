"""The wording layer: plain values, no Rich or Textual, one list of the compile phases."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from playground.engine.report import CompilePhase, PhaseTotals, Report
from playground.engine.wording import breaks, explained, phases, timings
from playground.engine.wording.line import CODE, Line

FIXTURES = Path(__file__).resolve().parents[1] / "tui" / "fixtures"


def fixture(name: str) -> Report:
    return Report.from_dict(json.loads((FIXTURES / f"{name}.json").read_text()))


def test_the_wording_layer_imports_neither_rich_nor_textual_nor_torch():
    code = (
        "import sys, playground.engine.wording.breaks, playground.engine.wording.explained, "
        "playground.engine.wording.phases, playground.engine.wording.timings, "
        "playground.engine.wording.equivalence; "
        "print(sorted(m for m in ('rich', 'textual', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_phase_list_names_the_report_s_phase_fields_in_order():
    keys = [key for key, _ in phases.PHASES]
    for cls in (CompilePhase, PhaseTotals):
        fields = [f.name for f in dataclasses.fields(cls)]
        assert keys == [f for f in fields if f in keys]
        assert fields.index(keys[-1]) + 1 == fields.index("total_s")


def test_a_phase_table_has_a_total_row_and_the_coverage():
    table = phases.phase_table(fixture("default"))
    assert table is not None
    assert table.header[:3] == ("compile", "call", "Dynamo")
    assert table.total is not None and table.total[0] == "all" and table.all_rows[-1] == table.total
    assert table.coverage.startswith("torch's compile metrics cover")


def test_a_line_keeps_its_pieces_and_reads_as_plain_text():
    line = Line.of("specialized ", ("x.size()[0]", CODE), "", " = 1")
    assert line.pieces == (("specialized ", ""), ("x.size()[0]", CODE), (" = 1", ""))
    assert line.text == "specialized x.size()[0] = 1"


def test_the_speedup_line_always_carries_the_graph_and_break_counts():
    report = fixture("default")
    assert report.timings is not None
    assert timings.speedup_line(report, report.timings).text == "speedup 0.47x  with graphs 2  breaks 1"
    why = [line.text for line in timings.timing_notes(report, report.timings)]
    assert why and all(text.startswith("why 0.47x: ") for text in why)


def test_a_break_site_is_worded_with_every_hint_torch_gave():
    site = fixture("break").graph_breaks[0]
    lines = [line.text for line in breaks.site_lines(site)]
    assert lines[0] == "line 10  Data-dependent branching  fired 1 time  [GB0170]"
    assert [text for text in lines if text.startswith("hint: ")] == [f"hint: {h}" for h in breaks.hints(site)]
    assert site.hint in breaks.hints(site)


def test_the_limit_is_worded_once_with_torch_s_hints_under_it():
    lines = explained.limit_lines(fixture("why_recompile_lr"))
    assert lines[0].text == "fn hit recompile_limit = 8, used up by changes of lr (8 recompiles)."
    assert [line.depth for line in lines] == [0, 1, 1, 1]
    assert lines[-1].text.startswith("torch's guide: https://")
