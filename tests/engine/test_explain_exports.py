"""The Markdown export's Recompiles and Guards sections: one row per recompile and
argument, the internal guards counted not listed, no row repeating every older entry. On the
canned lr_float_static report (torch 2.13) and on a real `check --markdown` of the gallery's
why_recompile.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from playground.engine.exports import markdown_report
from playground.engine.report import Report

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "tui" / "fixtures" / "why_recompile_lr.json"


def _section(md: str, title: str) -> list[str]:
    lines = md.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return lines.splitlines()


def _canned() -> str:
    report = json.loads(FIXTURE.read_text(encoding="utf-8"))
    report["snippet"] = str(ROOT / "tests" / "tui" / "fixtures" / "lr_float_static.py")
    return markdown_report(Report.from_dict(report))


def test_one_row_per_recompile_with_function_argument_values_and_line():
    rows = [line for line in _section(_canned(), "Recompiles") if line.startswith("| ") and "`fn`" in line]
    assert len(rows) == 8
    assert rows[0] == (
        "| 2 | `fn` | 0/1 | `lr` | `0.1` -> `0.09829629131445342` | 37 | `return w - lr * (grad + 1e-4 * w)` | 0/0 |"
    )
    assert rows[-1].startswith("| 9 | `fn` | none (recompile_limit) | `lr` | `0.03705904774487397` -> ")


def test_no_row_repeats_the_older_entries():
    section = _section(_canned(), "Recompiles")
    # torch's 8th reason lists all 8 entries; the row counts them instead
    assert any(line.endswith("| 8 (0/7 … 0/0) |") for line in section)
    assert max(line.count("lr ==") for line in section) == 0  # no raw guard text: values in their columns
    assert max(len(line) for line in section) < 200


def test_limit_and_calls_read_as_sentences():
    section = "\n".join(_section(_canned(), "Recompiles"))
    assert "`fn` hit recompile_limit = 8, used up by changes of `lr` (8 recompiles)." in section
    assert "- call 3 ran entry 0/2 (compiled now: recompiled because lr changed" in section
    assert "- call 9 ran eagerly: no entry's guards passed (recompile_limit hit on this call)" in section


def test_guards_grouped_by_line_internal_folded_later_entries_as_differences():
    guards = _section(_canned(), "Guards")
    text = "\n".join(guards)
    assert "(14 internal guards of torch's own state not listed)" in text
    assert "| 37 | `return w - lr * (grad + 1e-4 * w)` | `w: float32 size=[64]`; `lr == 0.1`; " in text
    for internal in ("GLOBAL_STATE", "___check_global_state", "top_saved_tensors_hooks", "_dynamo_dynamic_indices"):
        assert internal not in text
    assert "- entry 0/1 differs from the one before in: `lr == 0.09829629131445342` (line 37)" in guards
    assert sum(line.startswith("Entry ") for line in guards) == 1  # one full table per function


def test_check_markdown_on_the_gallery_snippet():
    """The real worker on snippets/why_recompile.py: two recompiles, the second failing two entries."""
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", "snippets/why_recompile.py", "--markdown", "--no-timing"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in _section(done.stdout, "Recompiles") if line.startswith("| ") and "`fn`" in line]
    assert rows == [
        "| 3 | `fn` | 0/1 | `scale` | `2.0` -> `3.0` | 38 | `y = x * scale  # guard: scale == <its value>` | 0/0 |",
        "| 4 | `fn` | 0/2 | `act` | `'relu'` -> `'tanh'` | 39 | `if act == \"relu\":  # guard: act == 'relu'` | 0/1 |",
        "| 4 | `fn` | 0/2 | `scale` | `2.0` -> `3.0` | 38 | `y = x * scale  # guard: scale == <its value>` | 0/0 |",
    ]
    assert "- call 5 ran entry 0/0 (cached)" in done.stdout
    guards = "\n".join(_section(done.stdout, "Guards"))
    assert "| 39 | `if act == \"relu\":  # guard: act == 'relu'` | `act == 'relu'` |" in guards
