"""Our frames out of the stacks torch logs (capture/own_frames.py): pure text, no worker."""

from __future__ import annotations

import logging

from playground.worker.capture.own_frames import ROOT, strip, without_own_frames

OURS = f"{ROOT}worker/process/child.py"

TRACEBACK = f"""Graph break in user code at /tmp/p.py:6
User code traceback:
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "{OURS}", line 92, in run_child
    main(self.inherited(held), request, parent)
    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/p.py", line 9, in <module>
    f(torch.randn(3))
  File "{ROOT}worker/run/programs/program_compiles.py", line 249, in call
    return fn(*args)
  File "/tmp/p.py", line 6, in f
    torch._dynamo.graph_break()

"""

PYTHONS = """Graph break in user code at /tmp/p.py:6
User code traceback:
  File "/tmp/p.py", line 9, in <module>
    f(torch.randn(3))
  File "/tmp/p.py", line 6, in f
    torch._dynamo.graph_break()

"""


def test_our_frames_and_the_workers_runpy_go_the_programs_stay() -> None:
    assert strip(TRACEBACK) == PYTHONS


def test_a_text_without_our_frames_is_left_as_it_is() -> None:
    # runpy of the program's own (a `runpy.run_path` in it) is python's too: kept.
    text = 'x\n  File "/tmp/p.py", line 1, in <module>\n  File "<frozen runpy>", line 88, in _run_code\n    y\n'
    assert strip(text) == text


def test_a_record_is_mended_in_place_once_formatted() -> None:
    record = logging.LogRecord("torch._dynamo", logging.DEBUG, __file__, 1, "%s", (TRACEBACK,), None)
    without_own_frames(record)
    assert record.getMessage() == PYTHONS and record.args is None
