"""Views to dtypes of another element size and back (feature ``dtype-views``,
``width_forms.width_view``): the IR admits one only over a view whose last dim has
stride 1 for every binding (torch refuses the narrowing view otherwise), writes through
it reach its operand, and every generated one runs."""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge.execute import run_eager
from fuzzer.program import features, forms
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check

INPUTS = {"x0": ("s0", "s1"), "x1": ("s0", "s1"), "x2": ("s1",)}
BOX = {"base": ["s0", "s1"], "pieces": ["odd", "tail"], "order": [0, 1]}


@pytest.mark.parametrize("body", [
    [("width_view", ["x0"], "v0", {"width": "bytes"})],
    [("head", ["x0"], "v0", {"dim": 0}), ("width_view", ["v0"], "v1", {"width": "shorts"})],
    [("head", ["x0"], "v0", {"dim": 1}), ("width_view", ["v0"], "v1", {"width": "shorts"})],  # an odd offset
    [("as_strided", ["x0"], "v0", BOX), ("width_view", ["v0"], "v1", {"width": "bytes"})],
    [("unsqueeze", ["x2"], "v0", {}), ("width_view", ["v0"], "v1", {"width": "shorts"})],
    # a write through it beside a disjoint view of its storage
    [("head", ["x0"], "v0", {"dim": 0}), ("width_view", ["v0"], "v1", {"width": "bytes"}),
     ("tail", ["x0"], "v2", {"dim": 0}), ("add_", ["v1", "v2"], None, {})],
])
def test_a_width_view_over_a_unit_stride_last_dim_is_legal(body):
    check(prog(INPUTS, body))


@pytest.mark.parametrize("body, mode, message", [
    ([("transpose", ["x0"], "v0", {}), ("width_view", ["v0"], "v1", {"width": "bytes"})], {}, "stride 1"),
    ([("slice_step", ["x0"], "v0", {"dim": 1}), ("width_view", ["v0"], "v1", {"width": "bytes"})], {},
     "stride 1"),
    ([("add", ["x0", "x1"], "v0", {}), ("width_view", ["v0"], "v1", {"width": "bytes"})], {}, "stride 1"),
    ([("width_view", ["x0"], "v0", {"width": "bytes"})], {"strided": ("x0",)}, "stride 1"),
    ([("width_view", ["x0"], "v0", {"width": "bytes"})], {"layouts": (("x0", "transposed"),)}, "stride 1"),
    ([("select", ["x2"], "v0", {"dim": 0}), ("width_view", ["v0"], "v1", {"width": "bytes"})], {},
     "stride 1"),  # 0-d: no last dim to scale
    ([("width_view", ["x0"], "v0", {"width": "longs"})], {}, "width"),
    # the same elements as its operand: a write through it beside the operand overlaps
    ([("width_view", ["x0"], "v0", {"width": "bytes"}), ("add_", ["v0", "x0"], None, {})], {}, "overlap"),
])
def test_a_width_view_torch_may_refuse_or_a_write_it_overlaps_is_illegal(body, mode, message):
    with pytest.raises(InvalidProgram, match=message):
        check(dataclasses.replace(prog(INPUTS, body), mode=Mode(**mode)))


def test_a_write_through_a_width_view_is_a_write_to_its_operand():
    body = [("head", ["x0"], "v0", {"dim": 1}), ("width_view", ["v0"], "v1", {"width": "shorts"}),
            ("mul_", ["v1"], None, {"c": 2.0})]
    c = case(prog(INPUTS, body), bindings=[{"s0": 3, "s1": 5}, {"s0": 2, "s1": 0}])
    for runs, binding in zip(run_eager(c, "cpu"), c.bindings):
        assert runs.eager.failure is None, runs.eager.failure
        x0 = runs.eager.inputs_after[0]
        assert x0.shape == (binding["s0"], binding["s1"])
    before = run_eager(case(prog(INPUTS, []), bindings=c.bindings[:1]), "cpu")[0].eager.inputs_after[0]
    after = run_eager(case(prog(INPUTS, body), bindings=c.bindings[:1]), "cpu")[0].eager.inputs_after[0]
    assert torch.equal(after[:, :2], 2 * before[:, :2]) and torch.equal(after[:, 2:], before[:, 2:])


def test_generated_width_views_run_eagerly_on_every_binding_among_every_feature():
    ran = 0
    for seed in range(300):
        c = generate(seed, features=features.ALL | {features.DTYPE_VIEWS: 1.0})
        if not any(s.form == "width_view" for s in c.program.body):
            continue
        for runs in run_eager(c, "cpu"):
            assert runs.eager.failure is None, (seed, runs.eager.failure)
        ran += 1
    assert ran >= 10
    assert not any(forms.form(s.form).feature == features.DTYPE_VIEWS
                   for seed in range(60) for s in generate(seed, features=features.ALL | {features.DTYPE_VIEWS: 0.0})
                   .program.body)


@pytest.mark.compile
def test_writes_through_width_views_compile_clean():
    from fuzzer.judge.observe import caches_off
    from fuzzer.judge.trial import run_trial
    body = [("head", ["x0"], "v0", {"dim": 1}), ("width_view", ["v0"], "v1", {"width": "shorts"}),
            ("mul_", ["v1"], None, {"c": 2.0}), ("width_view", ["x1"], "v2", {"width": "bytes"}),
            ("m_scale", ["v2"], None, {"site": 0}), ("add", ["v2", "x2"], "v3", {})]
    c = case(prog(INPUTS, body, outputs=["v3"]), bindings=[{"s0": 4, "s1": 6}, {"s0": 3, "s1": 5}, {"s0": 2, "s1": 0}])
    with caches_off():
        result = run_trial(c, "cpu", confirm=False)
    assert result.status == "clean", result.verdict.divergences


def test_the_shrinker_takes_a_width_view_to_a_dtype_view_and_away():
    from fuzzer.reduce.order import complexity
    from fuzzer.reduce.passes.rewrite import statement_edits
    c = case(prog(INPUTS, [("width_view", ["x0"], "v0", {"width": "shorts"}), ("mul_", ["v0"], None, {"c": 0.5})]))
    offered = [e for e in statement_edits(c) if e.program.body[0].form != "width_view"]
    assert [e.program.body[0].form for e in offered] == ["dtype_view", "alias"]
    assert all(complexity(e) < complexity(c) for e in offered)
