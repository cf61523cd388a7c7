"""The app's title names the snippet on one line: a newline in the file name had cut the title
(the rest of the name, the torch version and the device never shown)."""

from __future__ import annotations

from pathlib import Path

from tui_fakes import FIXTURES, FakeEngine, bar_text, settle

from tui.factory import make_app


async def test_a_newline_in_the_file_name_stays_in_the_title(tmp_path: Path):
    path = tmp_path / "a\nb.py"
    path.write_text((FIXTURES / "branch.py").read_text())
    app = make_app(path, engine=FakeEngine(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        title = bar_text(app, "title")
        assert "\n" not in title.rstrip("\n")
        assert "a\u2424b.py  torch" in title, title
