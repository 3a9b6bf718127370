"""Integer and bool tensors through aten forms (feature ``int-tensors``,
``fuzzer.program.int_forms``): which integers the IR lets a program make (exact ones
only, ``fuzzer.program.exact``) on both sides, their dtypes, the generator, eager runs
on every binding, and the exact comparison of an integer result."""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import numeric
from fuzzer.judge.execute import run_eager
from fuzzer.program import features, forms
from fuzzer.program.form_record import INTEGER
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check

INPUTS = {"x0": ("s0", "s1"), "x1": ("s0", "s1"), "x2": ("s1",)}


def _int_forms(program) -> list[str]:
    return [s.form for s in program.body if forms.form(s.form).feature == features.INT_TENSORS]


@pytest.mark.parametrize("body, dtypes", [
    # an index of an input, brought into range and used
    ([("argsort", ["x0"], "v0", {"dim": 1}), ("gather", ["x1", "v0"], "v1", {"dim": 1})],
     {"v0": "int64", "v1": None}),
    # a mask of two inputs, combined, used in a float
    ([("less", ["x0", "x2"], "v0", {}), ("positive", ["x1"], "v1", {}), ("logic", ["v0", "v1"], "v2", {"op": "^"}),
      ("masked_fill_mask", ["x0", "v2"], "v3", {"c": 2.0}), ("where_mask", ["x1", "v0", "x0"], "v4", {})],
     {"v0": "bool", "v2": "bool", "v3": None, "v4": None}),
    # integer arithmetic on an integer made from a float input, and what it makes in turn
    ([("to_int32", ["x0"], "v0", {}), ("divmod_int32", ["v0"], "v1", {"op": "//", "k": 2}),
      ("divmod_int32", ["v1"], "v2", {"op": "%", "k": 3}), ("widen_int32", ["v2"], "v3", {}),
      ("positive_int64", ["v3"], "v4", {}), ("words", ["v3"], "v5", {}), ("argmax", ["x2"], "v6", {"dim": 0}),
      ("sum_int64", ["v3"], "v7", {"dim": 1}), ("to_int32", ["x2"], "v8", {}),
      ("index_select_int32", ["x1", "v8"], "v9", {"dim": 0})],
     {"v1": "int32", "v3": "int64", "v4": "bool", "v5": "int32", "v6": "int64", "v7": "int64", "v9": None}),
    # an input written by an opaque custom op is still exact
    ([("m_scale", ["x0"], None, {"site": 0}), ("count_nonzero", ["x0"], "v0", {"dim": 0}),
      ("index_select_int64", ["x1", "v0"], "v1", {"dim": 1})], {"v0": "int64", "v1": None}),
    # a mask's bytes, and sizes from data
    ([("positive", ["x0"], "v0", {}), ("mask_bytes", ["v0"], "v1", {}), ("widen_uint8", ["v1"], "v2", {}),
      ("nonzero", ["v0"], "v3", {"size": "u3"}), ("mask_select", ["x1", "v0"], "v4", {"size": "u4"})],
     {"v1": "uint8", "v2": "int64", "v3": "int64", "v4": None}),
])
def test_integers_made_from_exact_values_are_legal_and_typed(body, dtypes):
    typing = check(prog(INPUTS, body))
    assert {v: typing.dtypes[v] for v in dtypes} == dtypes


