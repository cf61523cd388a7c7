"""The remedies that apply to each break site and each recompiling function of a run, drawn from
what torch said (a hint naming a config key, the break's type, the failed guard) and from the
snippet's source read with `ast` (the print on the break's line, the helper the break is in).
Worker-side (torch's text is read here, once), torch-free.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from playground.engine.report import BreakSite, FixAdvice, FixTarget, Recompile, Report

#: A config assignment as torch's hints spell it: "`torch._dynamo.config.capture_scalar_outputs = True`".
_HINT_CONFIG = re.compile(r"torch\.(_dynamo|_inductor)\.config\.([A-Za-z_][\w.]*)\s*=\s*(True|False|\d+)")
#: The failed guard of a recompile on a tensor's size: "tensor 'x' size mismatch at index 0. ...".
_SIZE_GUARD = re.compile(r"tensor '(?:L\[')?(\w+)(?:'\])?' size mismatch at index (\d+)")
#: The failed guard of a recompile on a Python number: "lr == 0.1", "L['n'] == 2", "___stack0 == 1.0".
_VALUE_GUARD = re.compile(r"^(?:L\[')?(\w+)(?:'\])?\s*(?:==|<=|>=|<|>)\s*(-?[\d.e+-]+)\s*$")
#: Functions torch lets a graph reorder to its end (torch._dynamo.config.reorderable_logging_functions).
_LOGGING = ("print",)
#: The prefix of every name the variant's appended code binds (never a name of the user's).
PREFIX = "_playground_fix_"


@dataclass(frozen=True)
class Candidate:
    """One remedy for one target, and how the variant applies it: config pairs through the
    settings, settings changed (`dynamic`), or code appended to the source in memory."""

    target: FixTarget
    remedy: str
    change: str
    note: str = ""
    config: tuple[tuple[str, Any], ...] = ()
    dynamic: bool | None = None
    #: Whether `dynamic` is part of the change (None is a value of its own: automatic dynamic).
    sets_dynamic: bool = False
    epilogue: str = ""

    def application(self) -> tuple[Any, ...]:
        """What the variant runs: two candidates with the same one share a variant."""
        return (self.config, self.sets_dynamic, self.dynamic, self.epilogue)


@dataclass(frozen=True)
class Proposal:
    """Every candidate of a run, and for each target the rewrite torch documents for it (shown
    when no candidate removes it)."""

    candidates: tuple[Candidate, ...]
    rewrites: tuple[FixAdvice, ...]


def propose(report: Report, source: str, ask: str = "all") -> Proposal:
    """The candidates for `report`'s break sites and recompiles: every one for "all", one kind
    for "break" or "recompile", one site for "break:LINE" or "recompile:LINE"."""
    code = _Source(source, report.settings.target)
    found: list[Candidate] = []
    rewrites: list[FixAdvice] = []
    for site in _sites(report):
        target = FixTarget("break", site.line, what=site.gb_type)
        if not _asked(ask, target):
            continue
        found += _for_break(site, target, code)
        rewrites.append(FixAdvice(target, _break_why(site), _break_rewrite(site)))
    seen: set[tuple[int | None, str]] = set()
    for recompile in report.recompiles:
        target = FixTarget("recompile", recompile.line, recompile.function)
        if (target.line, target.function) in seen or not _asked(ask, target):
            continue
        seen.add((target.line, target.function))
        found += _for_recompile(recompile, target, code)
        rewrites.append(FixAdvice(target, *_recompile_advice(recompile)))
    return Proposal(tuple(found), tuple(rewrites))


def _asked(ask: str, target: FixTarget) -> bool:
    return ask in ("", "all", target.kind) or ask == f"{target.kind}:{target.line}"


def _sites(report: Report) -> Iterator[BreakSite]:
    """Each break site once (by line and type), the report's own grouping when it has one. Under
    fullgraph=True the break torch refused is the one site (the run stopped there): a remedy that
    removes it is what lets the whole graph compile."""
    refused = report.error.refused if report.error is not None else None
    if report.break_sites:
        sites = list(report.break_sites)
    else:
        breaks = [*report.graph_breaks, *((refused,) if refused is not None else ())]
        sites = [
            BreakSite(file=b.file, line=b.line, gb_id=b.gb_id, gb_type=b.gb_type or b.reason, hints=b.hints)
            for b in breaks
        ]
    seen: set[int | None] = set()
    for site in sites:
        if site.line is None or site.line in seen:
            continue  # a break outside the snippet: nothing of the user's to change
        seen.add(site.line)
        yield site


# --- breaks ------------------------------------------------------------------------------------


def _for_break(site: BreakSite, target: FixTarget, code: _Source) -> list[Candidate]:
    found: list[Candidate] = []
    text = " ".join((*site.hints, site.explanation, site.registry_explanation, site.gb_type))
    for module, key, value in dict.fromkeys(_HINT_CONFIG.findall(text)):
        prefix = "dynamo" if module == "_dynamo" else "inductor"
        literal = {"True": True, "False": False}.get(value, value)
        parsed = int(literal) if isinstance(literal, str) else literal
        found.append(
            Candidate(
                target,
                "config",
                f"torch.{module}.config.{key} = {value}",
                note="the key torch's hint names",
                config=((f"{prefix}.{key}", parsed),),
            )
        )
    if not found and "data-dependent branching" in site.gb_type.lower():
        # No hint names a switch; scalar capture is the one a reader reaches for: tried, so the
        # report shows what it does to the branch rather than leaving the question open.
        found.append(
            Candidate(
                target,
                "config",
                "torch._dynamo.config.capture_scalar_outputs = True",
                note="captures the tensor's value as a symbol; a Python branch on it still needs its outcome",
                config=(("dynamo.capture_scalar_outputs", True),),
            )
        )
    logging_call = code.logging_call(target.line)
    if logging_call:
        found.append(
            Candidate(
                target,
                "reorderable_logging",
                f"torch._dynamo.config.reorderable_logging_functions.add({logging_call})",
                note=f"Dynamo moves each {logging_call} call to after the graph, with the values it was given",
                config=(("dynamo.reorderable_logging_functions", (logging_call,)),),
            )
        )
    helper = code.helper_at(target.line)
    if helper is not None:
        found += _helper_remedies(target, helper, code)
    return found


def _helper_remedies(target: FixTarget, helper: _Helper, code: _Source) -> list[Candidate]:
    """torch's documented ways to stop tracing into a function of the user's: run it in Python
    (disable), trace it without Dynamo's checks (nonstrict_trace), put the call in the graph as
    is (allow_in_graph), or make it an opaque custom op with a fake implementation."""
    name = helper.name
    wrap = f"import torch as {PREFIX}torch\n{name} = {PREFIX}torch.{{}}({name})\n"
    found = [
        Candidate(
            target,
            "disable",
            f"@torch.compiler.disable\ndef {name}(...): ...",
            note=f"{name} runs eagerly, in Python: the break moves to its call, which is one graph split",
            epilogue=wrap.format("compiler.disable"),
        ),
        Candidate(
            target,
            "nonstrict_trace",
            f"@torch._dynamo.nonstrict_trace\ndef {name}(...): ...",
            note=f"{name} is traced without Dynamo (its tensors' data cannot be read there)",
            epilogue=wrap.format("_dynamo.nonstrict_trace"),
        ),
        Candidate(
            target,
            "allow_in_graph",
            f"torch._dynamo.allow_in_graph({name})",
            note=f"the call to {name} goes into the graph as it is, traced by AOT autograd, not Dynamo",
            epilogue=wrap.format("_dynamo.allow_in_graph"),
        ),
    ]
    op = _custom_op(helper)
    if op is not None:
        found.append(Candidate(target, "custom_op", op[0], note=op[1], epilogue=op[2]))
    return found


def _custom_op(helper: _Helper) -> tuple[str, str, str] | None:
    """A custom op wrapping `helper` (the change, its note, the code run): its schema from the
    call's arguments (a literal number is a float or int, anything else a Tensor), its fake
    implementation an empty tensor like the first Tensor argument's."""
    if not helper.params or len(helper.params) != len(helper.arg_kinds):
        return None
    tensors = [p for p, kind in zip(helper.params, helper.arg_kinds, strict=True) if kind == "Tensor"]
    if not tensors:
        return None
    params = ", ".join(
        f"{p}: {'torch.' if k == 'Tensor' else ''}{k}" for p, k in zip(helper.params, helper.arg_kinds, strict=True)
    )
    plain = ", ".join(helper.params)
    name = helper.name
    change = (
        f'@torch.library.custom_op("playground::{name}", mutates_args=())\n'
        f"def {name}_op({params}) -> torch.Tensor:\n"
        f"    return {name}({plain}).clone()  # an op's output never aliases its input\n\n"
        f"@{name}_op.register_fake\n"
        f"def _({plain}):\n"
        f"    return torch.empty_like({tensors[0]})  # its shape and dtype, no data\n"
        f"# and call {name}_op where {name} was called"
    )
    code = (
        f"import torch\n"
        f"{PREFIX}{name} = {name}\n"
        f'@torch.library.custom_op("playground::{name}", mutates_args=())\n'
        f"def {PREFIX}{name}_op({params}) -> torch.Tensor:\n"
        f"    return {PREFIX}{name}({plain}).clone()\n"
        f"@{PREFIX}{name}_op.register_fake\n"
        f"def {PREFIX}{name}_fake({plain}):\n"
        f"    return torch.empty_like({tensors[0]})\n"
        f"{name} = {PREFIX}{name}_op\n"
    )
    note = (
        f"{name} becomes one opaque op in the graph; without torch.library.register_autograd it has no "
        "gradient, and its fake implementation must give the real output's shape"
    )
    return change, note, code


