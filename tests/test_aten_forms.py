"""The aten forms (``fuzzer.program.aten_forms``): each does in eager torch what its
typing says (the dims it infers, a view's storage, the operand an in-place form writes),
and refuses the operands eager would."""

import random

import pytest
import torch
from helpers import prog

from fuzzer.program import aten_forms, codegen
from fuzzer.program.form_record import VIEW
from fuzzer.program.ir import InvalidProgram, check
from fuzzer.program.sizes import concrete

SIZES = {"s0": 4, "s1": 5}
#: the forms taken on their own, with dims that fit them
PLAIN = [f for f in aten_forms.FORMS if f.arity and f.draw is not aten_forms.draw_size]


def _one(form, seed: int):
    attrs = form.draw(random.Random(seed), ("s0", "s1"), "u0") if form.draw else {}
    inputs = {f"x{k}": ("s0", "s1") for k in range(form.arity)}
    out = "v0" if form.returns else None
    return prog(inputs, [(form.name, list(inputs), out, attrs)], outputs=[out] if out else [],
                sym_min={"s0": 2, "s1": 2})


@pytest.mark.parametrize("form", PLAIN, ids=lambda f: f.name)
def test_each_form_does_what_its_typing_says(form):
    for seed in range(3):
        program = _one(form, seed)
        typing = check(program)
        xs = [torch.randn(4, 5) for _ in range(form.arity)]
        before = [x.clone() for x in xs]
        results = codegen.build(program)(*xs)
        written = [k for k, (x, b) in enumerate(zip(xs, before)) if not torch.equal(x, b)]
        assert written == list(form.mutates)
        if not form.returns:
            continue
        (out,) = results
        assert tuple(out.shape) == concrete(typing.dims["v0"], SIZES)
        shares = out.untyped_storage().data_ptr() == xs[0].untyped_storage().data_ptr()
        assert shares == (form.category == VIEW)


def test_sizes_from_data_take_a_name_of_their_own_and_are_the_count_eager_finds():
    program = prog({"x0": ("s0",)}, [("select_pos", ["x0"], "v0", {"size": "u0"}),
                                     ("head_pos", ["x0"], "v1", {"size": "u1"})], outputs=["v0", "v1"])
    typing = check(program)
    assert typing.dims["v0"] == ("u0",) and typing.dims["v1"] == ("u1",)
    x = torch.tensor([1.0, -1.0, 2.0, 3.0])
    selected, head = codegen.build(program)(x)
    assert selected.shape == (3,) and head.shape == (3,)


@pytest.mark.parametrize("body, why", [
    ([("head_pos", ["x0"], "v0", {"size": "u0"})], "rank-1"),
    ([("sum", ["x0"], "v0", {"dim": 2})], "out of range"),
    ([("scale", ["x0"], "v0", {"c": 3.0})], "constant"),
    ([("narrow", ["x0"], "v0", {"dim": 0})], "narrow needs"),
])
def test_the_typing_refuses_what_eager_would(body, why):
    with pytest.raises(InvalidProgram, match=why):
        check(prog({"x0": ("s0", "s1")}, body, sym_min={"s0": 0, "s1": 1}))


def test_only_the_binary_forms_broadcast():
    assert {f.name for f in aten_forms.FORMS if f.broadcasts} == {"add", "mul", "add_", "copy_"}
    program = prog({"x0": ("s0", "s1"), "x1": ("s1",)}, [("add_", ["x0", "x1"], None, {})])
    check(program)
