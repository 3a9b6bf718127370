"""compile-error (``fuzzer.faults.compile_error``): with the fault, a fallback kernel of
a mutating custom op that writes a view raises (in the dynamic variant only one with
symbolic sizes); the written arguments read off the schema; no compile."""

from types import SimpleNamespace

import pytest
import sympy
import torch

from fuzzer.faults import compile_error
from fuzzer.program import custom_ops


def test_the_written_arguments_are_read_off_the_schema():
    custom_ops.install()
    kernel = torch.ops.dcefuzz.m_addto.default  # (Tensor(a!) a, Tensor b, int site)
    assert compile_error._mutated_args(kernel, ("A", "B", 0), {}) == ["A"]
    assert compile_error._mutated_args(kernel, (), {"a": "A", "b": "B"}) == ["A"]
    assert compile_error._mutated_args(torch.ops.dcefuzz.p_sin.default, ("x", 0), {}) == []
    # a keyword-only buffer is found among the keywords, however many positions were given
    out = torch.ops.dcefuzz.t_sin_out.default  # (Tensor x, SymInt site, *, Tensor(a2!) out)
    assert compile_error._mutated_args(out, ("X", 0, "extra"), {"out": "O"}) == ["O"]


@pytest.fixture
def create(monkeypatch):
    """The planted ``create`` of each variant, every argument taken for a view."""
    custom_ops.install()
    monkeypatch.setattr(compile_error, "_is_view", lambda node: True)
    monkeypatch.setattr(compile_error._patching, "raw", lambda target: classmethod(lambda cls, *a: "torch's create"))
    return {f.dynamic_only: f.build(None)[compile_error.TARGET].__func__ for f in compile_error.FAULTS}


def test_a_mutating_custom_op_that_writes_a_view_raises(create):
    kernel = torch.ops.dcefuzz.m_scale.default
    with pytest.raises(compile_error.UnsupportedViewMutation, match="cannot mutate a view"):
        create[False](None, kernel, "a view", 0)
    symbolic = SimpleNamespace(get_size=lambda: [sympy.Symbol("s0")])
    with pytest.raises(compile_error.UnsupportedViewMutation, match="with symbolic sizes"):
        create[True](None, kernel, symbolic, 0)


def test_a_static_view_in_the_dynamic_variant_and_every_other_kernel_go_to_torchs_create(create):
    static = SimpleNamespace(get_size=lambda: [sympy.Integer(2)])
    assert create[True](None, torch.ops.dcefuzz.m_scale.default, static, 0) == "torch's create"
    assert create[False](None, torch.ops.dcefuzz.p_sin.default, "a view", 0) == "torch's create"
    assert create[False](None, torch.ops.aten.add_.Tensor, "a view", "b") == "torch's create"
