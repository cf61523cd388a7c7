"""`compile-playground check SNIPPET [SNIPPET ...]`: run each once, print its report, exit with
the worst code. Several snippets share one warm worker (each run is still a fresh child of its
template, so a report is the one a `check` of that file alone gives): a gallery of thirty checks
in one torch start-up instead of thirty. Torch-free."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from playground.cli.flags import overrides_of, passes_of, program_of, run_flags_of
from playground.engine.client import WorkerClient, WorkerUnavailable
from playground.engine.events import RunResult, Trace
from playground.engine.program import taken_for
from playground.engine.report import Report
from playground.engine.run_request import RunRequest
from playground.engine.session import SessionWriter, presenting_folder, source_that_ran
from playground.engine.snippet import prepare_run, read_regular_bytes
from playground.engine.textsafe import one_line

EXIT_OK, EXIT_FINDING, EXIT_ERROR = 0, 1, 2


def exit_code(report: Report, args: argparse.Namespace) -> int:
    error = report.error
    if error is not None and error.kind in ("snippet", "worker", "settings"):
        return EXIT_ERROR
    if getattr(args, "fail_on_break", False) and report.graph_break_count > 0:
        return EXIT_FINDING
    eq = report.equivalence
    if getattr(args, "fail_on_mismatch", False) and eq is not None and not eq.ok:
        return EXIT_FINDING
    return EXIT_OK


def one_file_only(args: argparse.Namespace) -> str | None:
    """What several snippets cannot be given with: an export names one file (or folder) for one
    report. None when the arguments are fine."""
    if len(args.snippet) < 2:
        return None
    asked = [
        flag
        for flag, given in (("--trace", args.trace), ("--markdown FILE", args.markdown not in (None, "-")))
        if given
    ]
    verb = "take" if len(asked) > 1 else "takes"
    return f"{' and '.join(asked)} {verb} one snippet ({len(args.snippet)} given)" if asked else None


def _protected(snippet: str, report: Report) -> list[Path]:
    """What an export must never replace: the snippet (as given and as run) and its modules."""
    paths = [Path(snippet), Path(report.snippet or snippet)]
    return paths + [Path(p) for p in report.local_modules]


def _write_exports(snippet: str, result: RunResult, args: argparse.Namespace) -> bool:
    """--trace and --markdown FILE; a refusal or a failed write is one line on stderr (the
    report still prints). False when something asked for was not written."""
    from playground.engine.exports import ExportError, markdown_report, marked, trace_error, write_export, write_trace

    ok = True
    report = result.report
    if args.trace:
        try:
            log_path = write_trace(result.trace or Trace(), args.trace)
            print(f"structured trace written: {log_path} (run: tlparse {log_path})", file=sys.stderr)
        except OSError as exc:
            print(f"compile-playground: {trace_error(args.trace, exc)}", file=sys.stderr)
            ok = False
    if args.markdown and args.markdown != "-":
        try:
            protected = _protected(snippet, report)
            write_export(args.markdown, marked(markdown_report(report)), protected=protected, force=args.force)
            print(f"markdown report written: {args.markdown}", file=sys.stderr)
        except ExportError as exc:
            print(f"compile-playground: markdown report not written: {exc}", file=sys.stderr)
            ok = False
    return ok


async def check(args: argparse.Namespace, client: WorkerClient) -> int:
    """Every snippet given, in order, through one worker; the worst exit code (2 over 1 over 0).
    With --json, one report object per line (one snippet: the contract's one object)."""
    refused = one_file_only(args)
    if refused is not None:
        print(f"compile-playground check: {refused}", file=sys.stderr)
        return EXIT_ERROR
    present = None
    if getattr(args, "present", None):
        try:
            # Under torchrun, each rank presents to a folder of its own in it (rank_folders.py).
            present = SessionWriter(presenting_folder(args.present), snippet_name=Path(args.snippet[0]).name)
        except OSError as exc:
            print(f"compile-playground: --present: {exc}", file=sys.stderr)
            return EXIT_ERROR
    worst = EXIT_OK
    try:
        for index, snippet in enumerate(args.snippet):
            place = {"several": len(args.snippet) > 1, "first": index == 0, "last": index == len(args.snippet) - 1}
            code = await _check_one(snippet, args, client, present, **place)
            if code is None:
                return EXIT_ERROR  # the worker could not be started: said on stderr, nothing to run on
            worst = max(worst, code)
    finally:
        if present is not None:
            present.close()
    await client.close()
    return worst


def _publish(present: SessionWriter, snippet: str, report: Report) -> bool:
    """One check's report handed to followers; False (said on stderr) when it cannot be."""
    path = Path(snippet)
    try:
        try:
            fallback = read_regular_bytes(path).decode("utf-8-sig", errors="replace")
        except OSError:
            fallback = ""
        present.publish(report, source_that_ran(path, report.content_sha256, fallback), report.settings, path.name)
    except OSError as exc:
        print(f"compile-playground: stopped presenting: {exc}", file=sys.stderr)
        return False
    return True


async def _check_one(
    snippet: str,
    args: argparse.Namespace,
    client: WorkerClient,
    present: SessionWriter | None,
    *,
    several: bool,
    first: bool,
    last: bool,
) -> int | None:
    """One snippet's run, report, exports and publication (--present); its exit code (None: no
    worker)."""
    prepared = prepare_run(snippet, overrides_of(args))
    if prepared.error is not None:
        result = RunResult(prepared.refused_report())  # bad SETTINGS: no run with settings nobody asked for
    else:
        try:
            text = prepared.source.text if prepared.source else None
            program = program_of(args, text, args.program_args, typed=str(snippet))
            request = RunRequest(
                prepared, run_flags_of(args), passes_of(args), trace=bool(args.trace), last=last, program=program
            )
            result = await client.run(request)
        except WorkerUnavailable as exc:
            print(f"compile-playground: {exc}", file=sys.stderr)
            return None
    report = result.report
    written = _write_exports(snippet, result, args)
    if present is not None:
        written = _publish(present, snippet, report) and written
    if args.markdown == "-":
        from playground.engine.exports import markdown_report

        sys.stdout.write(("" if first else "\n") + markdown_report(report))
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict()) + "\n")
    elif args.markdown != "-":
        from playground.cli.textreport import render

        print(("" if first else "\n") + render(report))
    sys.stdout.flush()  # each report as its run ends, not all at the last one
    code = exit_code(report, args)
    if code == EXIT_ERROR and report.error is not None:
        whose = f"{snippet}: " if several else ""
        said = report.error.one_line(report.kind == "program")
        hint = taken_for(prepared.source.text if prepared.source else None, report.kind == "program")
        if hint and report.error.kind == "snippet":
            said += f"; {hint}"  # on the same line: each error is one stderr line
        print(f"compile-playground: {one_line(whose + said)}", file=sys.stderr)
    # A requested export that was not written is an error (2), never a finding (1).
    return code if written else EXIT_ERROR
