"""The report's one wire codec: `Report.from_dict`/`to_dict` lose nothing, add nothing, and
print byte for byte what the worker wrote (canned fixtures and live `check --json` runs)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from playground.engine.report import Report, Wire, WireTypeError, strict_by_default
from playground.engine.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "tui" / "fixtures").glob("*.json"))
LIVE = ("why_recompile.py", "sum_if_fullgraph.py")


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def live_reports() -> dict[str, str]:
    """The line `check --json` prints for each LIVE gallery snippet (eager, no timings)."""
    printed = {}
    for name in LIVE:
        done = subprocess.run(
            [sys.executable, "-m", "playground", "check", f"snippets/{name}", "--json", "--no-timing"]
            + ["--backend", "eager"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.stdout.endswith("\n") and done.stdout.count("\n") == 1, done.stderr[-3000:]
        printed[name] = done.stdout.rstrip("\n")
    return printed


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_every_fixture_round_trips(path: Path) -> None:
    report = Report.from_dict(_load(path))
    assert Report.from_dict(report.to_dict()) == report


def test_the_dynamo_code_fixture_prints_byte_for_byte() -> None:
    data = _load(ROOT / "tests" / "tui" / "fixtures" / "dynamo_code.json")
    assert json.dumps(Report.from_dict(data).to_dict()) == json.dumps(data)


@pytest.mark.parametrize("name", LIVE)
def test_a_live_report_prints_byte_for_byte(live_reports: dict[str, str], name: str) -> None:
    line = live_reports[name]
    data = json.loads(line)
    assert data["error"] is None or data["error"]["kind"] == "compile", data["error"]
    assert data["stage"] == "complete" and data["torch_version"]
    assert json.dumps(Report.from_dict(data).to_dict()) == line


# --- no unknown keys --------------------------------------------------------------------------


def _wire_class(hint: Any) -> type[Wire] | type[Settings] | None:
    """The report class a field's type holds (through Optional and tuple[X, ...]), or None
    for a plain value or a free mapping (cache counts, phase seconds, call arguments)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        return next((c for c in map(_wire_class, args) if c is not None), None)
    if origin is tuple and args and args[-1] is Ellipsis:
        return _wire_class(args[0])
    if isinstance(hint, type) and issubclass(hint, (Wire, Settings)):
        return hint
    return None


def _unknown_keys(cls: type[Wire], data: dict[str, Any], where: str) -> list[str]:
    """Every key of `data`, recursively, that the typed classes do not read."""
    found = [f"{where}.{key}" for key in data if key not in cls.wire_keys()]
    return found + _unknown_below(cls, data, where)


def _unknown_below(cls: type[Wire], data: dict[str, Any], where: str) -> list[str]:
    found: list[str] = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        meta = f.metadata.get("wire") or {}
        nested = _wire_class(hints[f.name])
        if nested is None:
            continue
        if meta.get("flatten"):
            found += _unknown_below(nested, data, where)  # its keys sit in this object (checked above)
            continue
        key = meta.get("key") or f.name
        values = data.get(key)
        for i, value in enumerate(values if isinstance(values, list) else [values]):
            if not isinstance(value, dict):
                continue
            at = f"{where}.{key}" + (f"[{i}]" if isinstance(values, list) else "")
            if nested is Settings:
                # Settings(ranks=2): `ranks` is written only when not 1.
                found += [f"{at}.{k}" for k in value if k not in Settings(ranks=2).to_dict()]
            else:
                found += _unknown_keys(nested, value, at)
    return found


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_a_fixture_has_no_key_the_classes_do_not_read(path: Path) -> None:
    assert _unknown_keys(Report, _load(path), "report") == []


@pytest.mark.parametrize("name", LIVE)
def test_a_live_report_has_no_key_the_classes_do_not_read(live_reports: dict[str, str], name: str) -> None:
    assert _unknown_keys(Report, json.loads(live_reports[name]), "report") == []


def test_the_key_walk_finds_an_unknown_key() -> None:
    """The walk above would see a key the codec drops, at any depth."""
    data = _load(ROOT / "tests" / "tui" / "fixtures" / "break.json")
    data["graph_breaks"][0]["new_key"] = 1
    data["later"] = 2
    assert _unknown_keys(Report, data, "report") == ["report.later", "report.graph_breaks[0].new_key"]


# --- a key of the wrong type --------------------------------------------------------------------


def test_the_suite_reads_reports_strictly() -> None:
    # tests/conftest.py sets it for this process and every worker the suite starts.
    assert strict_by_default()


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"graph_count": "2"}, "Report.graph_count"),
        ({"graph_breaks": [{"line": "33"}]}, "GraphBreak.line"),
        ({"timings": {"speedup": "1.5x"}}, "Timings.speedup"),
        ({"timings": {"cache_counts": [1, 2]}}, "Timings.cache_counts"),
        ({"equivalence": {"ok": "yes"}}, "Equivalence.ok"),
        ({"equivalence": {"outputs": [{"name": 3}]}}, "Comparison.name"),
        ({"notes": "one note"}, "Report.notes"),
        ({"call_entries": [{"args": ["x"]}]}, "CallEntry.args"),
        ({"guard_details": [{"guards": [{"internal": 1}]}]}, "GuardDetail.internal"),
        ({"compile_phase_totals": {"total_s": "0.1"}}, "PhaseTotals.total_s"),
    ],
)
def test_a_key_of_the_wrong_type_is_an_error_when_strict(data: dict[str, Any], where: str) -> None:
    with pytest.raises(WireTypeError, match=where.replace(".", r"\.")):
        Report.from_dict(data, strict=True)


def test_read_leniently_a_key_of_the_wrong_type_takes_its_default() -> None:
    # What a reader outside the suite does with a canned report from an older version.
    report = Report.from_dict({"graph_count": 2, "timings": {"speedup": "1.5x", "compile_s": 0.5}}, strict=False)
    assert report.graph_count == 2 and report.timings is not None
    assert report.timings.speedup is None and report.timings.compile_s == 0.5
