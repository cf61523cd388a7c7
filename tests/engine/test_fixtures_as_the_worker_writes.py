"""The canned reports under tests/tui/fixtures/ hold what the worker reads from torch's text,
as it writes it today: the views read only those fields, so a fixture from an older worker would
test a view on a report no run makes. A fixture that fails here is brought up to date by reading
its own torch text with the worker's functions (the fields are derived from what it holds)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from playground.engine.report import Report
from playground.worker.capture import reasons
from playground.worker.capture.explain import guard_rank, short_guard, value_leaf
from playground.worker.capture.refusals import read_error

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "tui" / "fixtures").glob("*.json"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_a_fixture_holds_what_the_worker_reads(path: Path):
    report = Report.from_dict(json.loads(path.read_text()))
    assert reasons.read(report.recompiles, report.guards) == report.recompiles
    if report.error is not None:
        bare = replace(report.error, refused=None, missing_package="")
        assert read_error(bare, report.settings.fullgraph) == report.error
    for entry in report.explanation.guards:
        for g in entry.guards:
            short = short_guard(g.kind, g.check, g.arg)
            assert (g.rank, g.short, g.leaf) == (
                guard_rank(g.kind, g.arg, g.check),
                short if short != g.check else "",
                value_leaf(g.check, g.arg),
            ), g.check


def test_every_kind_of_field_is_held_by_some_fixture():
    reports = [Report.from_dict(json.loads(p.read_text())) for p in FIXTURES]
    assert any(rc.failures for r in reports for rc in r.recompiles)
    assert any(r.error is not None and r.error.refused is not None for r in reports)
    assert any(g.short for r in reports for e in r.explanation.guards for g in e.guards)
    assert any(g.leaf for r in reports for e in r.explanation.guards for g in e.guards)
