"""playground/worker/capture/explain/ on canned strings, no torch: the text below is what torch 2.13 printed
for snippets/why_recompile.py-like code (copied from its guard dump and recompiles_verbose log,
the snippet at /tmp/h7/why.py, which torch's comments shorten to `mp/h7/why.py`)."""

from __future__ import annotations

import re
from pathlib import Path

from playground.engine.report import CallEntry, GuardSet, ReasonRow, RecompileDetail
from playground.worker.capture import explain

SNIPPET = "/tmp/h7/why.py"

GUARDS = [
    "LAMBDA_GUARD: torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None"
    "  # _dynamo/output_graph.py:1135 in init_ambient_guards",
    'GLOBAL_STATE: ___check_global_state() against {"allow_bf16_reduce":0,"grad_mode":true}',
    "TORCH_FUNCTION_MODE_STACK: ___check_torch_function_mode_stack()",
    "DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == None"
    "                           # _dynamo/output_graph.py:1122 in init_ambient_guards",
    "TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU),"
    " torch.float32, device=None, requires_grad=False, size=[8], stride=[1])  # y = x * scale  # mp/h7/why.py:7 in fn",
    "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False"
    "           # y = x * scale  # mp/h7/why.py:7 in fn",
    "EQUALS_MATCH: L['act'] == 'relu'"
    '                                            # if act == "relu":  # mp/h7/why.py:8 in fn',
    "EQUALS_MATCH: L['scale'] == 3.0                                             # y = x * scale  # mp/h7/why.py:7 in fn",
    "ID_MATCH: ___check_obj_id(G['torch'], 140379469626512), type=<class 'module'>"
    "  # y = torch.relu(y)  # mp/h7/why.py:9 in fn",
]

#: The record's message (the log prefix `V1130 ... [__recompiles_verbose]` is not part of it).
RECOMPILE = """Recompiling function fn in /tmp/h7/why.py:6
    triggered by the following guard failure(s):
    guard 0 failures:
    - 0/1: act == 'relu'                                            # if act == "relu":  # mp/h7/why.py:8 in fn
    - User stack trace:
    -   File "/tmp/h7/why.py", line 8, in fn
    -     if act == "relu":

    guard 1 failures:
    - 0/0: scale == 2.0                                             # y = x * scale  # mp/h7/why.py:7 in fn
    - User stack trace:
    -   File "/tmp/h7/why.py", line 7, in fn
    -     y = x * scale"""

CALL_4 = CallEntry(call=4, args=(("x", "float32[8]"), ("scale", "3.0"), ("act", "'tanh'")), compiled=("0/2",))


# --- torch's comment on a guard -------------------------------------------------------------


def test_split_guard_reads_the_check_the_code_and_the_location():
    parsed = explain.split_guard(
        "L['scale'] == 3.0                                             # y = x * scale  # mp/h7/why.py:7 in fn"
    )
    assert parsed == explain.GuardText("L['scale'] == 3.0", "y = x * scale", "mp/h7/why.py", 7, "fn", "")


def test_split_guard_keeps_a_hash_inside_the_quoted_code():
    parsed = explain.split_guard("L['act'] == 'relu'    # if act == \"relu\":  # mp/h7/why.py:8 in fn")
    assert (parsed.check, parsed.code, parsed.line) == ("L['act'] == 'relu'", 'if act == "relu":', 8)


def test_split_guard_without_a_comment_is_only_the_check():
    assert explain.split_guard("___check_torch_function_mode_stack()") == explain.GuardText(
        "___check_torch_function_mode_stack()"
    )


def test_split_guard_keeps_torchs_note_without_the_framework_frame():
    # torch 2.13, dynamic=True, inductor, a size-1 batch after sizes 2 and 3
    parsed = explain.split_guard(
        "2 <= x.size()[0] <= 4096  # return (x * 2).sum(0)  # mp/h7/s.py:4 in fn (user code shown is first use of "
        "this value--the guard itself is not due user code but due to 0/1 specialization in the framework; to "
        "avoid specialization try torch._dynamo.decorators.mark_unbacked(tensor, dim)) and "
        "(_inductor/codegen/cpp.py:2273 in need_use_acc_helper)"
    )
    assert (parsed.check, parsed.code, parsed.line, parsed.function) == (
        "2 <= x.size()[0] <= 4096",
        "return (x * 2).sum(0)",
        4,
        "fn",
    )
    assert parsed.note.startswith("user code shown is first use of this value")
    assert parsed.note.endswith("mark_unbacked(tensor, dim)")


