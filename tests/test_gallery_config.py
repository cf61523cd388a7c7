"""The gallery lesson on torch's own switches, proved on the installed torch.

`snippets/config_scalar_outputs.py` sets `dynamo.capture_scalar_outputs` in its `SETTINGS` and
claims that the switch removes its `.item()` break. These tests run what `check --json` runs, with
the settings it resolves from the file and from its own command-line parser: the snippet as shipped,
a copy with the switch left at torch's default, that copy with the switch given on the command
line, and the shipped file with the command line turning it off again. A switch set from the file
and from the command line must make the same run. The runs go through the session's warm worker
(a fresh `check` each cost a torch start-up; tests/engine/test_isolation.py and
tests/engine/test_config_settings.py hold a warm run, a config switch's included, to a fresh
process's).

`tests/test_gallery.py` checks the counts of every snippet (this one's EXPECTED and VARIANTS
included); this file checks what those counts cannot: where the break is, which break it is, and
that `settings.config` names the switch in the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from playground.cli.flags import overrides_of
from playground.cli.main import parse
from playground.engine.snippet import prepare_run
from playground.engine.sync import SyncWorker
from tests.requests import request_for

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "snippets" / "config_scalar_outputs.py"
KEY = "dynamo.capture_scalar_outputs"
#: The SETTINGS line that sets the switch, and what the copy "without the switch" has instead
#: (same line count, so that the break's line is the same in both files).
SWITCH_LINE = f'"config": {{"{KEY}": True}},'
NO_SWITCH_LINE = '"config": {},'


def _check(worker: SyncWorker, path: Path, *flags: str) -> dict[str, Any]:
    """The contract's JSON report of `compile-playground check --json --no-timing PATH FLAGS`: the
    flags through check's own parser, the settings resolved as check resolves them."""
    args = parse("check", ["--json", "--no-timing", str(path), *flags])
    prepared = prepare_run(path, overrides_of(args))
    assert prepared.error is None, prepared.error
    return worker.run(request_for(str(path), prepared.settings, timing=False, prepared=prepared)).report.to_dict()


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    """What the lesson is about: counts, break sites, equivalence; the file path left out."""
    return {
        "graph_count": report["graph_count"],
        "graph_break_count": report["graph_break_count"],
        "recompile_count": report["recompile_count"],
        "breaks": [(b.get("gb_id"), b["line"], b["count"]) for b in report["graph_breaks"]],
        "error": report["error"],
        "equivalence_ok": report["equivalence"]["ok"] if report["equivalence"] else None,
    }


def _item_line() -> int:
    """The snippet's `.item()` line, where the break is without the switch."""
    lines = SNIPPET.read_text(encoding="utf-8").splitlines()
    return next(n for n, text in enumerate(lines, 1) if "= gain.item()" in text)


@pytest.fixture(scope="module")
def without_switch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the snippet whose SETTINGS leaves the switch at torch's default."""
    text = SNIPPET.read_text(encoding="utf-8")
    assert text.count(SWITCH_LINE) == 1, f"{SNIPPET.name} no longer sets {KEY} on one line"
    copy = tmp_path_factory.mktemp("gallery_config") / SNIPPET.name
    copy.write_text(text.replace(SWITCH_LINE, NO_SWITCH_LINE), encoding="utf-8")
    return copy


@pytest.fixture(scope="module")
def shipped(worker: SyncWorker) -> dict[str, Any]:
    """The snippet as shipped: the switch comes from its SETTINGS."""
    return _check(worker, SNIPPET)


@pytest.fixture(scope="module")
def broken(worker: SyncWorker, without_switch: Path) -> dict[str, Any]:
    """The copy without the switch: torch's default behaviour."""
    return _check(worker, without_switch)


def test_without_the_switch_item_breaks_and_recompiles(broken: dict[str, Any]) -> None:
    assert broken["settings"]["config"] == {}
    assert _summary(broken) == {
        "graph_count": 3,
        "graph_break_count": 1,
        "recompile_count": 1,
        "breaks": [("GB0124", _item_line(), 1)],
        "error": None,
        "equivalence_ok": True,
    }
    (site,) = broken["graph_breaks"]
    assert "capture_scalar_outputs" in site["reason"] and "capture_scalar_outputs" in site["hint"]
    # the resume function after the break is what recompiles, on the value read by .item()
    assert broken["recompiles"][0]["function"].startswith("torch_dynamo_resume_in_fn_at_")


def test_the_switch_in_settings_removes_the_break(shipped: dict[str, Any]) -> None:
    assert shipped["settings"]["config"] == {KEY: True}
    assert _summary(shipped) == {
        "graph_count": 1,
        "graph_break_count": 0,
        "recompile_count": 0,
        "breaks": [],
        "error": None,
        "equivalence_ok": True,
    }
    assert all(g["ok"] for g in shipped["equivalence"]["grads"]) and shipped["equivalence"]["grads"]
    # the read is inside the one graph now, as an op on an unbacked symbol
    assert ".item()" in shipped["graphs"][0]["code"]


def test_the_switch_on_the_command_line_is_the_switch_in_settings(
    worker: SyncWorker, shipped: dict[str, Any], without_switch: Path
) -> None:
    flagged = _check(worker, without_switch, "--config", f"{KEY}=true")
    assert flagged["settings"] == shipped["settings"]
    assert _summary(flagged) == _summary(shipped)


def test_the_command_line_turns_the_settings_switch_off(worker: SyncWorker, broken: dict[str, Any]) -> None:
    """The command line wins over SETTINGS: False given there is torch's default behaviour."""
    unflagged = _check(worker, SNIPPET, "--config", f"{KEY}=false")
    assert unflagged["settings"]["config"] == {KEY: False}
    assert _summary(unflagged) == _summary(broken)
