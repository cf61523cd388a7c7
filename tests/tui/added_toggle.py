"""A toggle added as one row of the toggles' table, and nothing else: run as
`python tests/tui/added_toggle.py KIND` by tests/tui/test_tui_new_toggle.py, it adds the row
before anything of the app is imported (the key table, the palette and the bar read the table
as they are imported), drives the new toggle once by its key and once from the palette, each in
a fresh app, and prints what each route asked of the engine and what the settings bar said.

KIND "pass": Dynamo's code as a pass on key D, named on the bar only when on; "setting":
error_on_graph_break as a setting step on key E, always on the bar."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import replace

from tui.run import toggles

ADDED = {
    "pass": toggles.Toggle(
        "dynamo_code",
        "D",
        "code",
        "Ask for Dynamo's code",
        "every run from now on decompiles the code Dynamo wrote",
        "dynamo-code",
        bar=("dynamo code", "code", ""),
        shown=lambda _settings, passes: "on" if passes.dynamo_code else None,
        reason="dynamo code",
        when_set=True,
    ),
    "setting": toggles.Toggle(
        "error_on_graph_break",
        "E",
        "break raises",
        "Toggle error_on_graph_break",
        "a graph break raises, without fullgraph's one graph",
        "error-on-graph-break",
        bar=("break raises", "raises", ""),
        shown=lambda settings, _passes: "yes" if settings.error_on_graph_break else "no",
        step=lambda settings, _hello: replace(settings, error_on_graph_break=not settings.error_on_graph_break),
    ),
}


async def _routes(added: toggles.Toggle) -> dict[str, object]:
    from test_tui_one_route import _asked, _pick, _program_app
    from tui_fakes import bar_text, settle

    from tui.keys.commands import KeyCommands

    out: dict[str, object] = {}
    by_key, key_engine = _program_app()
    async with by_key.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        out["bar_before"] = bar_text(by_key, "settings")
        await pilot.press(added.key)
        await settle(pilot)
        out["key_requests"] = len(key_engine.requests)
        out["first"] = repr(_asked(key_engine.requests[0]))
        out["from_key"] = repr(_asked(key_engine.requests[-1]))
        out["key_bar"] = bar_text(by_key, "settings")
        out["asked"] = [
            getattr(key_engine.requests[-1].passes, added.name, None),
            getattr(key_engine.requests[-1].settings, added.name, None),
        ]
    by_palette, palette_engine = _program_app()
    async with by_palette.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await _pick(by_palette, KeyCommands, added.title)
        await settle(pilot)
        out["palette_requests"] = len(palette_engine.requests)
        out["from_palette"] = repr(_asked(palette_engine.requests[-1]))
        out["palette_bar"] = bar_text(by_palette, "settings")
    return out


def main(kind: str) -> None:
    added = ADDED[kind]
    toggles.TOGGLES = (*toggles.TOGGLES, added)  # the one table, and nothing else
    print(json.dumps(asyncio.run(_routes(added))))


if __name__ == "__main__":
    main(sys.argv[1])
