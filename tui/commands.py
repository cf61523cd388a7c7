"""The command palette: every key's command, from the same table as the bindings, and every
backend the worker's torch registers, including those `b` does not cycle through."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from playground.settings import CORE_BACKENDS
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


def cycle_backends(hello: dict[str, Any] | None) -> tuple[str, ...]:
    """What `b` cycles: the backends that work wherever torch runs (eager, aot_eager,
    inductor), and cudagraphs when the worker says CUDA is available. The others torch
    registers (tvm, openxla, onnxrt…) mostly need packages a machine lacks: palette only."""
    cuda = bool((hello or {}).get("cuda_available"))
    return (*CORE_BACKENDS, *(("cudagraphs",) if cuda else ()))


def palette_backends(hello: dict[str, Any] | None) -> tuple[str, ...]:
    """Every backend the palette offers: the cycled ones, then the rest the worker registers."""
    registered = [str(name) for name in (hello or {}).get("backends") or ()]
    return tuple(dict.fromkeys([*cycle_backends(hello), *sorted(registered)]))


class BackendCommands(Provider):
    """`Backend: NAME` for every backend, so the ones off the `b` cycle stay one search away.
    A backend whose package is missing says so in the summary after its run."""

    def _choices(self) -> list[tuple[str, str, Any]]:
        app: Any = self.app
        if app.check_action("cycle_backend", ()) is not True:
            return []
        hello = getattr(app, "hello", None)
        cycled = cycle_backends(hello)
        choices = []
        for name in palette_backends(hello):
            if name in cycled:
                help_text = f"compile with backend={name!r} (also on key b)"
            else:
                help_text = (
                    f"compile with backend={name!r}: registered by the worker's torch, not on key b; "
                    "if it needs a package that is not installed, the run says so"
                )
            choices.append((f"Backend: {name}", help_text, partial(self._use, name)))
        return choices

    def _use(self, name: str) -> None:
        app: Any = self.app
        if app.settings.backend == name:
            return
        if name not in cycle_backends(app.hello):
            app.notify(f"backend {name}: not one that b cycles; running it…", timeout=4)
        app.settings = replace(app.settings, backend=name)
        app.request_run("backend changed")

    async def discover(self) -> Hits:
        for title, help_text, run in self._choices():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self._choices():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)
