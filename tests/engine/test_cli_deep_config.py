"""--config with a value nested thousands deep is refused as a 4-deep one is: argparse's one line
and exit 2, from every command that takes it. json.loads had raised RecursionError, and the CLI
printed its traceback and exited 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults import GOOD

DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    "command", [["check"], ["watch", "--json-lines"], ["matrix"], []], ids=["check", "watch", "matrix", "app"]
)
@pytest.mark.parametrize("value", [DEEP, "[[[[1]]]]"], ids=["5000-deep", "4-deep"])
def test_a_deeply_nested_config_value_is_refused_in_one_line(tmp_path: Path, command: list[str], value: str):
    snippet = tmp_path / "snip.py"
    snippet.write_text(GOOD)
    result = subprocess.run(
        [sys.executable, "-m", "playground", *command, str(snippet), "--config", f"dynamo.recompile_limit={value}"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert "argument --config" in result.stderr and "is not a value for dynamo.recompile_limit" in result.stderr
    assert len(result.stderr) < 2000
