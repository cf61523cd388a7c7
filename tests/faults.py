"""The bad snippets of the fault matrix, shared by every route (check, watch, the app).

Each fault writes its snippet into a folder and says what every route must report: the error
kind (None when the run must succeed), words the one-line cause must contain, the snippet line
(where there is one) and `check`'s exit code.
"""

from __future__ import annotations

import hashlib
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

GOOD = textwrap.dedent(
    """
    import torch

    SETTINGS = {"backend": "eager"}

    def fn(x):
        return (x * 2).relu()

    def inputs():
        return [torch.ones(4)]
    """
).lstrip()


@dataclass(frozen=True)
class Fault:
    name: str
    #: Writes the bad snippet under the folder; returns the path to run.
    make: Callable[[Path], Path]
    kind: str | None
    words: tuple[str, ...]
    line: int | None = None
    exit_code: int = 2
    #: Extra checks on the report (beyond the error) for faults that must succeed.
    extra: Callable[[dict], None] | None = field(default=None, compare=False)


def _text(body: str, name: str = "snippet.py") -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
        return path

    return make


def _bytes(data: bytes, name: str = "snippet.py") -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(data)
        return path

    return make


def _directory(folder: Path) -> Path:
    path = folder / "snippet.py"
    if path.exists() and not path.is_dir():
        path.unlink()
    path.mkdir(exist_ok=True)
    return path


def _unreadable(folder: Path) -> Path:
    # CI runs as root, which reads any file whatever its mode: a FIFO with no writer is
    # unreadable for everyone in the same way (it would block), so the client must refuse it.
    path = folder / "snippet.py"
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    return path


def _output_not_tensor(value: str) -> Callable[[Path], Path]:
    return _text(
        f"""
        import torch

        def fn(x):
            return {value}

        def inputs():
            return [torch.ones(2)]
        """
    )


def _child_pid_file(folder: Path) -> Path:
    return folder / "child.pid"


def _spawns_child(folder: Path) -> Path:
    pid_file = _child_pid_file(folder)
    return _text(
        f"""
        import subprocess
        import torch

        child = subprocess.Popen(["sleep", "300"])
        open({str(pid_file)!r}, "w").write(str(child.pid))

        def fn(x):
            return x + 1

        def inputs():
            return [torch.ones(2)]
        """
    )(folder)


def _deletes_itself(folder: Path) -> Path:
    return _text(
        """
        import os
        import torch

        os.remove(__file__)

        def fn(x):
            return x + 1

        def inputs():
            return [torch.ones(2)]
        """
    )(folder)


def _ok(report: dict) -> None:
    assert report["graph_count"] >= 1 and report["equivalence"]["ok"], report


def _compiled_without_a_reference(report: dict) -> None:
    """The run compiled; its eager reference, which loads the snippet a second time in a process
    of its own (after the run's own load), found the file gone, and the report says so."""
    assert report["graph_count"] >= 1 and report["equivalence"] is None, report
    assert any(n.startswith("equivalence not checked: the eager reference") for n in report["notes"]), report


