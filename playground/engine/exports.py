"""Exports of one report: torch's structured trace for tlparse, and a Markdown report.
Torch-free: the worker sends the trace lines already formatted by torch's own formatter.

Writing is shared by `check` and the app's `w`/`t`, under one rule: never write over the snippet
or a module it imports; an existing file is replaced only when it is one of our own exports
(its last line is `MARKDOWN_MARKER`: a report the user has added to since is theirs) or when
the user said `--force`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

from playground.engine.events import Trace
from playground.engine.report import Report
from playground.engine.wording import breaks, compiled, errors, explained, fixes, guard_what_if, phases, timings
from playground.engine.wording import dynamo_code as dynamo_words
from playground.engine.wording import equivalence as verdicts
from playground.engine.wording import program as program_words
from playground.engine.wording.line import CODE, Line, plural

#: The last line of every Markdown report we write to a file: how a later export knows that
#: the file it would replace is ours. An HTML comment, so it is invisible once rendered.
MARKDOWN_MARKER = "<!-- compile-playground report: a later export of the same name replaces this file -->"
#: Suffixes never written to: a report named like a module would shadow or replace code.
_CODE_SUFFIXES = (".py", ".pyw", ".pyi", ".pyc", ".so")


class ExportError(Exception):
    """An export was refused or failed; the message is one line for the user."""


def unique_path(folder: Path, stem: str, suffix: str) -> Path:
    """`folder/stem+suffix`, or with -2, -3… appended, created empty and exclusively so two
    exports at once cannot pick the same name."""
    for number in range(1, 10_000):
        name = f"{stem}{suffix}" if number == 1 else f"{stem}-{number}{suffix}"
        path = folder / name
        try:
            with open(path, "x", encoding="utf-8"):
                return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for {stem}{suffix} in {folder}")


def marked(markdown: str) -> str:
    """A Markdown report as written to a file: our marker last."""
    return f"{markdown.rstrip()}\n\n{MARKDOWN_MARKER}\n"


def is_our_export(path: Path) -> bool:
    """Whether the regular file at `path` ends with our marker line (nothing added after it)."""
    want = MARKDOWN_MARKER.encode()
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(handle.tell() - len(want) - 16, 0))
            tail = handle.read()
    except OSError:
        return False
    return tail.rstrip().endswith(want)


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _check_target(target: Path, protected: list[Path], force: bool) -> bool:
    """Whether `target` exists; ExportError when it must not be written."""
    for path in protected:
        if _same(target, path):
            raise ExportError(f"{target} is the snippet or a module it imports: not written over")
    if target.suffix.lower() in _CODE_SUFFIXES or Path(os.path.realpath(target)).suffix.lower() in _CODE_SUFFIXES:
        raise ExportError(f"{target} is named like Python code: choose a name ending in .md")
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        raise ExportError(f"cannot write {target}: a part of the path is a file, not a folder") from None
    except OSError as exc:
        raise ExportError(f"cannot write {target}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise ExportError(f"{target} is a folder: give a file name")
    if stat.S_ISREG(mode) and not force and not is_our_export(target):
        raise ExportError(f"{target} exists and is not a compile-playground report: use --force to replace it")
    return True


def check_export_target(target: str | os.PathLike[str], protected: list[Path], force: bool) -> None:
    """ExportError now for a target `write_export` would refuse later, or whose folder is
    missing: for a command that writes only after a long run."""
    path = Path(target)
    if not _check_target(path, protected, force) and not path.parent.is_dir():
        raise ExportError(f"cannot write {path}: no such folder {path.parent}")


def write_export(
    target: str | os.PathLike[str], text: str, *, protected: list[Path] | None = None, force: bool = False
) -> Path:
    """Write `text` to `target` under the module's rule (see the docstring); ExportError with a
    one-line message when refused or when the write fails. A new file is created exclusively
    (never over one that appeared since the check); an existing one is replaced atomically."""
    path = Path(target)
    try:
        exists = _check_target(path, protected or [], force)
        if exists and not stat.S_ISREG(os.stat(path).st_mode):
            with open(path, "w", encoding="utf-8") as handle:  # /dev/stdout, a FIFO: as asked
                handle.write(text)
            return path
        if not exists:
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(text)
            return path
        real = Path(os.path.realpath(path))
        tmp = unique_path(real.parent, f".{real.name}", ".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, real)
        finally:
            tmp.unlink(missing_ok=True)
        return path
    except ExportError:
        raise
    except FileExistsError:
        raise ExportError(f"{path} appeared while writing: not written over") from None
    except FileNotFoundError:
        raise ExportError(f"cannot write {path}: no such folder {path.parent}") from None
    except NotADirectoryError:
        raise ExportError(f"cannot write {path}: a part of the path is a file, not a folder") from None
    except PermissionError:
        raise ExportError(f"cannot write {path}: permission denied") from None
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_trace(trace: Trace, directory: str | os.PathLike[str]) -> Path:
    """Write the run's structured trace in TORCH_TRACE's format: torch's string table first,
    then the records; returns the .log path (tlparse 0.4 wants the file itself, not the
    folder). Always a new file: the name is taken exclusively."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = unique_path(folder, f"dedicated_log_torch_trace_{stamp}_{os.getpid()}", ".log")
    header = time.strftime("V%m%d %H:%M:%S.000000", time.localtime())
    lines = []
    for text, index in trace.strings:
        lines.append(f"{header} 0 torch/_logging/structured.py:28] " + json.dumps({"str": [text, index]}))
    lines.extend(trace.lines)
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        path.unlink(missing_ok=True)
        raise
    return path


