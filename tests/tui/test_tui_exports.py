"""Exports from the app (fake engine, temp working folder): the Markdown report, never
overwriting, and the trace run written for tlparse."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fakes import FakeEngine, load_fixture, rule_report, settle

from tui.factory import make_app
from tui.files.exports import unique_path


def with_full_timings(text, settings):
    # markdown_report formats every timing; the fake's own timings leave the spreads out.
    return rule_report(text, settings) | {"timings": load_fixture("break")["timings"]}


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


async def test_w_writes_the_markdown_report_and_never_overwrites(snippet: Path, cwd: Path):
    app = make_app(snippet, engine=FakeEngine(with_full_timings), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        first = cwd / "branch-report.md"
        text = first.read_text()
        assert text.startswith("# torch.compile report: ")
        assert "graphs 2  breaks 1" in text and "Data-dependent branching" in text
        assert "Markdown report written: branch-report.md" in notices(app)
        await pilot.press("w")
        await settle(pilot)
        assert (cwd / "branch-report-2.md").read_text() == text
        assert first.read_text() == text


async def test_t_reruns_with_the_trace_and_writes_it_with_the_tlparse_command(snippet: Path, cwd: Path):
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        assert engine.options == [{}, {"trace": True}]
        logs = list((cwd / "compile-playground-trace").glob("*.log"))
        assert len(logs) == 1 and "dynamo_start" in logs[0].read_text()
        message = next(m for m in notices(app) if m.startswith("trace written"))
        name = f"compile-playground-trace/{logs[0].name}"
        assert f"tlparse {name} -o {name.removesuffix('.log')}" in message
        # The trace stays out of what the app keeps.
        assert not {"trace_lines", "trace_strings", "trace"} & app.main.view.report.to_dict().keys()
        assert all(
            not {"trace_lines", "trace_strings", "trace"} & e.report.to_dict().keys() for e in app.history.entries
        )


def test_unique_path_adds_a_number_when_taken(tmp_path: Path):
    assert unique_path(tmp_path, "a-report", ".md").name == "a-report.md"
    assert unique_path(tmp_path, "a-report", ".md").name == "a-report-2.md"
    assert unique_path(tmp_path, "a-report", ".md").name == "a-report-3.md"