FAULTS: list[Fault] = [
    Fault("empty_file", _text(""), "snippet", ("empty",)),
    Fault("non_utf8", _bytes(b"import torch\n# \xff\xfe\n"), "snippet", ("UTF-8", "line 2"), 2),
    Fault("syntax_error", _text("import torch\n\ndef fn(x)\n    return x\n"), "snippet", ("SyntaxError",), 3),
    Fault("indentation_error", _text("import torch\ndef fn(x):\nreturn x\n"), "snippet", ("IndentationError",), 3),
    Fault("no_target", _text("import torch\ndef inputs():\n    return [torch.ones(1)]\n"), "snippet", ("fn", "model")),
    Fault(
        "fn_not_callable",
        _text("import torch\nfn = 42\ndef inputs():\n    return [torch.ones(1)]\n"),
        "snippet",
        ("not callable",),
    ),
    Fault("no_inputs", _text("import torch\ndef fn(x):\n    return x\n"), "snippet", ("inputs()",)),
    Fault(
        "inputs_raises",
        _text("import torch\ndef fn(x):\n    return x\ndef inputs():\n    raise ValueError('no data here')\n"),
        "snippet",
        ("inputs() raised", "no data here"),
        5,
    ),
    Fault(
        "inputs_not_iterable",
        _text("import torch\ndef fn(x):\n    return x\ndef inputs():\n    return 7\n"),
        "snippet",
        ("iterable",),
    ),
    Fault(
        "input_not_a_tensor",
        _text("import torch\ndef fn(x):\n    return x\ndef inputs():\n    return ['hello']\n"),
        "snippet",
        ("call 1", "str"),
    ),
    Fault(
        "raises_on_call_2",
        _text(
            """
            import torch

            def fn(x):
                if x.shape[0] == 3:
                    raise RuntimeError("call two breaks")
                return x

            def inputs():
                return [torch.ones(2), torch.ones(3)]
            """
        ),
        "snippet",
        ("call 2", "call two breaks"),
        5,
    ),
    Fault(
        "infinite_loop",
        _text(
            """
            import time, torch

            def fn(x):
                while True: time.sleep(0.01)

            def inputs():
                return [torch.ones(2)]
            """
        ),
        "worker",
        ("timed out",),
        # One line for the whole loop: the stack dump may land on either half of it. The sleep
        # is a graph break in a loop, so Dynamo leaves the frame to eager at once and the run
        # spins until its timeout; a bare `while True: pass` is Dynamo's to trace, and on a quick
        # machine torch 2.13's tracer crashes on it first (DynamoCrashed, test_bad_input's case).
        4,
    ),
    Fault("os_exit", _text("import os\nos._exit(3)\n"), "worker", ("exited with code 3",)),
    Fault(
        "segfault",
        _text(
            """
            import ctypes
            import torch

            def fn(x):
                ctypes.string_at(0)
                return x

            def inputs():
                return [torch.ones(2)]
            """
        ),
        "worker",
        ("SIGSEGV",),
        5,
    ),
    Fault("sys_exit_at_import", _text("import sys\nsys.exit(0)\n"), "snippet", ("sys.exit(0)",), 2),
    Fault(
        "floods_stdout_and_stderr",
        _text(
            """
            import sys
            import torch

            print("o" * 5_000_000)
            sys.stderr.write("e" * 5_000_000)

            def fn(x):
                return x + 1

            def inputs():
                return [torch.ones(2)]
            """
        ),
        None,
        (),
        exit_code=0,
        extra=lambda r: (_ok(r), _assert_truncated(r)),
    ),
    Fault("spawns_child", _spawns_child, None, (), exit_code=0, extra=_ok),
    Fault("deletes_itself", _deletes_itself, None, (), exit_code=0, extra=_compiled_without_a_reference),
    Fault("directory", _directory, "snippet", ("directory",)),
    Fault("unreadable", _unreadable, "snippet", ("not a regular file",)),
    Fault("output_dict", _output_not_tensor('{"a": x * 2, "b": None}'), None, (), exit_code=0, extra=_ok),
    Fault("output_mixed_tuple", _output_not_tensor('(x * 2, 3, "label", [x + 1])'), None, (), exit_code=0, extra=_ok),
    Fault(
        "output_none",
        _output_not_tensor("None"),
        None,
        (),
        exit_code=0,
        extra=lambda r: _assert(r["equivalence"]["ok"]),
    ),
    Fault(
        "loss_not_scalar",
        _text(
            """
            import torch

            def fn(x):
                return x * 2

            def loss(out):
                return out

            def inputs():
                return [torch.ones(3, requires_grad=True)]
            """
        ),
        "snippet",
        ("scalar",),
    ),
    # Strict SETTINGS, the right party blamed, a BOM accepted.
    Fault(
        "settings_string_bool",
        _text(
            'import torch\nSETTINGS = {"fullgraph": "false"}\ndef fn(x):\n    return x\ndef inputs():\n    return [torch.ones(2)]\n'
        ),
        "settings",
        ("fullgraph",),
        2,
    ),
    Fault(
        "meta_inputs",
        _text(
            "import torch\ndef fn(x):\n    return x * 2\ndef inputs():\n    return [torch.empty(3, device='meta')]\n"
        ),
        "snippet",
        ("meta tensor",),
    ),
    Fault(
        "exception_str_raises",
        _text(
            """
            import torch

            class Nasty(Exception):
                def __str__(self):
                    raise ValueError("no str")

            def fn(x):
                raise Nasty()

            def inputs():
                return [torch.ones(2)]
            """
        ),
        "snippet",
        ("Nasty",),
        8,
    ),
    Fault(
        "utf8_bom",
        _bytes(b"\xef\xbb\xbfimport torch\ndef fn(x):\n    return x + 1\ndef inputs():\n    return [torch.ones(2)]\n"),
        None,
        (),
        exit_code=0,
        extra=_ok,
    ),
    Fault(
        "cuda_only",
        _text(
            """
            import torch

            def fn(x):
                return x + 1

            def inputs():
                return [torch.ones(2, device="cuda")]
            """
        ),
        "snippet",
        ("inputs() raised", "CUDA"),
        7,
    ),
]


def _assert(cond: bool) -> None:
    assert cond


def _assert_truncated(report: dict) -> None:
    assert report["output"]["truncated"] and report["output"]["bytes"] >= 10_000_000


def child_pid(folder: Path) -> int | None:
    try:
        return int(_child_pid_file(folder).read_text())
    except (OSError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


def save_good(path: Path, n: int) -> str:
    """An editor's atomic save of a good snippet (distinct per `n`) over whatever is at `path`
    (a fault may have left a directory or a FIFO there); returns the SHA-256 of what it wrote."""
    text = GOOD + f"# save {n}\n"
    if path.is_dir():
        path.rmdir()
    elif path.exists() or path.is_fifo():
        path.unlink()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return hashlib.sha256(text.encode()).hexdigest()
