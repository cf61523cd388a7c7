"""What torch says of a program run as `python PROGRAM ARGS`, nothing of ours in it: run as
`python tests/plain_truth.py PROGRAM [ARGS...]` in a fresh process, it runs PROGRAM as python
would (`__main__`, sys.argv), with torch's logs on as TORCH_LOGS=recompiles,graph_breaks turns
them on, and prints one JSON object: the graphs Dynamo compiled (torch's own
counters["stats"]["unique_graphs"]), the recompiles and graph breaks it logged (records of the
`recompiles` and `graph_breaks` artifacts, counted, never parsed), the exception the program
ended with (type and message), and its exit status.

Under torchrun (`torchrun --nproc-per-node N tests/plain_truth.py PROGRAM`) each rank prints its
own object, with its "rank" (torchrun's RANK; None outside torchrun), in one write to the
stdout the ranks share, so that no two ranks' lines mix.

No torch.compile is patched and no backend wrapped, unlike tests/program_truth.py: this is the
program's own run, the truth the playground must not change (tests/test_program_corpus.py).
"""

from __future__ import annotations

import json
import logging
import os
import runpy
import sys
import threading

import torch
from torch._dynamo.utils import counters
from torch._logging._internal import log_registry

ARTIFACTS = ("recompiles", "graph_breaks")


def main(argv: list[str]) -> None:
    path, args = argv[0], argv[1:]
    logged = dict.fromkeys(ARTIFACTS, 0)
    lock = threading.Lock()

    class Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            for artifact in ARTIFACTS:
                # The artifact's loggers are named `<module>.__<artifact>`.
                if record.name.endswith(f".__{artifact}"):
                    with lock:
                        logged[artifact] += 1

    torch._logging.set_logs(**dict.fromkeys(ARTIFACTS, True))
    for qname in log_registry.get_log_qnames():
        logging.getLogger(qname).handlers = [Count()]
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    code, raised = 0, None
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - the program's exception is part of the truth
        code, raised = 1, {"type": type(exc).__name__, "message": str(exc).splitlines()[0] if str(exc) else ""}
    said = json.dumps(
        {
            "torch": torch.__version__,
            "rank": int(os.environ["RANK"]) if "RANK" in os.environ else None,
            "exit": code,
            "exception": raised,
            "graph_count": counters["stats"]["unique_graphs"],
            "recompile_count": logged["recompiles"],
            "graph_break_count": logged["graph_breaks"],
        }
    )
    sys.stdout.flush()  # the program's own output first
    os.write(1, (said + "\n").encode())


if __name__ == "__main__":
    main(sys.argv[1:])
