"""The torch-free side of program mode: which file is a program, the run it asks for, the
callables' keys and matching, a report focused on one callable, and the words the views use."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from playground.engine.program import ProgramOptions, callable_key, focused, is_program, matches
from playground.engine.report import Report
from playground.engine.wording import program as words

FIXTURE = Path(__file__).resolve().parents[1] / "tui" / "fixtures" / "train_loop_program.json"


def _src(text: str) -> str:
    return textwrap.dedent(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import torch\nf = torch.compile(lambda x: x)\n", True),
        ("import torch\n@torch.compile(fullgraph=True)\ndef g(x):\n    return x\n", True),
        ("from torch import compile as c\nc(len)\n", True),
        ("import torch\nnet = torch.nn.Linear(2, 2)\nnet.compile()\n", True),
        ("import torch._dynamo\ntorch._dynamo.optimize('eager')(len)\n", True),
        ("import re\nPAT = re.compile('a+')\n", False),  # re's compile is not torch's
        # a target and inputs(): a snippet, whatever else it compiles
        ("import torch\ndef fn(x):\n    return x\ndef inputs():\n    return []\nf = torch.compile(fn)\n", False),
        # a target but no inputs() to call it with: a script's `model = torch.compile(Net())`
        ("import torch\ndef fn(x):\n    return x\nf = torch.compile(fn)\n", True),
        ("import torch\nmodel = torch.compile(torch.nn.Linear(1, 1))\nmodel(torch.ones(1))\n", True),
        ("import torch\nmodel = torch.nn.Linear(1, 1)\n", False),  # no compile: a snippet (its error)
        ("import torch\nif __name__ == '__main__':\n    model = torch.compile(torch.nn.Linear(1, 1))\n", True),
        ("def broken(:\n", False),
        ("", False),
    ],
)
def test_which_file_is_a_program(text: str, expected: bool) -> None:
    assert is_program(text) is expected


def test_the_run_a_program_asks_for() -> None:
    options = ProgramOptions(args=("--epochs", "2"), max_calls=200, only="Net")
    run = options.run_for("import torch\ntorch.compile(len)\n", ("backend",))
    assert run is not None
    assert run.args == ("--epochs", "2")
    assert run.max_calls == 200
    assert run.toggled == ("backend",)
    assert run.only == "Net"
    assert options.run_for("import torch\ntorch.compile(len)\n", (), only="loss_fn").only == "loss_fn"
    assert options.run_for("def fn(x):\n    return x\n", ()) is None  # a snippet stays one
    assert ProgramOptions(forced=True).run_for("def fn(x):\n    return x\n", ()) is not None
    assert options.words() == "program -- --epochs 2 (max 200 calls)"


def test_keys_and_matching() -> None:
    names = ["Net", "Sequential", "Sequential"]
    assert [callable_key(n, i, names) for i, n in enumerate(names, 1)] == ["Net", "Sequential#2", "Sequential#3"]
    assert matches(None, "Net", 1)
    assert matches("Net", "Net", 1)
    assert matches("Sequential#3", "Sequential", 3)
    assert not matches("Sequential#3", "Sequential", 2)
    assert not matches("Net", "loss_fn", 2)


def test_a_report_focused_on_one_callable() -> None:
    report = Report.from_dict(json.loads(FIXTURE.read_text()))
    net = focused(report, "Net")
    section = report.callables[0]
    assert (net.graph_count, net.recompile_count, net.calls) == (section.graph_count, section.recompile_count, 10)
    assert net.equivalence == section.equivalence
    assert net.timings == section.timings
    assert {e.function for e in net.explanation.guards} <= {g.function for g in section.guards}
    assert all(d.entry in {r.compile_id for r in section.recompiles} for d in net.explanation.recompiles)
    assert net.callables == report.callables  # the sections stay whole
    assert focused(report, None) is report
    assert focused(report, "nothing") is report
    # The headline is the sections' sum, the same focused or not.
    assert words.headline(net).text == words.headline(report).text


def test_the_words_of_a_program() -> None:
    report = Report.from_dict(json.loads(FIXTURE.read_text()))
    assert words.settings_words(report).startswith("program as written")
    assert words.ended_line(report).text == "stopped at 20 calls (--max-calls): what ran until then, not an error"
    assert words.keys(report) == ("Net", "loss_fn")
    assert report.summary_line().endswith("equiv ok  stopped")
    lines = [line.text for line in words.program_lines(report)]
    assert any(line.startswith("values: identical against eager") for line in lines)


def test_frames_dynamo_gave_up_on_in_a_program_may_have_raised_to_it() -> None:
    # A program can catch what a compile raised (fail_on_recompile, a forbidden callable): its
    # frames were not run eagerly. A snippet's would be its run's error.
    from playground.engine.report.explanation import DynamoFrames, Explanation
    from playground.engine.wording.explained import frame_lines

    explanation = Explanation(frames=DynamoFrames(total=6, converted=4))
    program = Report(kind="program", calls=3, explanation=explanation)
    (line,) = frame_lines(program)
    assert "2 of the 6 frames" in line.text and "reached the program" in line.text
    (line,) = frame_lines(Report(calls=3, explanation=explanation))
    assert line.text.endswith("they ran eagerly")


def test_callables_never_called_past_the_first_are_one_line() -> None:
    # A recipe compiling 64 layers, stopped early: four lines each would bury the called ones.
    from playground.engine.report import CompiledCallable

    called = CompiledCallable(name="Model", index=1, calls=3)
    idle = tuple(CompiledCallable(name="Layer", index=i, calls=0) for i in range(2, 12))
    report = Report(kind="program", callables=(called, *idle))
    text = "\n".join(line.text for line in words.program_lines(report))
    assert "Model" in text and text.count("never called:") <= 1
    assert "9 more callables never called, so never compiled: Layer#3, Layer#4" in text
    few = Report(kind="program", callables=(called, *idle[:3]))
    assert "more callable" not in "\n".join(line.text for line in words.program_lines(few))


def test_callables_alike_in_every_word_but_their_key_are_one_line() -> None:
    # The regional-compilation recipe: 63 layers that each ran what the first layer compiled.
    from playground.engine.report import CompiledCallable

    first = CompiledCallable(name="Layer", index=2, calls=1, graph_count=1)
    alike = tuple(CompiledCallable(name="Layer", index=i, calls=1) for i in range(3, 10))
    odd = CompiledCallable(name="Layer", index=10, calls=2)  # another count: a section of its own
    tail = tuple(CompiledCallable(name="Layer", index=i, calls=1) for i in range(11, 13))
    report = Report(kind="program", callables=(first, *alike, odd, *tail))
    text = "\n".join(line.text for line in words.program_lines(report))
    assert "6 more callables alike, each as Layer#3 above: Layer#4 … Layer#9" in text
    assert "Layer#4  " not in text and "Layer#10  " in text and "calls 2" in text
    # Two alike after a section are shown in full: a fold says less than they do.
    assert "Layer#11  " in text and "Layer#12  " in text
