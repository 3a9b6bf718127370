"""The strided views (``fuzzer.program.strided_forms``): each does in eager torch what its
typing says, and a view's complement is disjoint from it; one statement each, no compile."""

import random

import pytest
import torch
from helpers import eager_agrees_with_typing, one_statement

from fuzzer.program import codegen, strided_forms
from fuzzer.program.ir import Stmt


@pytest.mark.parametrize("form", strided_forms.FORMS, ids=lambda f: f.name)
def test_each_form_does_what_its_typing_says(form):
    dims = ("s0", "s1") if form.name == "T" else ("s0", "s0", "s1")  # x.T takes rank 2 alone
    draw = strided_forms.draw_box if form.dense_root else form.draw
    attrs = draw(random.Random(5), dims, "u0") if draw else {}
    c = one_statement(form.name, [(dims, None)] * form.arity, attrs, sym_min={"s0": 3, "s1": 3},
                      binding={"s0": 5, "s1": 7})
    eager_agrees_with_typing(c)


def test_a_views_complement_covers_the_rest_of_its_dim():
    head = Stmt("head", ("x0",), "v0", {"dim": 1})
    assert strided_forms.complement(head, "v1") == Stmt("tail", ("x0",), "v1", {"dim": 1})
    box = Stmt("as_strided", ("x0",), "v0", {"base": ["s0", "s1"], "pieces": ["evens", "all"], "order": [0, 1]})
    twin = strided_forms.complement(box, "v1")
    assert twin.attrs["pieces"] == ["odd", "all"] and twin.out == "v1"
    assert strided_forms.complement(Stmt("clone", ("x0",), "v0", {}), "v1") is None


def test_an_as_strided_and_its_complement_are_disjoint_in_eager():
    box = Stmt("as_strided", ("x0",), "v0", {"base": ["s0", "s1"], "pieces": ["head", "evens"], "order": [0, 1]})
    twin = strided_forms.complement(box, "v0")
    for stmt in (box, twin):
        assert strided_forms.complement(strided_forms.complement(stmt, "v0"), "v0") == stmt
    x = torch.zeros(6, 8)
    for k, stmt in enumerate((box, twin)):
        c = one_statement("as_strided", [(("s0", "s1"), None)], stmt.attrs, binding={"s0": 6, "s1": 8})
        (view,) = codegen.build(c.program)(x)
        view.add_(k + 1)
    assert set(x.unique().tolist()) <= {0.0, 1.0, 2.0} and (x == 1).sum() == (x == 2).sum() > 0


def test_a_companion_is_drawn_only_under_the_overlap_rule():
    head = Stmt("head", ("x0",), "v0", {"dim": 0})
    assert all(strided_forms.companion(head, "v1", random.Random(k), overlap_rule=False) is None for k in range(20))
    drawn = [strided_forms.companion(head, "v1", random.Random(k), overlap_rule=True) for k in range(40)]
    assert 5 < sum(d is not None for d in drawn) < 35
