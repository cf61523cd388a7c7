"""Save-to-diagnostics on a real model (a `transformers` snippet) against torch's floor, with the
libraries the snippet imports imported once in the worker's template (playground/worker/
preimport.py) and without (each run's child importing them again, as before).

- watch: `compile-playground watch --json-lines --no-timing`, already running, sees an atomic
  save and prints the diagnostics line; each run is a child forked from the template, which has
  imported the snippet's installed packages after the first run.
- watch, no trace warm-up: the same with COMPILE_PLAYGROUND_TRACE_WARMUP=0: the template imports
  the snippet's libraries but not what the previous run's trace met (playground/worker/process/
  trace_warmup.py: the modules the trace imported, the files Dynamo's funcname_cache tokenized),
  so every run's trace pays for them again, as before that warm-up existed.
- watch, no preimport: the same with COMPILE_PLAYGROUND_PREIMPORT=0: every run imports them.
- floor: torch's floor as docs/performance.md defines it for every benchmark: a warm Python process that imported
  torch and the snippet's libraries once (the same `import` statements, run once before the
  first save) and has run the snippet once; then, per save: `torch._dynamo.reset()`, the
  snippet's source executed as a fresh module (load), `torch.compile` of its target (`fn` when
  SETTINGS["target"] == "fn", else `model`, else `fn`) with the snippet's backend, and every call
  of `inputs()` in order, with the `graph_breaks`, `recompiles` and `guards` log artifacts on
  (handlers that drop the records). No worker, pipe, fork, watcher or equivalence check: what
  any warm tool must spend to produce the same diagnostics.

The four are interleaved in one run (the machine is shared and noisy); medians and ratios are
printed side by side, then watch's save waterfall (median ms per phase, as latency.py prints it;
watch runs with its timings on briefly after the diagnostics line so that its report carries it).
The goal: watch within 1.2x of the floor.

    python benchmarks/models_latency.py [--saves 5] [--snippet snippets/models/llama.py] [--backend B]
        [--no-preimport-route]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import WATERFALL, WarmRoute, print_waterfalls  # noqa: E402 - the same watch driver as latency.py

ROOT = Path(__file__).resolve().parents[1]

#: The floor (see the docstring): reads "path backend target" per line, answers seconds.
FLOOR = """
import logging, sys, time, torch
torch._logging.set_logs(graph_breaks=True, recompiles=True, guards=True)
sink = logging.NullHandler()
for q in torch._logging._internal.log_registry.get_log_qnames():
    logging.getLogger(q).handlers = [sink]
exec(sys.argv[1])  # the snippet's import statements, once
for line in sys.stdin:
    path, backend, target = line.split()
    t0 = time.perf_counter()
    torch._dynamo.reset()
    ns = {"__file__": path, "__name__": "snip"}
    exec(compile(open(path).read(), path, "exec"), ns)
    chosen = ns["fn"] if target == "fn" else (ns.get("model") or ns["fn"])
    compiled = torch.compile(chosen, backend=backend)
    for call in ns["inputs"]():
        compiled(*(call if isinstance(call, tuple) else (call,)))
    print(time.perf_counter() - t0, flush=True)
"""


def imports_of(source: str) -> str:
    """The snippet's module-level import statements, as source."""
    tree = ast.parse(source)
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))


def literal(source: str, name: str) -> dict:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


class Floor:
    def __init__(self, imports: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", FLOOR, imports],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def run(self, path: Path, backend: str, target: str) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{path} {backend} {target}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def edited(source: str, n: int) -> str:
    """The snippet with a changed comment line: new bytes, the same program."""
    return source.rstrip("\n") + f"\n# edit {n}\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--saves", type=int, default=5)
    p.add_argument("--snippet", type=Path, default=ROOT / "snippets" / "models" / "llama.py")
    p.add_argument("--backend", help="the snippet's backend changed to this one (its SETTINGS line rewritten)")
    p.add_argument(
        "--no-preimport-route", action="store_true", help="leave out the route without preimport (the slowest)"
    )
    args = p.parse_args()
    source = args.snippet.read_text(encoding="utf-8")
    settings = literal(source, "SETTINGS")
    if args.backend:
        old = settings.get("backend", "inductor")
        source = source.replace(f'"backend": "{old}"', f'"backend": "{args.backend}"', 1)
        settings = literal(source, "SETTINGS")
        assert settings.get("backend") == args.backend, "the snippet's SETTINGS has no backend line to rewrite"
    backend, target = settings.get("backend", "inductor"), settings.get("target") or "model"
    lat: dict[str, list[float]] = {"watch": [], "no_trace_warmup": [], "no_preimport": [], "floor": []}
    if args.no_preimport_route:
        del lat["no_preimport"]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {name: Path(tmp) / name / args.snippet.name for name in lat}
        for path in paths.values():
            path.parent.mkdir()
            path.write_text(source, encoding="utf-8")
        # Both watch routes time briefly after their diagnostics line, so that their reports carry
        # the waterfall.
        routes = {
            "watch": WarmRoute(paths["watch"], waterfall=True),
            "no_trace_warmup": WarmRoute(
                paths["no_trace_warmup"], waterfall=True, env={"COMPILE_PLAYGROUND_TRACE_WARMUP": "0"}
            ),
        }
        if "no_preimport" in lat:
            routes["no_preimport"] = WarmRoute(paths["no_preimport"], env={"COMPILE_PLAYGROUND_PREIMPORT": "0"})
        waterfalls: dict[str, list[dict[str, float]]] = {"watch": [], "no_trace_warmup": []}
        floor = Floor(imports_of(source))
        try:
            for name, route in routes.items():
                route.wait_for(hashlib.sha256(paths[name].read_bytes()).hexdigest(), "complete", timeout=600)
            floor.run(paths["floor"], backend, target)  # its first run pays the one-time start-up
            diag: dict = {}
            for i in range(args.saves):  # interleaved, so that machine noise hits all alike
                text = edited(source, i + 1)
                for name, route in routes.items():
                    latency, _, diag, waterfall = route.save(text)
                    lat[name].append(latency)
                    if name in waterfalls and waterfall:
                        waterfalls[name].append(waterfall)
                paths["floor"].write_text(text, encoding="utf-8")
                lat["floor"].append(floor.run(paths["floor"], backend, target))
        finally:
            for route in routes.values():
                route.close()
            floor.close()
    med = {name: statistics.median(values) for name, values in lat.items()}
    load = os.getloadavg()
    print(f"{args.snippet.relative_to(ROOT)} (backend {backend}, target {target}), {args.saves} saves, medians")
    print("floor: a warm process with the snippet's libraries imported once: reset + load + compile + the calls")
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    labels = {"watch": "watch", "no_trace_warmup": "no trace warm-up", "no_preimport": "no preimport"}
    print(f"{'route':>18} {'save to diagnostics':>20} {'/ floor':>8}")
    for name, label in (*labels.items(), ("floor", "floor")):
        if name in med:
            print(f"{label:>18} {med[name]:>19.2f}s {med[name] / med['floor']:>7.2f}x")
    print(f"graphs/breaks: {diag.get('graph_count')}/{diag.get('graph_break_count')}")
    print("each save (s):", {name: [round(v, 2) for v in values] for name, values in lat.items()})
    print_waterfalls(
        [
            (labels[name], {"waterfall": {k: statistics.median(w.get(k, 0.0) for w in falls) for k in WATERFALL}})
            for name, falls in waterfalls.items()
            if falls
        ]
    )


if __name__ == "__main__":
    main()
