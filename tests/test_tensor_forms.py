"""The view and indexing forms (features ``views`` and ``indexing``): each does what its
typing says in eager torch, and a program of each feature compiles clean."""

import random

import pytest
import torch
from helpers import case, eager_agrees_with_typing, one_statement, prog

from fuzzer.judge.trial import CLEAN, run_trial
from fuzzer.program import codegen, forms, tensor_forms
from fuzzer.program.form_record import Illegal
from fuzzer.program.ir import InvalidProgram, check

NEW_FORMS = {f.name for f in tensor_forms.FORMS}


def _eager(program, *inputs):
    fn = codegen.build(program)
    return fn(*inputs)


def _one(form: str, attrs: dict, dims=("s0", "s1"), extra=()):
    inputs = {"x0": dims, **{f"x{k + 1}": d for k, d in enumerate(extra)}}
    f = forms.form(form)
    args = ["x0"] + [f"x{k + 1}" for k in range(len(extra))]
    out = "v0" if f.returns else None
    return prog(inputs, [(form, args, out, attrs)], outputs=[out] if out else [], sym_min={"s0": 2, "s1": 3})


VIEW_CASES = [("permute", {}), ("select", {"dim": 1}), ("slice_step", {"dim": 1}), ("chunk", {"dim": 0}),
              ("movedim", {}), ("alias", {})]


