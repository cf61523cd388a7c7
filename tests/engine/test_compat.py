"""The private-torch compatibility layer and the log parsers, in process (imports torch)."""

from __future__ import annotations

from playground.worker import compat
from playground.worker.capture.records import parse_graph_break, parse_guard_tree

DUP_BREAK = (
    "Graph break (user stack suppressed due to duplicate graph break) in user code at /s/snip.py:7\n"
    "Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call:\n\n"
    "Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
)


def test_installed_torch_is_a_tested_version():
    assert compat.torch_version() in compat.TESTED_VERSIONS, compat.version_warning()


def test_graph_break_registry_ships_in_the_wheel():
    registry = compat.graph_break_registry()
    assert len(registry) > 400
    assert "Tensor.item()" in registry["GB0124"]["gb_type"]
    assert compat.graph_break_ids_by_type()["Data-dependent branching"] == "GB0170"


def test_artifact_loggers_are_named_as_expected():
    import logging

    record = logging.LogRecord("torch._dynamo.guards.__recompiles", 10, "", 0, "m", None, None)
    assert compat.artifact_of(record) == "recompiles"


def test_duplicate_break_record_is_parsed_and_enriched_from_the_registry():
    parsed = parse_graph_break(DUP_BREAK, "/s/snip.py")
    assert parsed.line == 7
    assert parsed.reason == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert parsed.gb_id == "GB0124"
    # Neither explanation nor hints are in the record: both come from the registry.
    assert parsed.explanation.startswith("Dynamo does not support tracing `Tensor.item()`")
    assert parsed.hints == (
        "Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` "
        "to include these operations in the captured graph.",
    )


def test_break_in_a_library_file_points_at_the_snippet_frame():
    message = (
        "Graph break in user code at /lib/helper.py:3\n"
        "Graph Break Reason: Failed to trace builtin operator\n"
        "\nUser code traceback:\n"
        '  File "/s/snip.py", line 12, in fn\n    helper(x)\n'
        '  File "/lib/helper.py", line 3, in helper\n    print(x)\n'
    )
    parsed = parse_graph_break(message, "/s/snip.py")
    assert parsed.file == "/lib/helper.py" and parsed.line == 12


def test_guard_tree_keeps_guards_not_managers():
    tree = (
        "TREE_GUARD_MANAGER:\n"
        "+- RootGuardManager\n"
        "| +- GLOBAL_STATE: ___check_global_state()\n"
        "| +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x')\n"
        "| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[4])  # return x  # s.py:3\n"
    )
    assert parse_guard_tree(tree) == (
        "GLOBAL_STATE: ___check_global_state()",
        "TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[4])  # return x  # s.py:3",
    )


def test_the_ladder_stage_hidden_as_a_debug_backend_is_offered():
    # torch's list_backends() leaves out its "debug" backends; the palette should still offer
    # the ladder's middle stage, which --backend has always taken.
    assert "aot_eager_decomp_partition" in compat.list_backends()
    assert "inductor" in compat.list_backends()


def test_where_dynamo_is_tracing_is_read_from_another_thread(tmp_path):
    """compat.dynamo_tracing_at on a real trace: a thread samples the main thread's stack while
    Dynamo inlines a 40-deep recursion written in a file of its own. Not deeper: on Python 3.12
    Dynamo's inlining of a 200-deep one ran out of the C stack (RecursionError near 60 deep,
    whatever sys.setrecursionlimit says: 3.12 limits C recursion apart)."""
    import sys
    import threading

    import torch

    source = tmp_path / "deep_snippet.py"
    source.write_text("def down(x, n):\n    if n == 0:\n        return x.sin()\n    return down(x + 1, n - 1)\n")
    namespace: dict = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    seen: list[tuple[int, int]] = []
    done = threading.Event()
    main = threading.get_ident()

    def sample() -> None:
        while not done.is_set():
            at = compat.dynamo_tracing_at(sys._current_frames().get(main), str(source))
            if at is not None:
                seen.append(at)
            done.wait(0.002)

    watcher = threading.Thread(target=sample)
    watcher.start()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # Dynamo spends many Python frames on each inlined call
    try:
        torch._dynamo.reset()
        torch.compile(lambda x: namespace["down"](x, 40), backend="eager")(torch.ones(2))
    finally:
        sys.setrecursionlimit(limit)
        done.set()
        watcher.join()
        torch._dynamo.reset()
    assert seen, "no sample saw Dynamo tracing the file"
    assert {line for line, _ in seen} <= {1, 2, 3, 4}  # a frame starts at its `def` line
    assert max(depth for _, depth in seen) > 20
    assert compat.dynamo_tracing_at(sys._current_frames()[main], str(source)) is None  # not tracing now


#: In a fresh `python`: Inductor's start-up as a bisection's driver does it, then a forked child's
#: parallel op (a parent that ran one hands its children a broken OpenMP pool), then a C++ config
#: that forces the ISA check off, as a step's snippet may set it.
START_UP = """
import json
from playground.worker import compat
from playground.worker.process.warmup import fork_probe
from torch._inductor import config, cpu_vec_isa

compat.start_inductor()
probed = [str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()]
forked_child_ran = fork_probe(60)
config.cpp.vec_isa_ok = False
compat.forget_probes_if_config_changed()
print(json.dumps({"probed": probed, "forked_child_ran": forked_child_ran,
                  "after": [str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()]}))
"""


def test_inductor_start_up_runs_no_op_and_is_dropped_under_another_cpp_config():
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", START_UP], capture_output=True, text=True, timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    said = json.loads(out.stdout.strip().splitlines()[-1])
    assert said["forked_child_ran"]
    # With the check forced off no ISA is valid: the probes' inherited answers were dropped.
    assert said["after"] == []
    assert said["probed"], "this machine's compiler built no vector ISA: nothing was inherited to drop"