def _break_why(site: BreakSite) -> str:
    return site.gb_type or "a graph break"


def _break_rewrite(site: BreakSite) -> str:
    """The rewrite torch documents for a break no switch removes."""
    kind = f"{site.gb_type} {' '.join(site.hints)}".lower()
    if "data-dependent branching" in kind or "torch.cond" in kind:
        return (
            "torch.cond(pred, true_fn, false_fn, (x,)) keeps both branches in one graph; for an elementwise "
            "choice, torch.where(pred, a, b)"
        )
    if "item()" in kind:
        return "keep the number a tensor: torch.where(flag > 0, y * 2, y - 1) instead of `if flag.item() > 0:`"
    if "print" in kind or "builtin" in kind:
        return "print outside the compiled function, or only shapes, after the call"
    return "move the call outside the compiled function, or give torch an op it can trace"


# --- recompiles --------------------------------------------------------------------------------


def _for_recompile(recompile: Recompile, target: FixTarget, code: _Source) -> list[Candidate]:
    checks = [f.check for f in recompile.failures] or [
        r.split(":", 1)[-1].split("#")[0].strip() for r in recompile.reasons[:1]
    ]
    found: list[Candidate] = []
    for check in checks:
        size = _SIZE_GUARD.search(check)
        value = _VALUE_GUARD.match(check.split("#")[0].strip())
        if size is not None:
            name, dim = size.group(1), int(size.group(2))
            found.append(_dynamic(target, "every size of every input as a symbol from the first call"))
            index = code.param_index(name)
            if index is not None:
                found.append(
                    Candidate(
                        target,
                        "mark_dynamic",
                        f"torch._dynamo.mark_dynamic({name}, {dim})  # on each input, before the call",
                        note=f"only dim {dim} of {name} is compiled as a symbol; a size 0 or 1 still gets its own graph",
                        epilogue=_marking_inputs(index, dim),
                    )
                )
        elif value is not None:
            number = value.group(2)
            found.append(_dynamic(target, f"{value.group(1)} as a symbol from the first call, not as a constant"))
            if "." in number or "e" in number:
                found.append(
                    Candidate(
                        target,
                        "config",
                        "torch._dynamo.config.specialize_float = False",
                        note="floats passed in are traced as symbols (torch's switch, off by default)",
                        config=(("dynamo.specialize_float", False),),
                    )
                )
        if found:
            break
    return _unique(found)