def trace_error(directory: str | os.PathLike[str], exc: OSError) -> str:
    """The one-line message for a trace that could not be written to `directory`."""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return f"cannot write the trace to {directory}: it (or a folder above it) is a file, not a folder"
    if isinstance(exc, PermissionError):
        return f"cannot write the trace to {directory}: permission denied"
    return f"cannot write the trace to {directory}: {exc.strerror or exc}"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _source_line(path: str, line: int | None) -> str:
    if not line:
        return ""
    try:
        return Path(path).read_text("utf-8").splitlines()[line - 1].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


def markdown_report(r: Report) -> str:
    """A report to paste into an issue or a workshop handout."""
    out = _head_markdown(r) + _program_markdown(r) + _breaks_markdown(r) + _recompiles_markdown(r)
    if r.explanation.guards:
        out += ["", "## Guards", ""] + _guards_by_line(r)
    out += _equivalence_markdown(r) + _timings_markdown(r) + _phase_markdown(r) + _guard_what_if_markdown(r)
    out += _fixes_markdown(r)
    out += _compiled_markdown(r)
    out += _dynamo_code_markdown(r)
    out.append("")
    return "\n".join(out)


def _head_markdown(r: Report) -> list[str]:
    """The title, torch and the settings, the summary; the error and the limit before anything else."""
    name = os.path.basename(r.snippet) or "snippet"
    out = [f"# torch.compile report: `{name}`", ""]
    out.append(f"- torch {r.torch_version}, device {r.settings.device}")
    shown = program_words.settings_words(r) if r.kind == "program" else r.settings.label()
    out.append(f"- settings: `{shown}`")
    out.append(f"- summary: `{r.summary_line()}`")
    if r.content_sha256:
        out.append(f"- content sha256: `{r.content_sha256[:16]}…`")
    out.append("")
    refusal = errors.refusal_words(r)
    if refusal:
        # A break fullgraph=True refused is the run's finding: the app's and check's words.
        out += ["## Refused graph break", "", f"`{_cell(refusal)}`", ""]
    elif r.error:
        out += ["## Error", "", f"`{_cell(errors.missing_backend(r) or r.error.one_line(r.kind == 'program'))}`", ""]
    if r.recompile_limit_hit:
        out += ["**Recompile limit hit**: " + "; ".join(r.recompile_limit_functions), ""]
    return out


def _program_markdown(r: Report) -> list[str]:
    """A program's callables, each a paragraph with its facts under it (the text report's words)."""
    if r.kind != "program":
        return []
    lines = tuple(line for line in program_words.program_lines(r) if any(text for text, _ in line.pieces))
    return ["## Program", *_markdown_lines(lines, paragraphs=True), ""]


