"""Guards a person can read on a real model: torch's bookkeeping folded with its internal guards,
a module's guards named by the path the snippet writes, the guards a next change can make fail
first. The guard text is torch 2.13's own, captured from a 2-layer BERT (transformers 5.24)
called as `net(input_ids=ids, attention_mask=mask)` from `fn` on line 10 of a snippet."""

from __future__ import annotations

import io

from rich.console import Console

from playground.engine.report import EntryGuards, Explanation, Report
from playground.worker.capture import explain
from tui.panes.guards import render_guards
from tui.panes.source import line_marks

SNIPPET = "/tmp/h7/bert.py"

# fmt: off
IDS = "TENSOR_MATCH: check_tensor(L['ids'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.int64, device=None, requires_grad=False, size=[2, 16], stride=[16, 1])  # recordable_keys = {  # transformers/utils/output_capturing.py:332 in wrapper"
IDS_MARKING = "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['ids'], '_dynamo_dynamic_indices') == False         # recordable_keys = {  # transformers/utils/output_capturing.py:332 in wrapper"
ALIASING = "NO_TENSOR_ALIASING: check_no_aliasing(L['ids'], L['mask'], G['net']._modules['embeddings']._buffers['position_ids'], G['net']._modules['embeddings']._buffers['token_type_ids'])"
HOOKS_MODULE = "ID_MATCH: ___check_obj_id(G['__import_torch_dot_nn_dot_modules_dot_module'], 140240808146672), type=<class 'module'>  # return net(input_ids=ids, attention_mask=mask).last_hidden_state  # mp/h7/bert.py:10 in fn"
FORWARD_HOOKS = "TYPE_MATCH: ___check_type_id(G['__import_torch_dot_nn_dot_modules_dot_module']._global_forward_hooks, 140241331921600), type=<class 'collections.OrderedDict'>  # return net(input_ids=ids, attention_mask=mask).last_hidden_state  # mp/h7/bert.py:10 in fn (HINT: type OrderedDict)"
BACKWARD_PRE_HOOKS = "TYPE_MATCH: ___check_type_id(G['__import_torch_dot_nn_dot_modules_dot_module']._global_backward_pre_hooks, 140241331921600), type=<class 'collections.OrderedDict'>  # return net(input_ids=ids, attention_mask=mask).last_hidden_state  # mp/h7/bert.py:10 in fn (HINT: type OrderedDict)"
NET_TYPE = "TYPE_MATCH: ___check_type_id(G['net'], 94801079671712), type=<class 'transformers.models.bert.modeling_bert.BertModel'>  # return net(input_ids=ids, attention_mask=mask).last_hidden_state  # mp/h7/bert.py:10 in fn (HINT: type BertModel)"
NET_DICT = "DICT_CONTAINS: not ___dict_contains('forward', G['net'].__dict__)            # return net(input_ids=ids, attention_mask=mask).last_hidden_state  # mp/h7/bert.py:10 in fn"
LIBRARY_FLAG = "FALSE_MATCH: G['__import_transformers_dot_masking_utils']._is_torch_xpu_available == False  # if _is_torch_xpu_available:  # transformers/masking_utils.py:345 in _ignore_bidirectional_mask_sdpa"
USE_CACHE = "TRUE_MATCH: G['net'].config.use_cache == True                             # if arg_value is not None:  # transformers/utils/generic.py:1132 in wrapper"
DROPOUT_TRAINING = "FALSE_MATCH: G['net']._modules['encoder']._modules['layer']._modules['0']._modules['output']._modules['dropout'].training == False  # return F.dropout(input, self.p, self.training, self.inplace)  # nn/modules/dropout.py:73 in forward"
DROPOUT_P = "EQUALS_MATCH: G['net']._modules['encoder']._modules['layer']._modules['0']._modules['output']._modules['dropout'].p == 0.1  # return F.dropout(input, self.p, self.training, self.inplace)  # nn/modules/dropout.py:73 in forward"
LAYER0_WEIGHT = "TENSOR_MATCH: check_tensor(G['net']._modules['encoder']._modules['layer']._modules['0']._modules['output']._modules['dense']._parameters['weight'], Parameter, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=True, size=[64, 128], stride=[128, 1])  # return F.linear(input, self.weight, self.bias)  # nn/modules/linear.py:134 in forward"
MODULES_DICT = "TYPE_MATCH: ___check_type_id(G['net']._modules, 140241331916448), type=<class 'dict'>  # embedding_output = self.embeddings(  # transformers/models/bert/modeling_bert.py:657 in forward (HINT: type dict)"
BUILTIN = "ID_MATCH: ___check_obj_id(G['__builtins_dict___12']['id'], 140241324904896), type=<class 'builtin_function_or_method'>  # memo = {id(f): f}  # oot/.pyenv/versions/3.11.7/lib/python3.11/inspect.py:760 in unwrap"
LAYER_KEYS = "EQUALS_MATCH: list(dict.keys(G['net']._modules['encoder']._modules['layer']._modules))[0] == '0'  # return iter(self._modules.values())  # nn/modules/container.py:410 in __iter__"
CLOSURE = 'EQUALS_MATCH: G[\'__import_transformers_dot_models_dot_bert_dot_modeling_bert\'].create_bidirectional_mask.__closure__[6].cell_contents == \'past_key_values\'  # if old_name in kwargs and new_name in kwargs:  # transformers/utils/deprecation.py:134 in wrapped_func (HINT: guard on "old_name")'
CLASS_NAME = 'EQUALS_MATCH: G[\'net\'].__class__.__name__ == \'BertModel\'                    # func_name = f"{args[0].__class__.__name__}.{func_name}"  # transformers/utils/deprecation.py:126 in wrapped_func'
# fmt: on
ALL = [
    IDS,
    IDS_MARKING,
    ALIASING,
    HOOKS_MODULE,
    FORWARD_HOOKS,
    BACKWARD_PRE_HOOKS,
    NET_TYPE,
    NET_DICT,
    LIBRARY_FLAG,
    USE_CACHE,
    DROPOUT_TRAINING,
    DROPOUT_P,
    LAYER0_WEIGHT,
    MODULES_DICT,
    BUILTIN,
    LAYER_KEYS,
    CLOSURE,
    CLASS_NAME,
]