def test_split_guard_reads_a_plain_parenthesised_note():
    parsed = explain.split_guard("L['n'] == 3  # y = x * n  # mp/h7/why.py:5 in fn (a note)")
    assert (parsed.line, parsed.note) == (5, "a note")


# --- torch's shortened paths ----------------------------------------------------------------


def test_a_shortened_path_that_ends_in_the_snippet_counts_as_the_snippet():
    assert explain.snippet_line("mp/h7/why.py", 7, SNIPPET) == 7
    assert explain.snippet_line(SNIPPET, 7, SNIPPET) == 7


def test_other_files_and_torchs_own_are_not_the_snippet():
    assert explain.snippet_line("mp/h7/other.py", 7, SNIPPET) is None  # same folder, other file
    assert explain.snippet_line("xx/h7/why.py", 7, SNIPPET) is None  # same name, not a suffix
    assert explain.snippet_line("p/why.py", 7, "/tmp/h7/notwhy.py") is None  # the name must match whole
    assert explain.snippet_line("_dynamo/output_graph.py", 1135, SNIPPET) is None
    assert explain.snippet_line("", 7, SNIPPET) is None
    assert explain.snippet_line("mp/h7/why.py", None, SNIPPET) is None


def test_an_absolute_path_is_never_shortened_so_it_must_be_the_snippet(tmp_path):
    snippet = tmp_path / "h7" / "why.py"
    snippet.parent.mkdir()
    snippet.write_text("x = 1\n")
    # Another file whose path ends like the snippet's: torch never cuts an absolute path.
    assert explain.snippet_line("/h7/why.py", 3, str(snippet)) is None
    assert explain.snippet_line(str(tmp_path / "elsewhere" / "h7" / "why.py"), 3, str(snippet)) is None
    # The snippet itself, by another spelling of its path.
    link = tmp_path / "link.py"
    link.symlink_to(snippet)
    assert explain.snippet_line(str(link), 3, str(snippet)) == 3
    assert explain.snippet_line(str(tmp_path / "h7" / ".." / "h7" / "why.py"), 3, str(snippet)) == 3
    assert explain.snippet_line(str(snippet)[2:], 3, str(snippet)) == 3  # torch's cut of two characters


def test_the_worker_reads_snippet_lines_with_the_engines_one_function():
    # Read as text: importing every module of the worker would import torch in a fast test.
    worker = Path(__file__).resolve().parents[2] / "playground" / "worker"
    defined = [p for p in worker.rglob("*.py") if re.search(r"^def (snippet_line|same_file)\(", p.read_text(), re.M)]
    assert defined == []
    assert "from playground.engine.explain import snippet_line" in (worker / "capture" / "records.py").read_text()


# --- names as the user wrote them -----------------------------------------------------------


def test_user_name_turns_torchs_sources_into_python():
    assert explain.user_name("L['lr']") == "lr"
    assert explain.user_name("L['self']._modules['l']") == "self.l"
    assert explain.user_name("L['self']._modules['l']._parameters['weight']") == "self.l.weight"
    assert explain.user_name("L['self']._modules['bn']._buffers['running_mean']") == "self.bn.running_mean"
    assert explain.user_name("G['torch'].relu") == "torch.relu"


def test_guarded_arg_names_the_argument_not_its_size_or_stride():
    assert explain.guarded_arg("L['scale'] == 2.0") == "scale"
    assert explain.guarded_arg("2 <= L['x'].size()[0]") == "x"
    assert explain.guarded_arg("L['x'].stride()[0] == 1") == "x"
    assert explain.guarded_arg("check_tensor(L['self']._modules['l']._parameters['weight'], Tensor)") == "self.l.weight"
    assert explain.guarded_arg("tensor 'x' size mismatch at index 0. expected 8, actual 16") == "x"
    # recompiles_verbose already drops the L[...]: a bare name is the argument
    assert explain.guarded_arg("lr == 0.1") == "lr"
    assert explain.guarded_arg("___check_torch_function_mode_stack()") == ""
    assert explain.guarded_arg("utils_device.CURRENT_DEVICE == None") == ""


