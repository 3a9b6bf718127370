"""Storage swaps (``fuzzer.program.swap_forms``): each form does in eager torch what its
typing says: a tensor set onto a storage views it, a clone's or a grown buffer is its
own, a resized head keeps the first rows; no compile."""

import pytest
import torch
from helpers import eager_agrees_with_typing, one_statement, prog

from fuzzer.program import codegen, custom_ops, swap_forms
from fuzzer.program.form_record import NO_BACKWARD
from fuzzer.program.ir import check

ONE_OPERAND = [f for f in swap_forms.FORMS if f.arity == 1]


@pytest.mark.parametrize("form", ONE_OPERAND, ids=lambda f: f.name)
def test_each_form_of_one_operand_does_what_its_typing_says(form):
    eager_agrees_with_typing(one_statement(form.name, [(("s0", "s1"), None)], {}, binding={"s0": 5, "s1": 3}))


def test_a_swapped_fresh_result_views_the_storage_it_was_set_onto():
    p = prog({"x0": ("s0", "s1")}, [("clone", ["x0"], "v0", {}), ("p_sin", ["x0"], "v1", {"site": 0}),
                                    ("swap", ["v0", "v1"], "v2", {})], outputs=["v2"])
    typing = check(p)
    assert typing.root["v2"] == "v0" and typing.dims["v2"] == ("s0", "s1")
    custom_ops.install()
    x = torch.randn(4, 3)
    (v2,) = codegen.build(p)(x)
    assert torch.equal(v2, x)  # v1 set onto the clone's storage reads the clone's values, not sin's


def test_a_resized_head_keeps_the_first_rows_as_a_buffer_of_its_own():
    c = one_statement("resize_head", [(("s0", "s1"), None)], {}, binding={"s0": 5, "s1": 3})
    x = torch.randn(5, 3).t().contiguous().t()  # not contiguous: the clone makes it so first
    (out,) = codegen.build(c.program)(x)
    assert torch.equal(out, x[:2]) and out.is_contiguous()
    assert swap_forms._infer_head([("s0", "s1")], {}, {}) == ("s0 // 2", "s1")


def test_every_swap_form_is_of_the_feature_and_has_no_backward():
    for form in swap_forms.FORMS:
        assert form.feature == swap_forms.STORAGE_SWAPS and form.grad == NO_BACKWARD