@pytest.mark.parametrize("body, message", [
    # an integer of a float the compiler computed: its rounding could flip it
    ([("add", ["x0", "x1"], "v0", {}), ("argmax", ["v0"], "v1", {"dim": 1})], "compiler computes"),
    ([("mul_", ["x0"], None, {"c": 2.0}), ("positive", ["x0"], "v0", {})], "compiler computes"),
    ([("argsort", ["x0"], "v0", {"dim": 1}), ("mul_int64", ["x1", "v0"], "v1", {}), ("less", ["v1", "x0"], "v2", {})],
     "compiler computes"),
    ([("head", ["x0"], "v0", {"dim": 0}), ("unary_", ["v0"], None, {"fn": "sin"}), ("argsort", ["v0"], "v1",
                                                                                     {"dim": 0})],
     "compiler computes"),
    # each operand of the dtype its form takes
    ([("argsort", ["x0"], "v0", {"dim": 0}), ("masked_fill_mask", ["x1", "v0"], "v1", {"c": 2.0})], "takes bool"),
    ([("positive", ["x0"], "v0", {}), ("add", ["v0", "x1"], "v1", {})], "takes the program dtype"),
    ([("to_int32", ["x0"], "v0", {}), ("gather", ["x1", "v0"], "v1", {"dim": 0})], "takes int64"),
    # an index needs a non-empty dim to be brought into range (a remainder by 0 raises)
    ([("argsort", ["x1"], "v0", {"dim": 0}), ("gather", ["x0", "v0"], "v1", {"dim": 0})], "dim 's0' >= 1"),
    ([("argmax", ["x0"], "v0", {"dim": 0})], "dim 's0' >= 1"),
])
def test_integers_the_compiler_may_round_or_torch_refuses_are_illegal(body, message):
    with pytest.raises(InvalidProgram, match=message):
        check(prog(INPUTS, body, sym_min={"s0": 0, "s1": 1}))


def test_an_aten_form_with_rounding_may_not_make_a_fixed_dtype(monkeypatch):
    """The rule itself: an aten form makes a fixed dtype only where it has nothing to
    round (``Form.exact_result``); the same form without the mark is refused."""
    body = [("argmax", ["x0"], "v0", {"dim": 1})]
    check(prog(INPUTS, body))
    monkeypatch.setitem(forms.FORMS, "argmax", dataclasses.replace(forms.FORMS["argmax"], exact_result=False))
    with pytest.raises(InvalidProgram, match="not opaque"):
        check(prog(INPUTS, body))


def test_a_float_made_from_integers_is_computed_so_inexact():
    """What an integer feeds is a float the compiler computes: no integer is made of it."""
    body = [("positive", ["x0"], "v0", {}), ("mul_bool", ["x1", "v0"], "v1", {}), ("argmax", ["v1"], "v2",
                                                                                   {"dim": 0})]
    with pytest.raises(InvalidProgram, match="compiler computes"):
        check(prog(INPUTS, body))


def test_a_program_that_takes_gradients_makes_no_integers():
    program = dataclasses.replace(prog(INPUTS, [("positive", ["x0"], "v0", {})]), mode=Mode(grad=True))
    with pytest.raises(InvalidProgram, match="gradients"):
        check(program)


def test_the_generator_draws_integers_only_with_the_feature_and_uses_them():
    with_feature = [generate(seed, features={features.INT_TENSORS: 1.0}).program for seed in range(60)]
    drawn = [f for p in with_feature for f in _int_forms(p)]
    assert {"argsort", "less", "positive"} <= set(drawn)
    # a mask or an index is used by a form that reads it, not only made
    assert any(forms.form(f).drawn_as == INTEGER for f in drawn)
    assert not any(_int_forms(generate(seed, features=features.ALL | {features.INT_TENSORS: 0.0}).program)
                   for seed in range(60))
    assert all(features.INT_TENSORS in p.features() for p in with_feature if _int_forms(p))


def test_generated_integer_programs_run_eagerly_on_every_binding_empty_sizes_too():
    """No program the feature draws makes eager raise (an index out of range, a view
    torch refuses): each runs on all its bindings, 0-sized ones among them."""
    ran = empty = 0
    for seed in range(80):
        c = generate(seed, features={features.INT_TENSORS: 1.0})
        if not _int_forms(c.program):
            continue
        for runs in run_eager(c, "cpu"):
            assert runs.eager.failure is None, (seed, runs.eager.failure)
        ran += 1
        empty += any(0 in b.values() for b in c.bindings)
    assert ran >= 20 and empty >= 3


