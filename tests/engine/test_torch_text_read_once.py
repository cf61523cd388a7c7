"""Torch's text (its logs, guard dumps, recompile reasons, exception messages) is read once, in
the worker, into typed report fields (playground/worker/capture/: explain/, reasons.py,
refusals.py); the engine, the CLI and the app read those fields. Read from the source with
`ast`: every regular expression outside playground/worker/ is listed here with the text it
reads, and none of them is torch's."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("playground/engine", "playground/cli", "tui")
_RE_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}

#: (module, pattern) -> the text it reads. None of it is torch's.
ALLOWED = {
    ("playground/engine/exports.py", "`+"): "the snippet's source: the longest run of backticks, to fence it",
    ("playground/engine/scratch.py", '[\\\\/:*?"<>|]'): "the user name, as Inductor puts it in its cache folder",
    ("playground/engine/snippet.py", '^\\s*File "(?P<file>.*)", line (?P<line>\\d+)'): (
        "CPython's faulthandler dump of a killed worker (the worker is gone: nobody else can read it)"
    ),
    ("playground/engine/snippet.py", "^(?:Fatal Python error|Timeout \\(|Thread 0x|Current thread 0x)"): (
        "the same faulthandler dump: where each one starts"
    ),
    ("playground/engine/settings.py", "[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}"): "a backend or mode name the user wrote",
    (
        "playground/engine/settings.py",
        "(dynamo|inductor)(\\.[A-Za-z_][A-Za-z0-9_]{0,79}){1,3}|playground\\.without_decompositions",
    ): "a config key the user wrote",
    ("playground/engine/session/rank_folders.py", "^rank(\\d{1,6})$"): "a session's own rank folder names",
    ("playground/engine/session/folder_files.py", "^(\\d{6,})\\.json$"): "the session's own run file names",
    ("playground/engine/session/folder_files.py", "[^\\w.-]+"): "a fork's file name, made safe from the presenter's",
    ("playground/cli/servecmd.py", "<link[^>]*fonts\\.googleapis\\.com[^>]*>"): (
        "textual-serve's own page, for the font stylesheet a room offline cannot load"
    ),
    ("playground/engine/wording/breaks.py", ".*/(?:site-packages|dist-packages)/|.*/lib/python\\d+\\.\\d+/"): (
        "a break site's file path (the report's typed `file`), to name a library's file as an import does"
    ),
    ("playground/engine/textsafe.py", "\\r\\n|[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]"): (
        "any text, for control characters before a terminal shows it"
    ),
}


def _regexes(path: Path) -> list[tuple[str, int]]:
    """(pattern, line) of each `re.<fn>(pattern, ...)` in the file; a pattern that is not a
    literal is `<computed>`, which no entry allows."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        func = node.func
        if not (isinstance(func.value, ast.Name) and func.value.id == "re" and func.attr in _RE_CALLS):
            continue
        first = node.args[0] if node.args else None
        # An implicit concatenation of literals is one Constant; anything else is computed.
        literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
        pattern = first.value if literal else "<computed>"
        found.append((pattern, node.lineno))
    return found


def test_no_regex_over_torchs_text_outside_the_worker():
    seen: dict[tuple[str, str], int] = {}
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__snapshots__" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            for pattern, line in _regexes(path):
                seen[(rel, pattern)] = line
    unknown = {key: line for key, line in seen.items() if key not in ALLOWED}
    assert not unknown, (
        "a regular expression outside playground/worker/: torch's text is read there, into a typed "
        "report field; one over our own text belongs in ALLOWED with what it reads:\n"
        + "\n".join(f"{rel}:{line}: {pattern!r}" for (rel, pattern), line in unknown.items())
    )
    stale = set(ALLOWED) - set(seen)
    assert not stale, f"ALLOWED names regexes that are gone: {sorted(stale)}"


def test_the_known_readers_of_torchs_text_moved_to_the_worker():
    assert not (ROOT / "tui" / "panes" / "reasons.py").exists()
    for rel in (
        "tui/run/findings.py",
        "tui/panes/guards.py",
        "tui/panes/recompiles.py",
        "playground/engine/explain.py",
    ):
        assert _regexes(ROOT / rel) == [], rel
    worker = ROOT / "playground" / "worker" / "capture"
    for rel in ("refusals.py", "reasons.py", "explain/guards.py", "explain/recompiles.py", "explain/guard_text.py"):
        assert _regexes(worker / rel), rel  # the test sees the regexes where they are


def test_the_scan_sees_a_regex_over_torchs_text(tmp_path: Path):
    sample = tmp_path / "pane.py"
    sample.write_text('import re\n_GB = re.compile(r"/gb/(gb\\\\d+)\\\\.html")\nre.search(pattern, text)\n')
    assert [p for p, _ in _regexes(sample)] == ["/gb/(gb\\\\d+)\\\\.html", "<computed>"]
