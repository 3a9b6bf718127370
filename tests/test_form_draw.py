"""Module tests of program/form_draw: a category by its weight, then one of its forms."""

import random

from fuzzer.program import forms
from fuzzer.program.form_draw import CATEGORY_WEIGHTS, FormDraw
from fuzzer.program.form_record import ATEN, CONTROL, VIEW


def test_only_categories_with_a_weight_and_a_form_take_part_in_the_order_given():
    aten, view = forms.form("add"), forms.form("narrow")
    draw = FormDraw.of({ATEN: [aten], VIEW: [view], CONTROL: []}, table={ATEN: 2, VIEW: 0, CONTROL: 1})
    assert draw.categories == (ATEN,) and draw.weights == (2,)
    assert {draw(random.Random(s)).name for s in range(20)} == {"add"}


def test_the_default_table_is_the_category_weights():
    aten = forms.form("add")
    draw = FormDraw.of({ATEN: [aten], VIEW: [forms.form("narrow")]})
    assert draw.categories == (ATEN, VIEW)
    assert draw.weights == (CATEGORY_WEIGHTS[ATEN], CATEGORY_WEIGHTS[VIEW])
    assert {draw(random.Random(s)).name for s in range(50)} == {"add", "narrow"}
