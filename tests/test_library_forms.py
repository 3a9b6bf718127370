"""The forms of the first custom-op library (``fuzzer.program.library_forms``): each calls
its op at its site in eager torch, gives the dims its typing says, and writes no operand
it does not declare."""

import random

import pytest
import torch
from helpers import prog

from fuzzer.program import codegen, custom_ops, library_forms, sizes
from fuzzer.program.form_record import REGION
from fuzzer.program.ir import check

SIZES = {"s0": 4, "s1": 5}


def _one(form, seed: int):
    attrs = form.draw(random.Random(seed), ("s0", "s1"), "u0") if form.draw else {}
    attrs = {**attrs, "site": 0, **({"site2": 1} if form.sites == 2 else {})}
    inputs = {f"x{k}": ("s0", "s1") for k in range(form.arity)}
    out = "v0" if form.returns else None
    return prog(inputs, [(form.name, list(inputs), out, attrs)], outputs=[out] if out else [],
                sym_min={"s0": 2, "s1": 2})


@pytest.mark.parametrize("form", library_forms.FORMS, ids=lambda f: f.name)
def test_each_form_calls_its_op_and_does_what_its_typing_says(form):
    trace = custom_ops.install().TRACE["calls"]
    for seed in range(3):
        program = _one(form, seed)
        typing = check(program)
        xs = [torch.randn(4, 5) for _ in range(form.arity)]
        before = [x.clone() for x in xs]
        trace.clear()
        results = codegen.build(program)(*xs)
        assert {site for op, site in trace if op == form.custom} & {0, 1}
        written = {k for k, (x, b) in enumerate(zip(xs, before)) if not torch.equal(x, b)}
        assert written <= set(form.mutates)
        if form.returns and not any(sizes.has_unbacked(d) for d in typing.dims["v0"]):
            (out,) = results
            assert tuple(out.shape) == sizes.concrete(typing.dims["v0"], SIZES)


def test_every_op_of_the_first_library_has_its_plain_form():
    from fuzzer.program.op_snippets import FIRST_LIBRARY

    assert {op.name for op in FIRST_LIBRARY} <= {f.name for f in library_forms.FORMS}


def test_a_region_s_function_is_one_per_site():
    assert library_forms.region_function("p_sin", 3) != library_forms.region_function("p_sin", 4)
    assert {f.name for f in library_forms.FORMS if f.hop == REGION} == {
        f"in_region_{name}" for name in library_forms.REGION_OPS}
