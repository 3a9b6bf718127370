"""Views to dtypes of another element size and back (``fuzzer.program.width_forms``):
each width does in eager torch what its typing says (the same elements, a view of its
operand), and the typing refuses what ``Tensor.view(dtype)`` cannot take; no compile."""

import pytest
from helpers import eager_agrees_with_typing, one_statement

from fuzzer.program import codegen, width_forms
from fuzzer.program.form_record import Illegal


@pytest.mark.parametrize("width", sorted(width_forms.WIDTHS))
def test_each_width_views_its_operand_and_back(width):
    c = one_statement("width_view", [(("s0", "s0", "s1"), None)], {"width": width}, binding={"s0": 5, "s1": 7})
    eager_agrees_with_typing(c)
    text = codegen.source(c.program)
    assert all(f".view({dtype})" in text for dtype in width_forms.WIDTHS[width]), text


def test_a_width_is_one_of_the_table_and_a_0d_operand_has_no_last_dim():
    (form,) = width_forms.FORMS
    assert form.feature == width_forms.DTYPE_VIEWS and form.unit_last
    assert form.infer([("s0",)], {"width": "shorts"}, {}) == ("s0",)
    with pytest.raises(Illegal, match="width"):
        form.infer([("s0",)], {"width": "words"}, {})
    with pytest.raises(Illegal):
        form.infer([()], {"width": "bytes"}, {})
