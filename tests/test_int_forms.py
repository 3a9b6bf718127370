"""The integer, bool and mask forms (``fuzzer.program.int_forms``): every form does in
eager torch what its typing says, on operands of the dtypes it takes, and makes its
fixed dtype exactly; one statement each, no compile."""

import random

import pytest
from helpers import eager_agrees_with_typing, one_statement

from fuzzer.program import int_forms
from fuzzer.program.form_record import Illegal


@pytest.mark.parametrize("form", int_forms.FORMS, ids=lambda f: f.name)
def test_each_form_does_what_its_typing_says(form):
    dims = ("s0", "s0", "s1")
    attrs = form.draw(random.Random(1), dims, "u0") if form.draw else {}
    operands = [(dims, form.operand_dtype(k)) for k in range(form.arity)]
    c = one_statement(form.name, operands, attrs, binding={"s0": 3, "s1": 4})
    if "size" in attrs:  # a size only the data knows: no binding says it, eager must run
        return _runs_eagerly(c)
    eager_agrees_with_typing(c)


def _runs_eagerly(c):
    from fuzzer.judge import execute

    (run,) = execute.run_eager(c, "cpu")
    assert run.eager.failure is None, run.eager.failure


def test_every_form_is_of_the_feature_and_what_it_makes_it_makes_exactly():
    for form in int_forms.FORMS:
        assert form.feature == int_forms.INT_TENSORS
        assert form.exact_result == (form.result_dtype is not None), form.name


@pytest.mark.parametrize("attrs, words", [({"op": "**", "k": 2}, "division"), ({"op": "//", "k": 7}, "divisor")])
def test_a_division_takes_only_a_floor_division_or_remainder_by_a_small_divisor(attrs, words):
    with pytest.raises(Illegal, match=words):
        int_forms._divmod([("s0",)], attrs, {})
    assert int_forms._divmod([("s0",)], {"op": "%", "k": int_forms.DIVISORS[0]}, {}) == ("s0",)
