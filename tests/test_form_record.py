"""The statement form's record (``fuzzer.program.form_record``): a custom op's form built
from the op's record, the typing rules forms share, and what a form says of shrinking."""

import pytest

from fuzzer.program.form_record import (
    BACKWARD,
    DEFAULT_COMPLEXITY,
    NO_BACKWARD,
    Illegal,
    Shrink,
    custom_form,
    draw_const,
    draw_dim,
    infer_inplace_unary,
    infer_none,
    infer_same,
    infer_scaled,
)
from fuzzer.program.op_record import EFFECTFUL, MUTATING, PURE
from fuzzer.program.op_snippets import FIRST


def test_a_custom_form_is_what_its_op_declares():
    pure = custom_form(FIRST["p_sin"], 1, infer_same)
    assert (pure.name, pure.category, pure.custom, pure.returns, pure.grad) == ("p_sin", PURE, "p_sin", True, BACKWARD)
    write = custom_form(FIRST["m_scale"], 1, infer_none, mutates=(0,))
    assert (write.category, write.returns, write.grad, write.mutates) == (MUTATING, False, NO_BACKWARD, (0,))
    assert custom_form(FIRST["e_log"], 1, infer_none).is_effectful
    assert custom_form(FIRST["p_sin"], 1, infer_same).render(["x0"], {"site": 3}, [("s0",)]) == \
        "torch.ops.dcefuzz.p_sin(x0, 3)"


def test_a_custom_form_s_fields_override_what_its_op_declares():
    wrapped = custom_form(FIRST["e_log"], 1, infer_same, form="log_twice", returns=True, grad=BACKWARD,
                          nested=True, shrink=Shrink(("e_log",), 3))
    assert (wrapped.name, wrapped.custom, wrapped.category, wrapped.returns, wrapped.grad, wrapped.nested) == (
        "log_twice", "e_log", EFFECTFUL, True, BACKWARD, True)
    assert wrapped.shrink.simpler == ("e_log",) and wrapped.shrink.complexity == 3
    # an out overload called with a buffer writes it, whatever its functional op declares
    assert custom_form(FIRST["p_sin"], 2, infer_same, category=MUTATING).category == MUTATING


def test_a_form_says_nothing_of_shrinking_unless_it_has_a_path():
    plain = custom_form(FIRST["p_mix"], 2, infer_same)
    assert plain.shrink == Shrink((), DEFAULT_COMPLEXITY, ())


def test_a_view_along_a_dim_keeps_its_dim_when_a_statement_becomes_it():
    assert custom_form(FIRST["p_sin"], 1, infer_same, draw=draw_dim).kept_attrs == ("dim",)
    assert custom_form(FIRST["p_sin"], 1, infer_same, draw=draw_const).kept_attrs == ()


def test_the_shared_typing_rules():
    dims = [("s0", "s1")]
    assert infer_same(dims, {}, {}) == ("s0", "s1")
    assert infer_none(dims, {}, {}) is None
    assert infer_scaled(dims, {"c": 2.0}, {}) == ("s0", "s1")
    with pytest.raises(Illegal, match="constant"):
        infer_scaled(dims, {"c": 3.0}, {})
    assert infer_inplace_unary(dims, {"fn": "sin"}, {}) is None
    with pytest.raises(Illegal, match="unknown function"):
        infer_inplace_unary(dims, {"fn": "cos"}, {})
