"""The command palette lists every key's command, from the same table as the bindings."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.keys import KEYS, Key


class KeyCommands(Provider):
    """One command per key; the key is named in the help text so the palette teaches it."""

    def _keys(self) -> list[Key]:
        # Disabled actions (cuda without cuda) are left out rather than failing when chosen.
        return [k for k in KEYS if self.app.check_action(k.action.split("(")[0], ()) is True]

    def _run(self, key: Key):
        return partial(self.app.run_action, key.action)

    def _help(self, key: Key) -> str:
        return f"key {key.key if key.id.startswith('pane-') else key.shown_key}: {key.help}"

    async def discover(self) -> Hits:
        for key in self._keys():
            yield DiscoveryHit(key.title, self._run(key), help=self._help(key))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for key in self._keys():
            score = matcher.match(f"{key.title} {key.label}")
            if score > 0:
                yield Hit(score, matcher.highlight(key.title), self._run(key), help=self._help(key))
