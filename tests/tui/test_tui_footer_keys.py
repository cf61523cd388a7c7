"""The footer and the key table: both come from `tui.keys.table`'s one table, the README's table is
the generated one, and the footer fits 80 columns uncut."""

from __future__ import annotations

from pathlib import Path

from tui_fakes import FakeEngine, settle

from tui.factory import make_app
from tui.keys.table import FOOTER, KEYS, markdown_table

ROOT = Path(__file__).resolve().parents[2]


def test_footer_keys_come_from_the_one_table():
    ids = {key.id for key in KEYS}
    assert set(FOOTER) <= ids
    assert [k.id for k in KEYS if k.binding().show] == [k.id for k in KEYS if k.id in FOOTER]


def test_readme_key_table_is_the_generated_one():
    assert markdown_table() in (ROOT / "README.md").read_text()


async def test_footer_fits_80_columns_uncut(snippet: Path):
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        footer = app.main.query_one(Footer)
        keys = list(footer.query(FooterKey))
        palette = [k for k in keys if k.key_display == "^p"]
        shown = [k for k in keys if k not in palette]
        by_action = {k.key_display: k.description for k in shown}
        expected = [next(key for key in KEYS if key.id == kid) for kid in FOOTER]
        assert list(by_action.items()) == [(key.shown_key, key.label) for key in expected]
        assert len(palette) == 1
        limit = palette[0].region.x
        for key in shown:
            region = key.region
            # Whole: the key and its label fit, before the palette key and inside the screen.
            assert region.width >= len(key.key_display) + 1 + len(key.description), key.description
            assert region.right <= limit, f"{key.description} runs into ^p palette"
        assert palette[0].region.right <= 80
