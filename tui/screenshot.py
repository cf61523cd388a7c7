"""Render the app on a saved report to an SVG, for the README: `python -m tui.screenshot`
writes every picture the README shows (`SHOTS`); with `--report`, one picture as asked.

A replayed report, never a live run, so the picture is the same on every machine and shows
exactly what the report says (../shared/STYLE.md: never snapshot a live torch run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from playground.engine.events import EventHandler, RunResult
from playground.engine.report import Report
from playground.engine.settings import Settings
from tui.factory import make_app

ROOT = Path(__file__).resolve().parents[1]


class ReplayEngine:
    """An engine that answers every run with one saved report."""

    def __init__(self, report: dict[str, Any], hello: dict[str, Any] | None = None) -> None:
        self.report = Report.from_dict(report)
        self.hello: dict[str, Any] | None = None
        self._hello = hello or {
            "torch_version": report.get("torch_version", ""),
            "cuda_available": False,
            "backends": [],
        }

    async def start(self) -> dict[str, Any]:
        self.hello = self._hello
        return self.hello

    async def run(
        self, path: str, settings: Settings, on_event: EventHandler | None = None, **options: Any
    ) -> RunResult:
        return RunResult(self.report)

    async def cancel(self) -> None:
        pass

    async def close(self) -> None:
        pass


async def _shoot(report: dict[str, Any], snippet: Path, out: Path, size: tuple[int, int], keys: list[str]) -> None:
    app = make_app(snippet, engine=ReplayEngine(report), watch=False, clock=lambda: 0.0)
    async with app.run_test(size=size) as pilot:
        while app.main.view.run.kind != "done":
            await pilot.pause(0.02)
        for key in keys:
            await pilot.press(key)
        await pilot.pause()
        out.parent.mkdir(parents=True, exist_ok=True)
        app.save_screenshot(filename=out.name, path=str(out.parent))


def save_screenshot(
    report: dict[str, Any], snippet: Path, out: Path, size: tuple[int, int] = (100, 30), keys: list[str] | None = None
) -> Path:
    """The app on `snippet` showing `report`, at `size`, after pressing `keys`, saved to `out`."""
    asyncio.run(_shoot(report, snippet, out, size, keys or []))
    return out


#: The README's pictures: report, snippet, picture, COLUMNSxROWS, keys pressed first.
SHOTS: tuple[tuple[str, str, str, str, str], ...] = (
    ("tests/tui/fixtures/default.json", "snippets/default.py", "docs/screenshot.svg", "100x30", ""),
    (
        "tests/tui/fixtures/llama_guards.json",
        "tests/tui/fixtures/llama.py",
        "docs/screenshot_llama_guards.svg",
        "80x24",
        "4",
    ),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="one picture of this report (default: every picture in SHOTS)")
    parser.add_argument("--snippet", type=Path, default=ROOT / "snippets/default.py")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/screenshot.svg")
    parser.add_argument("--size", default="100x30", help="COLUMNSxROWS")
    parser.add_argument("--keys", default="", help="keys to press first, comma-separated")
    args = parser.parse_args(argv)
    if args.report is None:
        for report, snippet, out, size, keys in SHOTS:
            main(
                ["--report", str(ROOT / report), "--snippet", str(ROOT / snippet), "--out", str(ROOT / out)]
                + ["--size", size, "--keys", keys]
            )
            print(out)
        return 0
    columns, rows = (int(n) for n in args.size.lower().split("x"))
    report = json.loads(args.report.read_text())
    keys = [k for k in args.keys.split(",") if k]
    save_screenshot(report, args.snippet, args.out, (columns, rows), keys)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
