"""The app's run flags hold for every run, as they do for `watch`: `--no-timing` and
`--min-run-time` reach each run's request (they were parsed and then ignored)."""

from __future__ import annotations

from typing import Any

import pytest
from tui_fakes import FakeEngine, settle

from playground.cli import main as cli_main
from playground.engine.passes import NO_PASSES, Passes
from playground.engine.run_request import RunFlags
from tui.factory import make_app


async def test_every_run_takes_the_command_lines_run_flags_beside_the_passes_asked(snippet):
    fake = FakeEngine()
    flags = RunFlags(timing=False, min_run_time=0.5)
    app = make_app(snippet, engine=fake, watch=False, run_flags=flags)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)
    assert [r.flags for r in fake.requests] == [flags, flags]
    assert [r.passes for r in fake.requests] == [NO_PASSES, Passes(kernels=True)]


@pytest.mark.parametrize(
    ("argv", "timing", "min_run_time"),
    [
        (["x.py", "--no-timing"], False, 0.2),
        (["x.py", "--min-run-time", "0.5"], True, 0.5),
        (["x.py"], True, 0.2),
    ],
)
def test_the_app_command_hands_its_run_flags_to_the_app(monkeypatch, argv, timing, min_run_time):
    seen: dict[str, Any] = {}

    def fake_app(path: str, overrides: dict[str, Any], **kwargs: Any) -> int:
        seen.update(kwargs, path=path)
        return 0

    monkeypatch.setattr("tui.cli.main", fake_app)
    assert cli_main.main(argv) == 0
    assert seen["path"] == "x.py" and seen["timing"] is timing and seen["min_run_time"] == min_run_time