# --- guards: user lines and the internal fold -----------------------------------------------


def test_guards_carry_the_snippet_line_that_made_them():
    (entry,) = explain.guard_details([GuardSet(compile_id="0/1", function="fn", guards=tuple(GUARDS))], SNIPPET)
    assert (entry.compile_id, entry.function) == ("0/1", "fn")
    user = [(g.kind, g.arg, g.line, g.check) for g in entry.guards if not g.internal]
    assert ("EQUALS_MATCH", "act", 8, "act == 'relu'") in user
    assert ("EQUALS_MATCH", "scale", 7, "scale == 3.0") in user
    assert any(kind == "TENSOR_MATCH" and arg == "x" and line == 7 for kind, arg, line, _ in user)
    # an id guard on a global the snippet's own line looked up stays the user's
    assert any(kind == "ID_MATCH" and line == 9 for kind, _, line, _ in user)


def test_torchs_internal_guards_fold():
    (entry,) = explain.guard_details([GuardSet(compile_id="0/0", guards=tuple(GUARDS))], SNIPPET)
    internal = {g.kind for g in entry.guards if g.internal}
    assert internal == {
        "LAMBDA_GUARD",  # no argument, no snippet line: torch's ambient state
        "GLOBAL_STATE",
        "TORCH_FUNCTION_MODE_STACK",
        "DEFAULT_DEVICE",
        "DIMENSION_DYNAMIC_MARKING_GUARD",  # bookkeeping on x, even though line 7 made it
    }


def test_an_id_guard_without_a_snippet_line_is_internal():
    guard = explain.parse_guard("ID_MATCH: ___check_obj_id(L['self']._modules['l'], 140379469626512)", SNIPPET)
    assert guard.internal and guard.arg == "self.l" and guard.check.startswith("___check_obj_id(self.l,")


# --- recompiles ------------------------------------------------------------------------------


def test_recompile_message_lists_every_failed_entry_with_its_line():
    entries = explain.parse_recompile_message(RECOMPILE, SNIPPET)
    assert entries == [
        {
            "entry": "0/1",
            "failures": [
                "act == 'relu'                                            # if act == \"relu\":  # mp/h7/why.py:8 in fn"
            ],
            "line": 8,
        },
        {
            "entry": "0/0",
            "failures": [
                "scale == 2.0                                             # y = x * scale  # mp/h7/why.py:7 in fn"
            ],
            "line": 7,
        },
    ]


def test_one_row_per_argument_with_was_now_and_line():
    rc = explain.RecompileRecord(function="fn", compile_id="0/2", call=4, message=RECOMPILE)
    (detail,) = explain.recompile_details([rc], [CALL_4], SNIPPET)
    assert (detail.function, detail.entry, detail.call) == ("fn", "0/2", 4)
    rows = [(r.arg, r.guard, r.was, r.now, r.line, r.entries) for r in detail.reasons]
    assert rows == [
        ("act", "act == 'relu'", "'relu'", "'tanh'", 8, ("0/1",)),
        ("scale", "scale == 2.0", "2.0", "3.0", 7, ("0/0",)),
    ]


def test_the_same_guard_failing_in_many_entries_is_one_row_not_one_per_entry():
    failures = "\n".join(
        f"    guard {n} failures:\n    - 0/{7 - n}: lr == 0.{7 - n}    # return w - lr * w  # mp/h7/lr.py:5 in fn"
        for n in range(8)
    )
    rc = explain.RecompileRecord(function="fn", compile_id=None, call=9, message="Recompiling function fn\n" + failures)
    call = CallEntry(call=9, args=(("lr", "0.01"),), compiled=())
    (detail,) = explain.recompile_details([rc], [call], "/tmp/h7/lr.py")
    (row,) = detail.reasons
    assert (row.arg, row.was, row.now, row.line) == ("lr", "0.7", "0.01", 5)
    assert row.entries == tuple(f"0/{n}" for n in range(7, -1, -1))
    assert detail.entry is None  # no call compiled it: the attempt that hit the limit


