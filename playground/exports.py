"""Exports of one report: torch's structured trace for tlparse, and a Markdown report.
Torch-free: the worker sends the trace lines already formatted by torch's own formatter."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from playground.report import Report


def write_trace(report: dict[str, Any], directory: str | os.PathLike[str]) -> Path:
    """Write the run's structured trace in TORCH_TRACE's format; returns the .log path (tlparse
    0.4 wants the file itself, not the folder)."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"dedicated_log_torch_trace_{stamp}_{os.getpid()}.log"
    header = time.strftime("V%m%d %H:%M:%S.000000", time.localtime())
    lines = []
    for text, index in report.get("trace_strings") or []:
        lines.append(f"{header} 0 torch/_logging/structured.py:28] " + json.dumps({"str": [text, index]}))
    lines.extend(report.get("trace_lines") or [])
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(value: float | None, unit: str = "") -> str:
    return "n/a" if value is None else f"{value:.3f}{unit}"


def _source_line(path: str, line: int | None) -> str:
    if not line:
        return ""
    try:
        return Path(path).read_text("utf-8").splitlines()[line - 1].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


def markdown_report(raw: dict[str, Any]) -> str:
    """A report to paste into an issue or a workshop handout."""
    r = Report.from_dict(raw)
    name = os.path.basename(r.snippet) or "snippet"
    out = [f"# torch.compile report: `{name}`", ""]
    out.append(f"- torch {r.torch_version}, device {r.settings.device}")
    out.append(f"- settings: `{r.settings.label()}`")
    out.append(f"- summary: `{r.summary_line()}`")
    if r.content_sha256:
        out.append(f"- content sha256: `{r.content_sha256[:16]}…`")
    out.append("")
    if r.error:
        out += ["## Error", "", f"`{_cell(r.error.one_line())}`", ""]
    if r.recompile_limit_hit:
        out += ["**Recompile limit hit**: " + "; ".join(r.recompile_limit_functions), ""]
    out += ["## Graph breaks", ""]
    if r.graph_breaks:
        out += ["| line | source | reason | GB | count | hint |", "|---|---|---|---|---|---|"]
        for b in r.graph_breaks:
            src = _source_line(r.snippet, b.line)
            out.append(
                f"| {b.line or ''} | `{_cell(src)}` | {_cell(b.reason)} | {b.gb_id or ''} | {b.count} | {_cell(b.hint)} |"
            )
    else:
        out.append("None.")
    out += ["", "## Recompiles", ""]
    if r.recompiles:
        for rc in r.recompiles:
            out.append(f"- `{rc.function}` [{rc.compile_id}]: " + "; ".join(f"`{_cell(x)}`" for x in rc.reasons))
    else:
        out.append("None.")
    out += ["", "## Equivalence", ""]
    eq = r.equivalence
    if eq is None:
        out.append("Not checked (the run stopped before).")
    else:
        out += [f"Overall: **{'ok' if eq.ok else 'FAIL'}**", ""]
        out += [
            "| kind | call | name | dtype | max abs | max rel | atol/rtol | result |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for kind, rows in (("value", eq.outputs), ("grad", eq.grads)):
            for c in rows:
                tol = "" if c.atol is None else f"{c.atol:g}/{c.rtol:g}"
                fmt = lambda v: "" if v is None else f"{v:.3g}"  # noqa: E731
                out.append(
                    f"| {kind} | {c.call} | `{_cell(c.name)}` | {c.dtype} | {fmt(c.max_abs)} | {fmt(c.max_rel)} | {tol} | "
                    f"{'ok' if c.ok else 'FAIL'} {_cell(c.note)} |"
                )
    out += ["", "## Timings", ""]
    t = r.timings
    if t is None:
        out.append("Not measured.")
    else:
        out.append(f"- cold first call (compile included): {_num(t.compile_s, ' s')}, compile cache: {t.compile_cache}")
        out.append(
            f"- steady state on {t.device}: eager {_num(t.eager_ms, ' ms')} (IQR {_num(t.eager_iqr_ms)}), "
            f"compiled {_num(t.compiled_ms, ' ms')} (IQR {_num(t.compiled_iqr_ms)})"
        )
        speed = "n/a" if t.speedup is None else f"{t.speedup:.2f}x"
        out.append(f"- speedup {speed} with {r.graph_count} graphs and {r.graph_break_count} breaks")
    out.append("")
    return "\n".join(out)