@pytest.mark.parametrize("name, attrs", VIEW_CASES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_every_view_form_views_its_operand_whatever_its_layout(name, attrs, layout):
    """What the IR assumes of a view (its result shares its operand's storage, so a
    write through it reaches the base) holds in eager for every layout."""
    program = _one(name, attrs)
    typing = check(program)
    x = torch.randn(5, 4) if layout == "contiguous" else torch.randn(4, 5).t()
    (out,) = _eager(program, x)
    assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    from fuzzer.program.sizes import concrete
    assert tuple(out.shape) == concrete(typing.dims["v0"], {"s0": 5, "s1": 4})


def test_diagonal_and_squeeze_view_and_type_as_they_say():
    program = prog({"x0": ("s0", "s0")}, [("diagonal", ["x0"], "v0", {}), ("unsqueeze", ["v0"], "v1", {}),
                                          ("squeeze", ["v1"], "v2", {"dim": 0})], outputs=["v2"])
    x = torch.randn(4, 4)
    (out,) = _eager(program, x)
    # squeeze unsqueezes its dim first: a view of a view, its shape the operand's
    assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() and tuple(out.shape) == (1, 4)
    assert torch.equal(out, x.diagonal().unsqueeze(0))


@pytest.mark.parametrize("program, why", [
    (prog({"x0": ("s0",)}, [("select", ["x0"], "v0", {"dim": 0})], sym_min={"s0": 0}), "select needs"),
    (prog({"x0": ("s0", "s1")}, [("diagonal", ["x0"], "v0", {})]), "diagonal needs"),
    (prog({"x0": ("s0", "s1")}, [("squeeze", ["x0"], "v0", {"dim": 2})]), "out of range"),
    (prog({"x0": ("s0",), "x1": ("s1",)}, [("index_add_", ["x0", "x1"], None, {"dim": 0})]), "shapes differ"),
])
def test_the_typing_refuses_what_eager_would(program, why):
    with pytest.raises(InvalidProgram, match=why.split()[0]):
        check(program)


INPLACE_CASES = [("index_add_", {"dim": 0}, True), ("index_copy_", {"dim": 1}, True), ("masked_fill_", {"c": 2.0}, False),
                 ("index_put_", {"c": 2.0}, False), ("zero_", {}, False), ("fill_", {"c": 0.5}, False),
                 ("clamp_", {}, False), ("sub_", {}, True), ("div_", {"c": 2.0}, False),
                 ("unary_", {"fn": "tanh"}, False), ("lerp_", {}, True)]


@pytest.mark.parametrize("name, attrs, binary", INPLACE_CASES)
def test_every_in_place_form_writes_its_first_operand_only(name, attrs, binary):
    program = _one(name, attrs, extra=[("s0", "s1")] if binary else [])
    check(program)
    x, y = torch.randn(4, 5) * 2, torch.randn(4, 5)
    before_x, before_y = x.clone(), y.clone()
    _eager(program, *([x, y] if binary else [x]))
    assert not torch.equal(x, before_x) and torch.equal(y, before_y)


FRESH_CASES = [("flip", {"dim": 1}, False), ("index_select", {"dim": 0}, False), ("take_even", {"dim": 1}, False),
               ("masked_fill", {"c": 0.5}, False), ("where", {}, True)]


@pytest.mark.parametrize("name, attrs, binary", FRESH_CASES)
def test_every_indexing_form_with_a_result_makes_a_new_tensor(name, attrs, binary):
    program = _one(name, attrs, extra=[("s0", "s1")] if binary else [])
    typing = check(program)
    x = torch.randn(4, 5)
    (out,) = _eager(program, *([x, torch.randn(4, 5)] if binary else [x]))
    assert out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    from fuzzer.program.sizes import concrete
    assert tuple(out.shape) == concrete(typing.dims["v0"], {"s0": 4, "s1": 5})


def test_every_new_form_is_exercised_here():
    seen = {n for n, _ in VIEW_CASES} | {n for n, _, _ in INPLACE_CASES} | {n for n, _, _ in FRESH_CASES}
    seen |= {"diagonal", "squeeze"}
    assert seen == NEW_FORMS


@pytest.mark.parametrize("form", tensor_forms.FORMS, ids=lambda f: f.name)
def test_each_form_with_the_attributes_it_draws_does_what_its_typing_says(form):
    """Shape, dtype, storage shared where the IR says it aliases, and only the operands
    it writes written (``helpers.eager_agrees_with_typing``)."""
    dims = ("s0", "s0", "s1")
    attrs = form.draw(random.Random(3), dims, "u0") if form.draw else {}
    c = one_statement(form.name, [(dims, None)] * form.arity, attrs, binding={"s0": 4, "s1": 3})
    eager_agrees_with_typing(c)


def test_the_views_of_the_table_are_views_of_their_feature_and_the_indexing_forms_are_not():
    assert all(f.is_view for f in tensor_forms.VIEW_FORMS)
    assert not any(f.is_view for f in tensor_forms.INDEXING_FORMS)
    assert {f.feature for f in tensor_forms.VIEW_FORMS} == {tensor_forms.VIEWS}
    assert {f.feature for f in tensor_forms.INDEXING_FORMS} == {tensor_forms.INDEXING}


def test_a_permute_needs_rank_two_and_reverses_the_dims():
    assert tensor_forms._infer_permute([("s0", "s1", "2")], {}, {}) == ("2", "s1", "s0")
    with pytest.raises(Illegal, match="rank"):
        tensor_forms._infer_permute([("s0",)], {}, {})


VIEWS_PROGRAM = prog(
    {"x0": ("s0", "s1"), "x1": ("s0", "s0")},
    [("permute", ["x0"], "v0", {}), ("select", ["v0"], "v1", {"dim": 0}),
     ("slice_step", ["x0"], "v2", {"dim": 1}), ("chunk", ["x0"], "v3", {"dim": 0}),
     ("movedim", ["x0"], "v4", {}), ("alias", ["x1"], "v5", {}), ("diagonal", ["x1"], "v6", {}),
     ("unsqueeze", ["v6"], "v7", {}), ("squeeze", ["v7"], "v8", {"dim": 0}),
     ("mul_", ["v1"], None, {"c": 2.0}), ("m_scale", ["v2"], None, {"site": 0}),
     ("add_", ["v8", "v1"], None, {}), ("p_sin", ["v5"], "v9", {"site": 1})],
    outputs=["v3", "v4", "v9"], sym_min={"s0": 2, "s1": 2})

INDEXING_PROGRAM = prog(
    {"x0": ("s0", "s1"), "x1": ("s0", "s1")},
    [("flip", ["x0"], "v0", {"dim": 1}), ("index_select", ["x0"], "v1", {"dim": 0}),
     ("take_even", ["x1"], "v2", {"dim": 1}), ("where", ["v0", "x1"], "v3", {}),
     ("masked_fill", ["v1"], "v4", {"c": 0.5}), ("clone", ["x0"], "v5", {}),
     ("index_add_", ["v5", "v1"], None, {"dim": 0}), ("index_copy_", ["v5", "v3"], None, {"dim": 1}),
     ("masked_fill_", ["v5"], None, {"c": -1.0}), ("index_put_", ["v4"], None, {"c": 2.0}),
     ("clone", ["x1"], "v6", {}), ("zero_", ["v6"], None, {}), ("sub_", ["v6", "x0"], None, {}),
     ("div_", ["v6"], None, {"c": 2.0}), ("unary_", ["v6"], None, {"fn": "tanh"}),
     ("lerp_", ["v6", "v3"], None, {}), ("clamp_", ["v6"], None, {}), ("fill_", ["v2"], None, {"c": 1.5}),
     ("m_addto", ["v6", "v5"], None, {"site": 0}), ("masked_fill_", ["x1"], None, {"c": 0.5})],
    outputs=["v0", "v2", "v4", "v5", "v6"], sym_min={"s0": 1, "s1": 1})


@pytest.mark.compile
@pytest.mark.parametrize("program", [VIEWS_PROGRAM, INDEXING_PROGRAM], ids=["views", "indexing"])
def test_a_program_of_every_new_form_compiles_clean(program):
    """Inductor compiles each feature's forms, writes through every view and indexed
    store included, and agrees with eager (torch 2.13; a torch that does not is a
    finding of dcefuzz, and this test says so)."""
    result = run_trial(case(program), "cpu")
    assert result.status == CLEAN, result.verdict.divergences[:3]