def _breaks_markdown(r: Report) -> list[str]:
    out = ["## Graph breaks", ""]
    if not r.graph_breaks:
        return out + ["None."]
    out += ["| line | source | reason | GB | count | hint |", "|---|---|---|---|---|---|"]
    for b in r.graph_breaks:
        src = _source_line(r.snippet, b.line)
        out.append(
            f"| {b.line or ''} | `{_cell(src)}` | {_cell(b.reason)} | {b.gb_id or ''} | {b.count} | "
            f"{_cell('; '.join(breaks.hints(b)))} |"
        )
    distinct = breaks.distinct_lines(r)
    return out + _markdown_lines(distinct, paragraphs=True)


def _fixes_markdown(r: Report) -> list[str]:
    """The remedies tried (--try-fixes), best first, and the breaks none removed."""
    lines = fixes.fix_lines(r)
    return ["", f"### {fixes.TITLE.capitalize()}", *_markdown_lines(lines[1:], paragraphs=True)] if lines else []


def _guard_what_if_markdown(r: Report) -> list[str]:
    """What torch's unsafe guard switches would save the timed call, when the run asked."""
    lines = guard_what_if.what_if_lines(r)
    return ["", f"### {guard_what_if.TITLE.capitalize()}", *_markdown_lines(lines, paragraphs=True)] if lines else []


def _compiled_markdown(r: Report) -> list[str]:
    """What each compile made, and the kernels profile when the run asked for it."""
    lines = compiled.anatomy_lines(r) + compiled.kernel_lines(r)
    return ["", "## Compiled code", *_markdown_lines(lines, paragraphs=True)] if lines else []


def _dynamo_code_markdown(r: Report) -> list[str]:
    """The code Dynamo wrote, when the run asked for it: each piece under its heading, as code."""
    if r.dynamo_code is None:
        return []
    out = ["", "## Dynamo's code"]
    note = dynamo_words.note_line(r)
    if note is not None:
        out += ["", _words(note)]
    if not r.dynamo_code:
        return out + ["", dynamo_words.NO_FRAME]
    out += ["", _words(dynamo_words.summary_line(r.dynamo_code))]
    for item in r.dynamo_code:
        out += ["", _words(dynamo_words.heading_line(item)), "", *_code_block(item.source)]
    return out


def _code_block(source: str) -> list[str]:
    """A fenced Python block whose fence is longer than any run of backticks in the code."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}python", source.rstrip("\n"), fence]


def _recompiles_markdown(r: Report) -> list[str]:
    out = ["", "## Recompiles", ""]
    if r.explanation.recompiles:
        out += _explained_recompiles(r)
    elif r.recompiles:
        for rc in r.recompiles:
            out.append(f"- `{rc.function}` [{rc.compile_id}]: " + "; ".join(f"`{_cell(x)}`" for x in rc.reasons))
    else:
        out.append("None.")
    return out


def _equivalence_markdown(r: Report) -> list[str]:
    out = ["", "## Equivalence", ""]
    eq = r.equivalence
    if eq is None:
        return out + ["Not checked (the run stopped before)."]
    out += [f"Overall: **{verdicts.headline(eq)}**", ""]
    out += [
        "| kind | call | name | dtype | max abs | max rel | atol/rtol | result |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in verdicts.rows(eq, short=False):
        out.append(
            f"| {row.kind} | {row.call} | `{_cell(row.name)}` | {row.dtype} | {row.max_abs} | "
            f"{row.max_rel} | {row.tolerance} | {row.result} {_cell(row.detail)} |"
        )
    notes = verdicts.footnotes(eq)
    if notes:
        out += ["", *(f"- {_cell(text)}" for text in notes)]
    return out


def _timings_markdown(r: Report) -> list[str]:
    out = ["", "## Timings", ""]
    t = r.timings
    if t is None:
        return out + ["Not measured."]
    out += [
        f"- {_words(timings.cold_call_line(t))}",
        f"- {timings.steady_words(t)}",
        f"- {_words(timings.speedup_line(r, t))}",
    ]
    out += [f"- {_words(line)}" for line in timings.timing_notes(r, t)]
    out.append(f"- {timings.timed_words(r, t)}")
    return out


def _phase_markdown(r: Report) -> list[str]:
    """Compile time per phase, from torch's compilation metrics."""
    table = phases.phase_table(r)
    if table is None:
        return []
    out = ["", f"### {phases.TITLE.capitalize()}", "", _table_head(table.header)]
    out += [_table_row(row) for row in table.all_rows]
    return out + (["", table.coverage] if table.coverage else [])


