"""No two of the project's modules import each other, directly or through others.

import-linter's contracts keep the packages in layers, but a circle inside one package passes
them. The graph here is read from the source with `ast`, so it holds every import that
import-linter sees and more: those under `if TYPE_CHECKING:` (a type-only circle is still two
modules that cannot be read apart) and those inside functions (a lazy import is still an import).
An import of a package's submodule (`from playground.worker.run import loading`) counts as an
import of that submodule; a package's own `__init__` counts only when it is named.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("playground", "tui")


def _modules() -> dict[str, Path]:
    """Every module of the project by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if "__snapshots__" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(node: ast.AST, module: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    """The project's modules one import statement names."""
    names: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            # `import a.b.c` binds `a` but runs a.b.c: the deepest module of ours it names.
            parts = alias.name.split(".")
            for end in range(len(parts), 0, -1):
                if ".".join(parts[:end]) in modules:
                    names.add(".".join(parts[:end]))
                    break
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, node.module] if node.module else base)
        else:
            source = node.module or ""
        for alias in node.names:
            if f"{source}.{alias.name}" in modules:
                names.add(f"{source}.{alias.name}")
            elif source in modules:
                names.add(source)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports, wherever in the file the import is."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(tree):
            edges |= _imported(node, name, is_package, modules)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (`a -> b -> a`) per group of modules that import each other (Tarjan's strongly
    connected components, then a shortest path back to the first module of each)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative: a deep import chain must not hit the recursion limit.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return [_circle(graph, group) for group in sorted(groups)]


def _circle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    members = set(group)
    start = group[0]
    paths = {child: [start, child] for child in sorted(graph[start] & members)}
    frontier = list(paths)
    while start not in paths:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    nxt.append(child)
        frontier = nxt
    return paths[start]


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    # A function-level import, a type-only import and a plain one, each known to exist.
    assert "playground.worker.run.experiment" in graph["playground.worker.process.child"]
    assert "playground.worker.capture.records" in graph["playground.worker.process.child"]
    assert "playground.engine.report" in graph["playground.worker.capture.diagnostics"]


def test_cycles_finds_a_circle_and_names_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_no_module_imports_itself_through_others():
    found = cycles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" -> ".join(circle) for circle in found)
