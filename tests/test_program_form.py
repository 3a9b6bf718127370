"""The statement form record and its typing rules (``fuzzer.program.form``), by public
behaviour: what a form is read as, and each rule refusing what eager would; no program."""

import dataclasses

import pytest

from fuzzer.program import form, forms
from fuzzer.program.form import Illegal


def test_what_a_form_is_read_as():
    head, m_swap, cond = forms.form("head"), forms.form("m_swap"), forms.form("cond_sin")
    assert head.is_view and head.aliases_operand and not head.is_custom and head.ops == ()
    assert m_swap.is_custom and m_swap.mutates == (0, 1) and m_swap.ops == ("m_swap",)
    assert cond.sites == 2 and forms.form("p_sin").sites == 1
    assert forms.form("e_log").is_effectful and not forms.form("p_sin").is_effectful
    fixed = dataclasses.replace(head, operand_dtypes=("int8",))
    assert fixed.operand_dtype(0) == "int8" and fixed.operand_dtype(3) is None and fixed.fixes_dtypes


def test_the_typing_rules_refuse_what_eager_would():
    assert form.same_dims(("s0",), ("s0",)) == ("s0",) and form.broadcast_into(("s0", "s1"), ("s1",)) == ("s0", "s1")
    for rule, args in ((form.same_dims, (("s0",), ("s1",))), (form.broadcast_into, (("s1",), ("s0", "s1"))),
                       (form.need_rank, (("s0",), 2)), (form.dim_attr, ({"dim": 2}, ("s0", "s1"))),
                       (form.const, ({"c": 3.25},)), (form.known_dim, ("u0 + 1",)), (form.data_size, ({},))):
        with pytest.raises(Illegal):
            rule(*args)
    assert form.replace_dim(("s0", "s1"), 0, None) == ("s1",) and form.replace_dim(("s0", "s1"), 1, "2") == ("s0", "2")
    assert form.data_size({"size": "u3"}) == ("u3",) and form.const({"c": form.CONSTANTS[0]}) == form.CONSTANTS[0]


def test_dims_are_written_as_code_with_parentheses_where_needed():
    assert form.py_dim("s0") == "s0" and form.py_dim("4") == "4" and form.py_dim("s0 // 2") == "(s0 // 2)"
