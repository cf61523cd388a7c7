"""The refactoring check: `check --json` of every gallery snippet, with what changes from run to run
masked, written one file per snippet, so that two checkouts can be compared byte for byte
(`diff -r`). A change to the code's shape must leave the public report (../shared/contract.md)
exactly as it was.

    python tests/golden.py OUT_DIR [--backend eager]
    python tests/golden.py OUT_DIR --compare BASE_DIR [--added KEY_PATH ...] [--no-run]

`--compare` compares OUT_DIR with another checkout's BASE_DIR file by file, byte for byte, after
dropping from OUT_DIR's reports only the keys a change added (each `--added` path, which BASE_DIR
must not hold): a change that extends the report proves it changed nothing else. A path names
keys through objects and lists: `error.refused`, `recompiles[].failures`,
`guard_details[].guards[].rank`. `--no-run` compares an OUT_DIR already written.

Masked: every number under a key that names a time, a rate, a pid, a memory size or a machine
figure, the text of the snippet's printed output when it prints times, and absolute paths (the
checkout's root becomes `<root>`). Not masked: counts, verdicts, errors, reasons, guards, values'
errors: they are deterministic for the same bytes on the same torch.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: A key whose value varies between runs of the same bytes.
VOLATILE = re.compile(
    r"(^|_)(s|ms|us|ns|seconds|time|times|pid|pids|rss|mb|bytes|busy|load|cpu|cpus|spread|speedup|"
    r"elapsed|wall|started|finished|at|when|median|low|high|blocks|runs|machine|memory|threads)($|_)"
)


#: Object ids (in guard text and generated names) and addresses: new in every process.
IDS = re.compile(r"\d{9,}|0x[0-9a-f]{6,}")
#: A frame of our own code in a stack (its line numbers move with any edit to the file).
OUR_FRAME = re.compile(r'(playground/[\w/]+\.py", line )\d+')
#: Decimal numbers, in torch's raw log text and in stacks (latencies, timestamps).
DECIMALS = re.compile(r"\d+\.\d+")
#: The length cap's cut (playground/engine/caps.py): where it falls, and so the last line kept and
#: the count of bytes left out, moves with the length of the object ids before it.
CUT = re.compile(r"[^\n]*\n?… \d+ more bytes$")
#: Subtrees whose every number is a measurement.
MEASURED = ("phase_s",)
#: Strings holding raw text whose numbers are measurements.
RAW_TEXT = ("logs", "detail", "graph_breaks", "recompiles", "guards")


def _mask(value: Any, key: str = "", measured: bool = False, raw: bool = False) -> Any:
    measured = measured or key in MEASURED
    raw = raw or key in RAW_TEXT
    if isinstance(value, dict):
        return {k: _mask(v, k, measured, raw) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, key, measured, raw) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and (measured or VOLATILE.search(key.lower())):
        return "<n>"
    if isinstance(value, str):
        value = IDS.sub("<id>", CUT.sub("<cut>", value.replace(str(ROOT), "<root>")))
        value = OUR_FRAME.sub(r"\1<n>", value)
        return _raw(value) if raw else value
    return value


#: torch's log prefix: level, date, time, pid, file:line.
GLOG = re.compile(r"^[DIWEV]\d{4} [\d:.]+ \d+ [^\]]+\] ", re.M)
#: A prefix the length cap cut short.
PARTIAL = re.compile(r"^[DIWEV]\d{4} [^\]\n]*$", re.M)
#: What follows the prefix on each line: the compile id and the artifact, before the text.
TAGS = re.compile(r"^<log> (?:\[[^\]]*\] )*")


def _raw(text: str) -> str:
    """Torch's raw text: measurements and pids masked, and our own frames in a stack it quotes
    left out (with their source and caret lines): they name our modules, whose paths a change
    to the code's shape moves."""
    kept: list[str] = []
    ours = False
    for line in PARTIAL.sub("<log>", GLOG.sub("<log> ", text)).split("\n"):
        if "<root>/playground/" in line:
            ours = True
            continue
        body = TAGS.sub("", line)
        if ours and body.startswith("    "):
            continue
        ours = False
        kept.append(line)
    return DECIMALS.sub("<x.y>", "\n".join(kept))


def drop(value: Any, path: str) -> int:
    """Remove the keys `path` names (`a.b`, `a[].b`: every item of the list `a`) from `value` in
    place; the number removed."""
    head, _, rest = path.partition(".")
    each = head.endswith("[]")
    key = head[:-2] if each else head
    if not isinstance(value, dict) or key not in value:
        return 0
    if not rest and not each:
        del value[key]
        return 1
    inner = value[key]
    items = inner if each and isinstance(inner, list) else [inner]
    return sum(drop(item, rest) for item in items) if rest else 0


def compare(base: Path, new: Path, added: list[str]) -> list[str]:
    """The differences between two golden folders, the `added` keys dropped from `new`'s
    reports first ("" when they agree byte for byte): one line per file that differs."""
    problems = []
    names = sorted({p.name for p in base.glob("*.json")} | {p.name for p in new.glob("*.json")})
    for name in names:
        if not (base / name).exists() or not (new / name).exists():
            problems.append(f"{name}: only in {'new' if (new / name).exists() else 'base'}")
            continue
        before, after = json.loads((base / name).read_text()), json.loads((new / name).read_text())
        for path in added:
            if drop(before, path):
                problems.append(f"{name}: the base already holds {path}: not a key this change added")
            drop(after, path)
        if json.dumps(after, indent=1, sort_keys=True) + "\n" != (base / name).read_text(encoding="utf-8"):
            problems.append(f"{name}: differs beyond the added keys")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--backend", default=None)
    parser.add_argument("--compare", type=Path, default=None, metavar="BASE_DIR")
    parser.add_argument("--added", action="append", default=[], metavar="KEY_PATH")
    parser.add_argument("--no-run", action="store_true")
    args = parser.parse_args(argv)
    if not args.no_run:
        written = write(args.out, args.backend)
        if written:
            return written
    if args.compare is None:
        return 0
    problems = compare(args.compare, args.out, args.added)
    for line in problems:
        print(line, file=sys.stderr)
    print(
        f"{'differs' if problems else 'identical'} against {args.compare}"
        + (f" but for {', '.join(args.added)}" if args.added else "")
    )
    return 1 if problems else 0


def write(out: Path, backend: str | None) -> int:
    """Every gallery snippet's masked `check --json` in `out`, one file each (0), or 2."""
    snippets = sorted((ROOT / "snippets").glob("*.py")) + sorted((ROOT / "snippets" / "models").glob("*.py"))
    snippets = [s for s in snippets if s.name != "__init__.py"]
    command = [sys.executable, "-m", "playground", "check", "--json", "--no-timing"]
    if backend:
        command += ["--backend", backend]
    done = subprocess.run(
        command + [str(s) for s in snippets], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if len(lines) != len(snippets):
        print(done.stderr[-3000:], file=sys.stderr)
        print(f"{len(lines)} reports for {len(snippets)} snippets", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for snippet, line in zip(snippets, lines, strict=True):
        masked = _mask(json.loads(line))
        name = snippet.relative_to(ROOT / "snippets").as_posix().replace("/", "__")
        (out / f"{name}.json").write_text(json.dumps(masked, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(snippets)} reports in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