def test_an_integer_result_is_compared_exactly_and_a_float_one_with_tolerance():
    """An index off by one is a finding however small the difference; a float the
    integers fed is judged with the float tolerances."""
    eager = torch.tensor([3, 0, 2])
    assert numeric.fixed_difference(eager, eager.clone()) is None
    assert "compared exactly" in numeric.fixed_difference(eager, torch.tensor([3, 1, 2]))
    mask = torch.tensor([True, False])
    assert "compared exactly" in numeric.fixed_difference(mask, ~mask)
    x = torch.tensor([1.0, 2.0])
    assert numeric.tensor_difference(x.double(), x, x + 1e-7) is None
    assert numeric.tensor_difference(x.double(), x, x + 1.0) is not None


def test_an_integer_program_runs_its_text():
    """The forms print what torch runs: an argsort of an input gathers a permutation of
    each row, a nonzero counts the mask's set elements."""
    body = [("argsort", ["x0"], "v0", {"dim": 1}), ("gather", ["x0", "v0"], "v1", {"dim": 1}),
            ("positive", ["x0"], "v2", {}), ("nonzero", ["v2"], "v3", {"size": "u3"}),
            ("count", ["v2"], "v4", {"dim": 1})]
    c = case(prog(INPUTS, body, outputs=["v1", "v3", "v4"]), bindings=[{"s0": 3, "s1": 5}, {"s0": 0, "s1": 2}])
    for runs, binding in zip(run_eager(c, "cpu"), c.bindings):
        v1, v3, v4 = runs.eager.outputs
        assert v1.shape == (binding["s0"], binding["s1"]) and bool((v1.diff(dim=1) >= 0).all())
        assert v3.shape[0] == int(v4.sum()) and v4.dtype == torch.int64


@pytest.mark.compile
def test_integer_programs_compile_clean():
    """The allowed side, judged: indices, masks, counts, a dtype view and floored
    division of negative integers, compiled and compared with eager (exactly where
    integer) on several bindings, an empty one among them."""
    from fuzzer.judge.observe import caches_off
    from fuzzer.judge.trial import run_trial
    body = [("argsort", ["x0"], "v0", {"dim": 1}), ("gather", ["x1", "v0"], "v1", {"dim": 1}),
            ("to_int32", ["x0"], "v2", {}), ("divmod_int32", ["v2"], "v3", {"op": "//", "k": 2}),
            ("divmod_int32", ["v2"], "v4", {"op": "%", "k": 3}), ("less", ["x0", "x2"], "v5", {}),
            ("masked_fill_mask", ["x1", "v5"], "v6", {"c": 2.0}), ("widen_int32", ["v3"], "v7", {}),
            ("words", ["v7"], "v8", {}), ("index_select_int32", ["x2", "v4"], "v9", {"dim": 0}),
            ("count", ["v5"], "v10", {"dim": 0})]
    c = case(prog(INPUTS, body, outputs=["v1", "v3", "v6", "v8", "v9", "v10"]),
             bindings=[{"s0": 4, "s1": 6}, {"s0": 7, "s1": 3}, {"s0": 0, "s1": 2}])
    with caches_off():
        result = run_trial(c, "cpu", confirm=False)
    assert result.status == "clean", result.verdict.divergences


def test_the_shrinker_takes_a_mask_away_and_two_masks_toward_one():
    from fuzzer.reduce.order import complexity
    from fuzzer.reduce.passes.rewrite import statement_edits
    body = [("less", ["x0", "x1"], "v0", {}), ("positive", ["x1"], "v1", {}), ("logic", ["v0", "v1"], "v2", {"op": "&"}),
            ("masked_fill_mask", ["x0", "v2"], "v3", {"c": 0.5})]
    c = case(prog(INPUTS, body, outputs=["v3"]))
    rewritten = {(n, e.program.body[n].form) for e in statement_edits(c) for n in range(4)
                 if e.program.body[n].form != body[n][0]}
    assert {(0, "positive"), (2, "invert"), (3, "clone")} <= rewritten
    assert all(complexity(e) < complexity(c) for e in statement_edits(c) if e.program.body != c.program.body)