def _parsed(text: str) -> dict:
    return explain.parse_guard(text, SNIPPET)


def test_torchs_bookkeeping_is_folded_with_the_internal_guards():
    for text in (
        HOOKS_MODULE,
        FORWARD_HOOKS,
        BACKWARD_PRE_HOOKS,
        NET_DICT,
        LIBRARY_FLAG,
        MODULES_DICT,
        BUILTIN,
        CLOSURE,
    ):
        assert _parsed(text).internal, text
    # line 10 made the hook guards, but they are torch's, not the user's
    assert _parsed(FORWARD_HOOKS).line == 10


def test_the_users_guards_stay_visible():
    for text in (IDS, ALIASING, NET_TYPE, USE_CACHE, DROPOUT_TRAINING, DROPOUT_P, LAYER0_WEIGHT, CLASS_NAME):
        assert not _parsed(text).internal, text


def test_a_modules_guards_are_named_by_the_path_the_snippet_writes():
    guard = _parsed(DROPOUT_TRAINING)
    assert guard.arg == "net.encoder.layer[0].output.dropout.training"
    assert guard.check == "net.encoder.layer[0].output.dropout.training == False"
    weight = _parsed(LAYER0_WEIGHT)
    assert weight.arg == "net.encoder.layer[0].output.dense.weight"
    assert explain.short_guard(weight.kind, weight.check, weight.arg).startswith(
        "net.encoder.layer[0].output.dense.weight: float32 size=["
    )
    net = _parsed(NET_TYPE)
    assert explain.short_guard(net.kind, net.check, net.arg) == "net: type BertModel"


def test_the_guards_a_next_change_can_fail_rank_first():
    def rank(text: str) -> int:
        g = _parsed(text)
        return explain.guard_rank(g.kind, g.arg, g.check)

    assert rank(IDS) == 0  # the call's shape and dtype
    assert [rank(t) for t in (USE_CACHE, DROPOUT_TRAINING, DROPOUT_P)] == [1, 1, 1]  # module attributes
    # the model's structure: types, parameter shapes, a buffer aliasing check
    assert [rank(t) for t in (NET_TYPE, LAYER0_WEIGHT, CLASS_NAME, ALIASING)] == [2, 2, 2, 2]
    assert explain.guard_rank("NO_TENSOR_ALIASING", "w", "check_no_aliasing(w, grad)") == 0


def _report() -> Report:
    details = [_parsed(text) for text in ALL]
    return Report(snippet=SNIPPET, explanation=Explanation(guards=(EntryGuards("0/0", "fn", tuple(details)),)))


def _text(renderable) -> str:
    console = Console(width=78, color_system=None, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_the_pane_shows_inputs_then_module_values_then_the_snippets_line_then_the_folds():
    lines = [line.rstrip() for line in _text(render_guards(_report())).splitlines()]
    assert lines[0] == "entry 0/0  fn"
    assert lines[1] == " no line: ids: int64 size=[2, 16]"
    assert lines[2].startswith(" modules: net.config.use_cache == True;")
    assert "net.encoder.layer[0].output.dropout.training == False" in lines[2] + lines[3]
    assert any(line.startswith(" line 10: net: type BertModel") for line in lines)
    assert lines[-2] == " + 3 structural guards on net (module types, parameter shapes)"
    assert lines[-1].startswith(" + 10 internal guards (global state, grad mode, ids, module hooks, imports)")
    screen = "\n".join(lines)
    for bookkeeping in ("__import_", "_global_forward_hooks", "__dict__", "__closure__"):
        assert bookkeeping not in screen


def test_the_source_gutter_lists_the_users_guard_not_torchs_hook_dicts():
    (mark,) = line_marks(_report(), None)[10]
    assert mark.label == "GUARDS on net"