def _dynamic(target: FixTarget, what: str) -> Candidate:
    return Candidate(
        target,
        "dynamic",
        "torch.compile(..., dynamic=True)",
        note=f"compiles {what}",
        dynamic=True,
        sets_dynamic=True,
    )


def _marking_inputs(index: int, dim: int) -> str:
    """inputs() wrapped so that each call's argument `index` is marked dynamic on `dim`."""
    return (
        f"import torch as {PREFIX}torch\n"
        f"{PREFIX}inputs = inputs\n"
        f"def inputs():\n"
        f"    for {PREFIX}args in {PREFIX}inputs():\n"
        f"        {PREFIX}all = {PREFIX}args if isinstance({PREFIX}args, tuple) else ({PREFIX}args,)\n"
        f"        if len({PREFIX}all) > {index} and isinstance({PREFIX}all[{index}], {PREFIX}torch.Tensor):\n"
        f"            {PREFIX}torch._dynamo.mark_dynamic({PREFIX}all[{index}], {dim})\n"
        f"        yield {PREFIX}args\n"
    )


def _recompile_advice(recompile: Recompile) -> tuple[str, str]:
    checks = " ".join(f.check for f in recompile.failures) or " ".join(recompile.reasons[:1])
    if "size mismatch" in checks:
        return "the input's size changed", "pad or bucket the inputs to a few sizes, or mark the dim dynamic"
    if "___stack" in checks:
        return (
            "a value read out of a tensor after a break",
            "keep the value a tensor (torch.where) so that no break hands it over",
        )
    return "a guard on a value the calls change", "pass the value as a tensor, which Dynamo does not specialize"