def _table_head(header: tuple[str, ...] | list[str]) -> str:
    return _table_row(header) + "\n|" + "---|" * len(header)


def _table_row(cells: tuple[str, ...] | list[str]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _words(line: Line) -> str:
    """A line of words in Markdown: names from the snippet or torch in backticks."""
    return "".join(f"`{_cell(text)}`" if tag == CODE else _cell(text) for text, tag in line.pieces)


def _explained_recompiles(r: Report) -> list[str]:
    """One row per recompile and argument: function, the entry it made, was -> now, the line;
    then the limit with its hints, and which entry ran each call."""
    out = [
        f"{plural(r.recompile_count, 'recompile')}. "
        "*was*: what the cached entry that failed was built for; *now*: what the call passed.",
        "",
        _table_head(
            ("call", "function", "new entry", "argument", "was -> now", "line", "source", "entries that failed")
        ),
    ]
    for row in explained.recompile_rows(r):
        change = f"`{_cell(row.was or '?')}` -> `{_cell(row.now or '?')}`" if row.change else "failed"
        src = _source_line(r.snippet, row.line)
        out.append(
            f"| {row.call or ''} | `{_cell(row.function)}` | {row.entry or explained.NO_ENTRY} | "
            f"`{_cell(row.what or '?')}` | {change} | {row.line or ''} | {f'`{_cell(src)}`' if src else ''} | "
            f"{explained.failed_words(row.failed)} |"
        )
        if row.note:
            out.append(f"| | | | | torch: {_cell(row.note)} | | | |")
    out += _markdown_lines(explained.limit_lines(r), paragraphs=True)
    if r.explanation.calls:
        out += ["", f"{explained.CALLS_TITLE.capitalize()}:", ""]
        out += _markdown_lines(explained.call_lines(r))
    return out + _markdown_lines(explained.shape_lines(r))


def _markdown_lines(lines: tuple[Line, ...], *, paragraphs: bool = False) -> list[str]:
    """Lines of words as a Markdown list, a line of depth 1 nested under the one before; with
    `paragraphs`, each line of depth 0 a paragraph that heads the list of its own."""
    out: list[str] = []
    for line in lines:
        if paragraphs and not line.depth:
            out += ["", _words(line)]
        else:
            out.append("  " * (line.depth - paragraphs) + f"- {_words(line)}")
    return out


def _guards_by_line(r: Report) -> list[str]:
    """The first entry of each function in full, grouped by the line that made each guard; later
    entries only where they differ from the one before; torch's internal guards counted, not listed."""
    out: list[str] = []
    previous: dict[str, set[str]] = {}
    for entry in r.explanation.guards:
        user = [g for g in entry.guards if not g.internal]
        internal = len(entry.guards) - len(user)
        shown = {g.shown for g in user}
        before = previous.get(entry.function)
        previous[entry.function] = shown
        if before is not None:
            changed = [g for g in user if g.shown not in before]
            text = "; ".join(f"`{_cell(g.shown)}`" + (f" (line {g.line})" if g.line else "") for g in changed)
            out.append(f"- entry {entry.compile_id} differs from the one before in: {text or 'nothing shown here'}")
            continue
        if out:
            out.append("")
        out += [
            f"Entry {entry.compile_id} of `{_cell(entry.function)}`, by the line that made each guard "
            f"({internal} internal guards of torch's own state not listed):",
            "",
            "| line | source | guards |",
            "|---|---|---|",
        ]
        by_line: dict[int | None, list[str]] = {}
        for g in user:
            by_line.setdefault(g.line, []).append(f"`{_cell(g.shown)}`")
        for line, checks in sorted(by_line.items(), key=lambda item: (item[0] is None, item[0] or 0)):
            src = _source_line(r.snippet, line)
            out.append(f"| {line or ''} | {f'`{_cell(src)}`' if src else ''} | {'; '.join(dict.fromkeys(checks))} |")
        out.append("")
    return out
