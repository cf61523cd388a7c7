"""The app's run flags hold for every run, as they do for `watch`: `--no-timing` and
`--min-run-time` reach each run's options (they were parsed and then ignored)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tui_fakes import FIXTURES, FakeEngine

from playground.cli import main as cli_main
from playground.engine.settings import Settings
from tui.engine.protocol import WithRunDefaults


def test_every_run_takes_the_defaults_and_a_run_may_say_otherwise():
    fake = FakeEngine()
    engine = WithRunDefaults(fake, {"timing": False, "min_run_time": 0.5})

    async def go() -> None:
        assert (await engine.start()) == fake.hello and engine.hello == fake.hello
        await engine.run(str(FIXTURES / "branch.py"), Settings(), None, kernels=True)
        await engine.run(str(FIXTURES / "branch.py"), Settings(), None, timing=True)
        await engine.cancel()
        await engine.close()

    asyncio.run(go())
    assert fake.options[0] == {"timing": False, "min_run_time": 0.5, "kernels": True}
    assert fake.options[1] == {"timing": True, "min_run_time": 0.5}
    assert fake.closed


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
