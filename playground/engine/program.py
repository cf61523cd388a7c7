"""A program: a file run as `python FILE ARGS` runs it, with its own torch.compile calls.
Torch-free: the front end decides the mode before the request leaves (the worker never guesses),
and the same decision is on screen and in the report.

A file is a program when it calls torch.compile itself and is no snippet: it defines no target
(`model` or `fn` at module level), or no `inputs()` to call one with (a script's
`model = torch.compile(Net())` names a target but gives the playground nothing to call it
with); or when the user says so (`--program`). Deciding it from the text, with `ast`, costs a
parse and never runs the file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from playground.engine.report.program import ProgramRun
from playground.engine.report.run import Report

__all__ = ["PROGRAM_TOGGLES", "ProgramOptions", "ProgramRun", "callable_key", "is_program", "matches", "taken_for"]

#: The module-level names that make a file a snippet (contract: "the target").
TARGET_NAMES = ("model", "fn")

#: The module-level name a snippet calls its target with (contract: `inputs()`).
INPUTS_NAME = "inputs"

#: The settings that, toggled, replace a program's own torch.compile arguments.
PROGRAM_TOGGLES = ("backend", "fullgraph", "dynamic", "mode")


@dataclass(frozen=True)
class ProgramOptions:
    """What the command line says about programs, held for every save: the program's own
    arguments, the bounds, `--program`, and `--callable` (the toggles' one target)."""

    args: tuple[str, ...] = ()
    max_calls: int | None = None
    max_seconds: float | None = None
    forced: bool = False
    only: str | None = None
    #: --compare-calls: each callable's first calls compared with the eager reference (None:
    #: the worker's default).
    compare_calls: int | None = None
    #: --snippet: the file runs as a snippet even though it looks like a program.
    snippet: bool = False

    def run_for(
        self, text: str | None, toggled: tuple[str, ...], only: str | None = None, argv0: str = ""
    ) -> ProgramRun | None:
        """The program run of a file's `text` now (None: it runs as a snippet), with the
        settings the user set (`toggled`) laid over the program's own; `only` (else the
        command line's) narrows them to one callable; `argv0` the file as the command line spelled
        it. Decided on every save: an edit that adds a `model` makes the file a snippet again."""
        if self.snippet or (not self.forced and not (text and is_program(text))):
            return None
        return ProgramRun(
            args=self.args,
            max_calls=self.max_calls,
            max_seconds=self.max_seconds,
            toggled=toggled,
            forced=self.forced,
            only=only if only is not None else self.only,
            compare_calls=self.compare_calls,
            argv0=argv0,
        )

    def words(self) -> str:
        """How it runs, for the screen: `program -- --epochs 2 (max 200 calls)`."""
        text = "program" + (" (forced)" if self.forced else "")
        if self.args:
            text += " -- " + " ".join(self.args)
        bounds = [f"max {self.max_calls} calls"] if self.max_calls else []
        bounds += [f"max {self.max_seconds:g} s"] if self.max_seconds else []
        return text + (f" ({', '.join(bounds)})" if bounds else "")


def callable_key(name: str, index: int, names: list[str]) -> str:
    """A compiled callable's key in a report: its name, or name#N (N: the order torch.compile
    made it) where several share the name; `names` are all of the report's callables' names."""
    return name if names.count(name) == 1 else f"{name}#{index}"


def matches(only: str | None, name: str, index: int) -> bool:
    """Whether the toggles' target `only` names this callable: every one when None, by name
    (every callable of that name), or by name#N (that one)."""
    return only is None or only == name or only == f"{name}#{index}"


def defines_target(tree: ast.Module) -> bool:
    """Whether the module binds `model` or `fn` at its top level (an assignment, a def, a class,
    an import as), the way the contract's snippet does."""
    return _binds(tree, TARGET_NAMES)


def defines_inputs(tree: ast.Module) -> bool:
    """Whether the module binds `inputs` at its top level as a function, as a snippet does:
    a def, a lambda, an import or another name. A script's `inputs = torch.randn(8, 8)` is
    data, not the contract's `inputs()`."""
    for node in tree.body:
        if INPUTS_NAME not in _bound(node):
            continue
        value = getattr(node, "value", None)
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or isinstance(
            value, (ast.Lambda, ast.Name, ast.Attribute)
        ):
            return True
    return False


def _binds(tree: ast.Module, names: tuple[str, ...]) -> bool:
    return any(name in names for node in tree.body for name in _bound(node))


#: Modules whose `.compile` is not torch's: `re.compile(...)` alone makes no program.
NOT_TORCH = frozenset({"re", "regex", "sre_compile", "py_compile", "codeop"})


def calls_compile(tree: ast.Module) -> bool:
    """Whether the file calls torch.compile anywhere: `torch.compile(...)`, `@torch.compile`,
    `x.compile(...)` (nn.Module.compile), `compile` imported from torch, or
    `torch._dynamo.optimize(...)`."""
    from_torch = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "torch":
            from_torch |= {a.asname or a.name for a in node.names if a.name == "compile"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("compile", "optimize"):
            if node.attr == "compile" and _dotted(node.value) not in NOT_TORCH:
                return True
            if _dotted(node.value).endswith("_dynamo"):
                return True
        if isinstance(node, ast.Name) and node.id in from_torch:
            return True
    return False


def is_program(text: str) -> bool:
    """The file's text is a program: torch.compile (or torch._dynamo) called, and no target or
    no `inputs()` function (a snippet needs both; without them it could only fail). A file
    that does not parse is not one (the run reports its syntax error as a snippet's)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return not (defines_target(tree) and defines_inputs(tree)) and calls_compile(tree)


def taken_for(text: str | None, program: bool) -> str:
    """One line for a file that looks like neither a snippet nor a program: what it was taken
    for and how to force the other ("" for a file that is plainly one of them, or was not read or
    holds nothing: its error says why)."""
    if not text or not text.strip():
        return ""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ""
    snippet_like = defines_target(tree) and defines_inputs(tree)
    if program and snippet_like:
        return "run as a program (--program); without it the file is a snippet (its model or fn and inputs())"
    if not program and not snippet_like:
        return (
            "taken for a snippet, but it defines no `model` or `fn` with an `inputs()` function and calls no "
            "torch.compile: --program runs it as `python FILE`"
        )
    return ""


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names = []
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
    if isinstance(node, (ast.If, ast.Try, ast.With)):
        # `if __name__ == "__main__": model = ...` binds it only when run as a program; a
        # snippet's target must exist when it is imported, so only plain statements count.
        return []
    return names


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def focused(report: Report, key: str | None) -> Report:
    """`report` as the app's panes show one compiled callable (`key`, as `callable_key` names
    it): its own graphs, breaks, recompiles, guards, values and times in the top-level keys,
    torch's explanation kept to its compile ids. The report itself when `key` names none."""
    if key is None or report.kind != "program":
        return report
    names = [c.name for c in report.callables]
    chosen = next((c for c in report.callables if callable_key(c.name, c.index, names) == key), None)
    if chosen is None:
        return report
    ids = {g.compile_id for g in chosen.guards} | {r.compile_id for r in chosen.recompiles if r.compile_id}
    functions = {g.function for g in chosen.guards}
    explanation = report.explanation
    explanation = replace(
        explanation,
        recompiles=tuple(d for d in explanation.recompiles if d.entry in ids),
        limits=tuple(d for d in explanation.limits if d.function in functions),
        guards=tuple(e for e in explanation.guards if e.compile_id in ids),
        symbols=tuple(s for s in explanation.symbols if s.compile_id in ids),
        specializations=tuple(s for s in explanation.specializations if s.compile_id in ids),
        calls=(),  # which entry served each of the program's calls: not kept per callable
    )
    return replace(
        report,
        calls=chosen.calls,
        graph_count=chosen.graph_count,
        graph_breaks=chosen.graph_breaks,
        graph_break_count=chosen.graph_break_count,
        recompiles=chosen.recompiles,
        recompile_count=chosen.recompile_count,
        recompile_limit_hit=chosen.recompile_limit_hit,
        guards=chosen.guards,
        equivalence=chosen.equivalence,
        timings=chosen.timings,
        explanation=explanation,
    )