def _unique(found: list[Candidate]) -> list[Candidate]:
    return list({(c.remedy, c.application()): c for c in found}.values())


# --- the source ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Helper:
    """A module-level function of the snippet's a break is in (or called on the break's line)."""

    name: str
    params: tuple[str, ...]
    #: For each parameter, what the call passes: "Tensor", "float" or "int" (from a literal).
    arg_kinds: tuple[str, ...]


class _Source:
    """The snippet's source, read once with ast, for what a break's line holds."""

    def __init__(self, text: str, target: str | None) -> None:
        try:
            self.tree: ast.Module | None = ast.parse(text)
        except (SyntaxError, ValueError):
            self.tree = None
        self.functions = {n.name: n for n in (self.tree.body if self.tree else []) if isinstance(n, ast.FunctionDef)}
        self.target = target

    def _calls_on(self, line: int | None) -> list[ast.Call]:
        if self.tree is None or line is None:
            return []
        return [
            n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)
        ]

    def logging_call(self, line: int | None) -> str:
        for call in self._calls_on(line):
            if isinstance(call.func, ast.Name) and call.func.id in _LOGGING:
                return call.func.id
        return ""

    def helper_at(self, line: int | None) -> _Helper | None:
        """The helper a break at `line` is in (not the compiled function itself), else one the line calls."""
        if line is None:
            return None
        targets = {"fn", "model", "inputs"}
        for name, node in self.functions.items():
            if name not in targets and node.lineno <= line <= (node.end_lineno or node.lineno):
                return self._helper(name, self._call_of(name))
        for call in self._calls_on(line):
            if isinstance(call.func, ast.Name) and call.func.id in self.functions and call.func.id not in targets:
                return self._helper(call.func.id, call)
        return None

    def _call_of(self, name: str) -> ast.Call | None:
        if self.tree is None:
            return None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                return node
        return None

    def _helper(self, name: str, call: ast.Call | None) -> _Helper:
        node = self.functions[name]
        params = tuple(a.arg for a in node.args.args)
        kinds: list[str] = []
        for arg in call.args if call is not None and not call.keywords else []:
            literal = arg.value if isinstance(arg, ast.Constant) else None
            kinds.append(
                "float"
                if isinstance(literal, float)
                else "int"
                if isinstance(literal, int) and not isinstance(literal, bool)
                else "Tensor"
            )
        return _Helper(name, params, tuple(kinds))

    def param_index(self, name: str) -> int | None:
        """Where `name` is among the compiled function's parameters (fn's, or forward's without self)."""
        node = self.functions.get("fn")
        params = [a.arg for a in node.args.args] if node is not None else []
        if node is None or self.target == "model":
            for cls in (n for n in (self.tree.body if self.tree else []) if isinstance(n, ast.ClassDef)):
                for item in cls.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "forward":
                        params = [a.arg for a in item.args.args][1:]
        return params.index(name) if name in params else None
