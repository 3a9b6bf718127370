"""The view and indexing forms of the tensor API (``fuzzer.program.tensor_forms``):
every form of both tables does in eager torch what its typing says, on operands of the
dims and attributes it draws; one statement each, no compile."""

import random

import pytest
from helpers import eager_agrees_with_typing, one_statement

from fuzzer.program import tensor_forms
from fuzzer.program.form import Illegal

FORMS = tensor_forms.VIEW_FORMS + tensor_forms.INDEXING_FORMS


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.name)
def test_each_form_does_what_its_typing_says(form):
    dims = ("s0", "s0", "s1")
    attrs = form.draw(random.Random(3), dims, "u0") if form.draw else {}
    c = one_statement(form.name, [(dims, None)] * form.arity, attrs, binding={"s0": 4, "s1": 3})
    eager_agrees_with_typing(c)


def test_the_views_of_the_table_are_views_and_the_indexing_forms_are_not():
    assert all(f.is_view for f in tensor_forms.VIEW_FORMS)
    assert not any(f.is_view for f in tensor_forms.INDEXING_FORMS)
    assert {f.feature for f in tensor_forms.VIEW_FORMS} == {tensor_forms.VIEWS}
    assert {f.feature for f in tensor_forms.INDEXING_FORMS} == {tensor_forms.INDEXING}


def test_the_typing_needs_what_eager_needs():
    assert tensor_forms._infer_permute([("s0", "s1", "2")], {}, {}) == ("2", "s1", "s0")
    with pytest.raises(Illegal, match="rank"):
        tensor_forms._infer_permute([("s0",)], {}, {})
    with pytest.raises(Illegal, match=">= 1"):
        tensor_forms._infer_select([("s0",)], {"dim": 0}, {"s0": 0})
    assert tensor_forms._infer_select([("s0", "s1")], {"dim": 1}, {"s1": 1}) == ("s0",)
