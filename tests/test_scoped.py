"""Faults confined to one feature's path (``fuzzer.faults.scoped``): each scope picks out
the calls of its path alone; stand-in tensors, ops and compiles, no compile."""

from types import SimpleNamespace

import torch

from fuzzer.faults import effect_dropped, scoped
from fuzzer.program import custom_ops


def test_the_mutation_scopes_pick_out_lists_halves_and_strided_bases():
    custom_ops.install()
    assert scoped._writes_a_list(torch.ops.dcefuzz.m_list.default, [])
    assert not scoped._writes_a_list(torch.ops.dcefuzz.m_scale.default, [])
    assert scoped._half(None, [torch.ones(2, dtype=torch.bfloat16)]) and not scoped._half(None, [torch.ones(2)])
    assert scoped._strided(None, [torch.ones(4, 4).t()]) and not scoped._strided(None, [torch.ones(4, 4)])


def test_after_a_break_effects_are_dropped_only_while_a_resume_function_compiles():
    custom_ops.install()
    (fault,) = [f for f in scoped.FAULTS if f.name == "effect-dce-after-break"]
    answers = []
    originals = {effect_dropped.IS_IMPURE: lambda op, **kw: "torch's answer",
                 effect_dropped.HANDLE_EFFECTS: lambda *a: "handled",
                 scoped.COMPILE_FRAME: lambda code, *a, **k: answers.append(is_impure(log, args=(1,), kwargs={}))}
    patched = fault.build(originals.__getitem__)
    is_impure, log = patched[effect_dropped.IS_IMPURE], torch.ops.dcefuzz.e_log.default
    patched[scoped.COMPILE_FRAME](SimpleNamespace(co_name="torch_dynamo_resume_in_program_at_3"))
    patched[scoped.COMPILE_FRAME](SimpleNamespace(co_name="program"))
    assert answers == [False, "torch's answer"]
    assert is_impure(log, args=(1,), kwargs={}) == "torch's answer"


def test_in_training_an_effect_is_dropped_where_an_argument_requires_grad_for_the_rest_of_the_compile(
        monkeypatch):
    compile_id = ["0/0"]
    monkeypatch.setattr(scoped, "_compile_id", lambda: compile_id[0])
    monkeypatch.setattr(effect_dropped, "build_with", lambda affected, forget: (affected, forget))
    affected, forget = scoped._training_effects()
    log = "e_log"
    assert not affected(log, (torch.ones(1),), {}) and not forget(log, (1,), {})
    assert affected(log, (torch.ones(1, requires_grad=True),), {})
    assert forget(log, (1,), {})            # is_impure, later in the same compile, is told
    compile_id[0] = "1/0"
    assert not forget(log, (1,), {})        # another compile: not


def test_every_scoped_fault_says_the_features_that_reach_its_path():
    assert all(f.features and f.unavailable() is None for f in scoped.FAULTS)
