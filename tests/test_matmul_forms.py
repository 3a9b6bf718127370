"""Matrix products and a batch-of-one broadcast view (feature ``matmuls``,
``fuzzer.program.matmul_forms``): what each form computes in eager torch, the IR's
typing and overlap rule over them (both sides), the contract judging a product moved
across a write through the broadcast view (stand-ins, as in ``test_contract``),
generation, shrinking."""

import pytest
import torch
from helpers import case, prog
from test_contract import verdict

from fuzzer.judge import contract
from fuzzer.program import features, forms, matmul_forms
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, check
from fuzzer.reduce.passes.rewrite import statement_edits

X = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}
SQUARE = {"x0": ("s0", "s0"), "x1": ("s0", "s0"), "x2": ("s0", "s0")}


def _eval(form: str, *args):
    f = forms.form(form)
    names = ["x", "y", "z"][:f.arity]
    text = f.render(names, {}, [tuple(a.shape) for a in args])
    scope = {"torch": torch, **dict(zip(names, args))}
    if f.returns:
        return eval(text, scope)
    exec(text, scope)
    return args[0]


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (0, 2), (2, 0)])
def test_the_products_and_the_broadcast_view(shape):
    x, y = torch.randn(shape), torch.randn(shape)
    assert torch.allclose(_eval("gram", x, y), torch.matmul(x, y.transpose(-1, -2)))
    square = torch.randn(shape[:-1] + (shape[-2],))
    assert torch.allclose(_eval("addmm_", square.clone(), x, y), square + x @ y.mT)
    lead = _eval("lead_expand", x)
    assert lead.shape == (1,) + shape and lead.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    if x.numel():
        lead[0].view(-1)[0] = 7.0  # a write through the view is a write to x
        assert x.view(-1)[0] == 7.0


def test_the_typing_asks_for_operands_of_one_shape_and_a_square_destination():
    check(prog(X, [("gram", ["x0", "x1"], "v0", {})], outputs=["v0"]))
    check(prog(SQUARE, [("addmm_", ["x0", "x1", "x2"], None, {})], outputs=["x0"]))
    with pytest.raises(InvalidProgram, match="addmm_ writes a value of dims"):
        check(prog({**X, "x2": ("s0", "s1")}, [("addmm_", ["x2", "x0", "x1"], None, {})]))
    with pytest.raises(InvalidProgram):
        check(prog({"x0": ("s0",), "x1": ("s0",)}, [("gram", ["x0", "x1"], "v0", {})], outputs=["v0"]))


def test_a_product_written_into_one_of_its_own_operands_is_the_overlap_rules():
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(prog(SQUARE, [("addmm_", ["x0", "x0", "x1"], None, {})]))


# ------------------------------------------------------------- the contract

#: a product of x0, then x0 written through its batch-of-one view
PRODUCT_THEN_WRITTEN = case(prog(X, [("gram", ["x0", "x1"], "v0", {}), ("lead_expand", ["x0"], "v1", {}),
                                     ("mul_", ["v1"], None, {"c": 2.0})], outputs=["v0"]))


def _faithful(x0, x1):
    v0 = x0 @ x1.mT
    x0.expand(1, *x0.shape).mul_(2.0)
    return (v0,)


def _product_after_the_write(x0, x1):
    x0.expand(1, *x0.shape).mul_(2.0)
    return (x0 @ x1.mT,)  # the write applied to the product's operand first (#175791's shape)


def test_a_product_moved_below_a_write_through_the_broadcast_view_is_a_wrong_output():
    assert verdict(_faithful, PRODUCT_THEN_WRITTEN).kinds() == []
    assert verdict(_product_after_the_write, PRODUCT_THEN_WRITTEN).kinds() == [contract.WRONG_OUTPUT]


# ------------------------------------------------------------- generation, shrinking

def test_generated_programs_with_the_feature_are_legal_and_use_every_form():
    table = features.parse(f"{matmul_forms.MATMULS}=1.0")
    used = set()
    for seed in range(120):
        program = generate(seed, features=table).program
        check(program)
        used |= {s.form for s in program.body}
    assert {n for n, f in forms.FORMS.items() if f.feature == features.MATMULS} <= used


@pytest.mark.parametrize("form,plain", [("lead_expand", "unsqueeze"), ("addmm_", "add_")])
def test_a_matmul_form_shrinks_toward_the_plain_form(form, plain):
    f = forms.form(form)
    names = ["x0", "x1", "x2"][:f.arity]
    c = case(prog(SQUARE, [(form, names, "v0" if f.returns else None, {})]))
    assert plain in {s.form for e in statement_edits(c) for s in e.program.body}