def test_a_tensor_reason_reads_as_size_of_x_with_both_sizes():
    row = explain.reason_row("tensor 'x' size mismatch at index 0. expected 8, actual 16", SNIPPET, {}, None)
    assert (row.arg, row.guard, row.was, row.now, row.line) == ("x", "size of x dim 0", "8", "16", None)


def test_a_size_guard_takes_the_arrived_size_from_the_call():
    row = explain.reason_row(
        "2 <= x.size()[0]  # return x  # mp/h7/why.py:4 in fn", SNIPPET, {"x": "float32[1, 8]"}, None
    )
    assert (row.arg, row.now, row.line) == ("x", "size()[0] = 1", 4)


def test_a_reason_comment_holding_a_semicolon_stays_one_failure():
    text = "lr == 0.1  # a = 1; b = lr * a  # mp/h7/why.py:5 in fn; tensor 'x' dtype mismatch. expected float32, actual float64"
    assert explain.recompiles._split_failures(text) == [
        "lr == 0.1  # a = 1; b = lr * a  # mp/h7/why.py:5 in fn",
        "tensor 'x' dtype mismatch. expected float32, actual float64",
    ]


# --- the limit and the calls ------------------------------------------------------------------


def test_limit_names_the_function_the_limit_and_the_argument():
    message = (
        "torch._dynamo hit config.recompile_limit (8)\n   function: 'fn' (/tmp/h7/lr.py:4)\n"
        '   last reason: 0/7: lr == 0.05\nTo log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
        "To diagnose recompilation issues, see https://docs.pytorch.org/x.html"
    )
    details = [
        RecompileDetail(function="fn", entry=f"0/{n}", reasons=(ReasonRow(arg="lr", guard="lr == 0.1"),))
        for n in range(1, 9)
    ]
    (limit,) = explain.limit_details([message], details, "/tmp/h7/lr.py")
    assert (limit.function, limit.config, limit.limit, limit.arg) == ("fn", "recompile_limit", 8, "lr")
    assert limit.recompiles_on_arg == 8 and limit.doc == "https://docs.pytorch.org/x.html"
    assert limit.hints[0].startswith("lr is a Python constant to Dynamo: pass it as a tensor")


def test_call_summaries_say_which_entry_ran_and_why():
    details = [
        RecompileDetail(entry="0/1", reasons=(ReasonRow(arg="scale", guard="scale == 2.0", was="2.0", now="3.0"),))
    ]
    assert (
        explain.call_summary(CallEntry(call=1, entry="0/0", status="compiled"), details)
        == "call 1 ran entry 0/0 (compiled now: first compile)"
    )
    assert (
        explain.call_summary(CallEntry(call=3, entry="0/1", status="compiled"), details)
        == "call 3 ran entry 0/1 (compiled now: recompiled because scale changed 2.0 -> 3.0)"
    )
    assert (
        explain.call_summary(CallEntry(call=5, entry="0/0", status="cached"), details)
        == "call 5 ran entry 0/0 (cached)"
    )
    assert explain.call_summary(CallEntry(call=9, status="eager", why="past recompile_limit"), details) == (
        "call 9 ran eagerly: no entry's guards passed (past recompile_limit)"
    )


def test_dynamos_builtins_alias_reads_as_the_builtin() -> None:
    from playground.worker.capture.explain import user_name

    assert user_name("G['__builtins_dict___13']['print']") == "print"
    assert user_name("__builtins_dict___2['len']") == "len"


def test_dynamos_globals_named_by_an_address_read_without_it() -> None:
    """Two processes install the same object under two addresses (and two compile counts)."""
    from playground.worker.capture.explain import user_name

    assert user_name("G['_140022041650864_c12'].Tensor") == "_<id>_cN.Tensor"
    assert user_name("G['___unnamed_scope_140022041650864_c3']") == "___unnamed_scope_<id>_cN"
    assert user_name("G['__optimizer_140022041650864_140022041650999_c2']") == "__optimizer_<id>_<id>_cN"
    assert user_name("L['step_12_c3']") == "step_12_c3"  # a name of the snippet's, short numbers
