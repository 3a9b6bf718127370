"""Reversible monkeypatches (``fuzzer.faults._patching``): targets resolved with a reason
when missing, undo putting back the raw entry (or none, for an inherited attribute), and
the predicates faults share; no compile."""

import sympy
import pytest
import torch
from types import SimpleNamespace

from fuzzer.faults import _patching
from fuzzer.program import custom_ops


class Base:
    def inherited(self):
        return "base"


class Child(Base):
    @classmethod
    def made(cls):
        return "own"


def test_a_target_names_a_module_and_a_path():
    assert _patching.split_target("torch._inductor.ir:FallbackKernel.create") == (
        "torch._inductor.ir", ["FallbackKernel", "create"])
    owner, name = _patching.resolve_owner("fuzzer.faults._patching:TORCH_NAMESPACES")
    assert owner is _patching and name == "TORCH_NAMESPACES"
    with pytest.raises(LookupError, match="not importable"):
        _patching.resolve_owner("no_such_module:x")
    with pytest.raises(LookupError, match="not found"):
        _patching.resolve_owner("fuzzer.faults._patching:Nothing.here")
    assert "not found in torch" in _patching.missing(["fuzzer.faults._patching:nothing"])
    assert _patching.missing(["fuzzer.faults._patching:apply"]) is None


def test_undo_puts_back_the_raw_entry_and_deletes_what_was_inherited():
    here = f"{__name__}:Child"
    raw = _patching.raw(f"{here}.made")
    assert isinstance(raw, classmethod)
    undo = _patching.apply({f"{here}.made": "patched", f"{here}.inherited": lambda self: "patched"})
    assert Child.made == "patched" and Child().inherited() == "patched"
    undo()
    undo()
    assert Child.__dict__["made"] is raw and "inherited" not in Child.__dict__ and Child().inherited() == "base"


def test_a_failed_apply_undoes_what_it_had_done():
    here = f"{__name__}:Child"
    with pytest.raises(LookupError):
        _patching.apply({f"{here}.made": "patched", f"{here}.nothing.deeper": 1})
    assert Child.made() == "own"


def test_only_an_op_outside_torchs_namespaces_is_a_custom_op_and_effects_are_read():
    custom_ops.install()
    assert _patching.is_custom_op(torch.ops.dcefuzz.p_sin.default)
    assert not _patching.is_custom_op(torch.ops.aten.add.Tensor) and not _patching.is_custom_op("p_sin")
    assert _patching.op_effect(torch.ops.dcefuzz.e_log.default) is not None
    assert _patching.op_effect(torch.ops.dcefuzz.p_sin.default) is None


def test_free_symbols_are_found_in_any_nesting_and_an_ir_nodes_sizes():
    symbolic = SimpleNamespace(get_size=lambda: [sympy.Symbol("s0"), 3])
    static = SimpleNamespace(get_size=lambda: [sympy.Integer(2), 3])
    assert _patching.has_free_symbols({"a": [static, (symbolic,)]})
    assert not _patching.has_free_symbols([static, torch.ones(2), {"k": 1}])
    assert not _patching.has_free_unbacked_symbols([torch.ones(2)])
