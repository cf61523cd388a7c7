"""The command palette: every key's command, from the same table as the bindings, and every
backend the worker's torch registers, including those `b` does not cycle through."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from textual.actions import parse
from textual.command import DiscoveryHit, Hit, Hits, Provider

from playground.engine.hello import ConfigKey, WorkerHello
from playground.engine.settings import COMMON_CONFIG, STANCES, Settings, parse_config_assignment
from tui.keys.table import KEYS, Key
from tui.run.toggles import cycle_backends

#: What the palette asks `check_action` before it offers a setting: may settings change now.
SETTINGS_ACTION = ("toggle", ("backend",))


def enabled(app: Any, action: str) -> bool:
    """Whether `app` would run `action` now (a key's action string, parameters and all)."""
    _, name, parameters = parse(action)
    return app.check_action(name, parameters) is True


class KeyCommands(Provider):
    """One command per key; the key is named in the help text so the palette teaches it."""

    def _keys(self) -> list[Key]:
        # Disabled actions (cuda without cuda) are left out rather than failing when chosen.
        return [k for k in KEYS if enabled(self.app, k.action)]

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


def palette_backends(hello: WorkerHello | None) -> tuple[str, ...]:
    """Every backend the palette offers: the cycled ones, then the rest the worker registers."""
    registered = list(hello.backends) if hello is not None else []
    return tuple(dict.fromkeys([*cycle_backends(hello), *sorted(registered)]))


class BackendCommands(Provider):
    """`Backend: NAME` for every backend, so the ones off the `b` cycle stay one search away.
    A backend whose package is missing says so in the summary after its run."""

    def _choices(self) -> list[tuple[str, str, Any]]:
        app: Any = self.app
        if app.check_action(*SETTINGS_ACTION) is not True:
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
        # The pipeline's `set`, as `b` reaches it: marked toggled, so it replaces a program's own.
        app: Any = self.app
        if app.settings.backend == name:
            return
        if name not in cycle_backends(app.hello):
            app.notify(f"backend {name}: not one that b cycles; running it…", timeout=4)
        app.pipeline.set("backend", replace(app.settings, backend=name))

    async def discover(self) -> Hits:
        for title, help_text, run in self._choices():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self._choices():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)


def config_catalog(hello: WorkerHello | None) -> tuple[ConfigKey, ...]:
    """The config keys the palette offers: the worker's list when its hello carries one
    (`config_keys`: name, type, default), else the well-known ones of COMMON_CONFIG."""
    given = tuple(k for k in hello.config_keys if k.name) if hello is not None else ()
    if given:
        return given
    # recompile_limit is the one int among them (tests/tui/test_tui_config.py checks with torch).
    return tuple(ConfigKey(n, "int" if n.endswith("_limit") else "bool") for n in COMMON_CONFIG)


class SwitchCommands(Provider):
    """Torch's own switches from the palette: `Config: KEY = True`, `Config: unset KEY`,
    `Stance: NAME`, `error_on_graph_break: on`. A key of another type is typed into the
    palette as KEY=VALUE (e.g. `dynamo.recompile_limit=4`). Each choice reruns at once; the
    worker checks the key and type against its torch and says so if they are wrong."""

    def _enabled(self) -> bool:
        return self.app.check_action(*SETTINGS_ACTION) is True

    def _choices(self) -> list[tuple[str, str, Any]]:
        app: Any = self.app
        if not self._enabled():
            return []
        s: Settings = app.settings
        set_keys = dict(s.config)
        out = []
        for key, value in s.config:
            out.append(
                (f"Config: unset {key}", f"back to torch's default (now {value!r})", partial(self._use, key, None))
            )
        for entry in config_catalog(getattr(app, "hello", None)):
            name, kind = entry.name, entry.type
            if kind != "bool":
                continue
            for value in (True, False):
                if set_keys.get(name, object()) is not value:
                    help_text = (
                        f"torch.{'_dynamo' if name.startswith('dynamo.') else '_inductor'}.config: {name} = {value}"
                    )
                    out.append((f"Config: {name} = {value}", help_text, partial(self._use, name, value)))
        for stance in STANCES:
            if stance != s.stance:
                out.append(
                    (
                        f"Stance: {stance}",
                        f"torch.compiler.set_stance({stance!r}) for the run",
                        partial(self._stance, stance),
                    )
                )
        flip = not s.error_on_graph_break
        out.append(
            (
                f"error_on_graph_break: {'on' if flip else 'off'}",
                "a graph break raises (without fullgraph's one-graph promise)"
                if flip
                else "breaks split the graph again",
                partial(self._error_on_break, flip),
            )
        )
        if s.switch_words():
            out.append(
                ("Config: clear torch's switches", "every config key, the stance and error_on_graph_break", self._clear)
            )
        return out

    def _typed(self, query: str) -> tuple[str, str, Any] | None:
        """`KEY=VALUE` typed into the palette, as a command."""
        if "=" not in query:
            return None
        try:
            key, value = parse_config_assignment(query.strip())
        except ValueError:  # not a KEY=VALUE: offer nothing
            return None
        return (
            f"Config: set {key} = {value!r}",
            "the worker checks the key and its type",
            partial(self._use, key, value),
        )

    def _apply(self, settings: Settings, what: str) -> None:
        app: Any = self.app
        app.pipeline.set(what, settings)

    def _use(self, key: str, value: Any) -> None:
        app: Any = self.app
        self._apply(app.settings.with_config(key, value, unset=value is None), f"config {key}")

    def _stance(self, stance: str) -> None:
        app: Any = self.app
        self._apply(replace(app.settings, stance=stance), "stance")

    def _error_on_break(self, on: bool) -> None:
        app: Any = self.app
        self._apply(replace(app.settings, error_on_graph_break=on), "error_on_graph_break")

    def _clear(self) -> None:
        app: Any = self.app
        self._apply(replace(app.settings, config=(), stance="default", error_on_graph_break=False), "switches cleared")

    async def discover(self) -> Hits:
        for title, help_text, run in self._choices():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        typed = self._typed(query) if self._enabled() else None
        if typed is not None:
            yield Hit(1.0, typed[0], typed[2], help=typed[1])
        for title, help_text, run in self._choices():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)
