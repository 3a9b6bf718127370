"""The statement form's record (``fuzzer.program.form_record``): a custom op's form built
from the op's record, what a form is read as, the typing rules forms share, and what a
form says of shrinking."""

import dataclasses

import pytest

from fuzzer.program import forms
from fuzzer.program.form_record import (
    BACKWARD,
    CONSTANTS,
    DEFAULT_COMPLEXITY,
    NO_BACKWARD,
    Illegal,
    Shrink,
    broadcast_into,
    const,
    custom_form,
    data_size,
    dim_attr,
    draw_const,
    draw_dim,
    infer_inplace_unary,
    infer_none,
    infer_same,
    infer_scaled,
    known_dim,
    need_rank,
    py_dim,
    replace_dim,
    same_dims,
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


def test_what_a_form_is_read_as():
    head, m_swap, cond = forms.form("head"), forms.form("m_swap"), forms.form("cond_sin")
    assert head.is_view and head.aliases_operand and not head.is_custom and head.ops == ()
    assert m_swap.is_custom and m_swap.mutates == (0, 1) and m_swap.ops == ("m_swap",)
    assert cond.sites == 2 and forms.form("p_sin").sites == 1
    assert forms.form("e_log").is_effectful and not forms.form("p_sin").is_effectful
    fixed = dataclasses.replace(head, operand_dtypes=("int8",))
    assert fixed.operand_dtype(0) == "int8" and fixed.operand_dtype(3) is None and fixed.fixes_dtypes


def test_the_operand_rules_refuse_what_eager_would():
    assert same_dims(("s0",), ("s0",)) == ("s0",) and broadcast_into(("s0", "s1"), ("s1",)) == ("s0", "s1")
    for rule, args in ((same_dims, (("s0",), ("s1",))), (broadcast_into, (("s1",), ("s0", "s1"))),
                       (need_rank, (("s0",), 2)), (dim_attr, ({"dim": 2}, ("s0", "s1"))), (const, ({"c": 3.25},)),
                       (known_dim, ("u0 + 1",)), (data_size, ({},))):
        with pytest.raises(Illegal):
            rule(*args)
    assert replace_dim(("s0", "s1"), 0, None) == ("s1",) and replace_dim(("s0", "s1"), 1, "2") == ("s0", "2")
    assert data_size({"size": "u3"}) == ("u3",) and const({"c": CONSTANTS[0]}) == CONSTANTS[0]


def test_dims_are_written_as_code_with_parentheses_where_needed():
    assert py_dim("s0") == "s0" and py_dim("4") == "4" and py_dim("s0 // 2") == "(s0 // 2)"
