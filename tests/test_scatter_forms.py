"""The functional view scatters (feature ``view-scatters``, ``fuzzer.program.scatter_forms``):
each computes what writing the view of a copy computes, a select on a dim that may be
empty is refused, the generator draws them with the feature on (and a read or write of
the value scattered into right after) and never without it, generated programs run
eagerly, the shrinker takes each toward a plain form, and Inductor keeps eager's answer
where the value scattered into is read and written after."""


import pytest
import torch
from helpers import case, eager_agrees_with_typing, feature_runs_eagerly, never_drawn_when_off, one_statement, prog

from fuzzer.judge.execute import make_inputs
from fuzzer.program import codegen, features, forms, scatter_forms
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, check

SHAPES = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}


def _written_view(form: str, x: torch.Tensor, y: torch.Tensor, attrs: dict) -> torch.Tensor:
    """What the scatter means, written as a write of a copy through the view."""
    out, d = x.clone(), attrs.get("dim", 0)
    index = (slice(None),) * d
    if form == "slice_scatter_step":
        out[index + (slice(None, None, 2),)] = y[index + (slice(None, None, 2),)]
    elif form == "slice_scatter_tail":
        out[index + (slice(1, None),)] = y[index + (slice(1, None),)]
    elif form == "select_scatter":
        out.select(d, -1).copy_(y.select(d, -1))
    else:
        out.diagonal(attrs["diag"], -2, -1).copy_(y.diagonal(attrs["diag"], -2, -1))
    return out


@pytest.mark.parametrize("form, attrs", [
    ("slice_scatter_step", {"dim": 0}), ("slice_scatter_step", {"dim": 1}), ("slice_scatter_tail", {"dim": 1}),
    ("select_scatter", {"dim": 0}), ("select_scatter", {"dim": 1}),
    ("diagonal_scatter", {"diag": 0}), ("diagonal_scatter", {"diag": 1}), ("diagonal_scatter", {"diag": -1}),
])
def test_a_scatter_is_the_write_of_a_copy_through_its_view(form, attrs):
    c = one_statement(form, [(SHAPES["x0"], None), (SHAPES["x1"], None)], attrs, binding={"s0": 3, "s1": 5})
    eager_agrees_with_typing(c)
    x, y = make_inputs(c, 0, "cpu")
    (out,) = codegen.build(c.program)(x, y)
    want = _written_view(form, x, y, attrs)
    assert torch.equal(out, want)
    assert not torch.equal(out, x) and not torch.equal(out, y)


def test_a_select_on_a_dim_that_may_be_empty_or_a_diagonal_of_another_offset_is_refused():
    with pytest.raises(InvalidProgram, match="select_scatter needs dim 0"):
        check(prog(SHAPES, [("select_scatter", ["x0", "x1"], "v0", {"dim": 0})], sym_min={"s0": 0, "s1": 1}))
    check(prog(SHAPES, [("select_scatter", ["x0", "x1"], "v0", {"dim": 1})], sym_min={"s0": 0, "s1": 1}))
    with pytest.raises(InvalidProgram, match="diagonal offset 2"):
        check(prog(SHAPES, [("diagonal_scatter", ["x0", "x1"], "v0", {"diag": 2})]))


def test_the_generator_draws_scatters_then_the_value_scattered_into_only_with_the_feature():
    drawn, after = {f.name: 0 for f in scatter_forms.FORMS}, 0
    for seed in range(150):
        body = generate(seed, features=features.ALL | {features.VIEW_SCATTERS: 1.0}).program.body
        for k, stmt in enumerate(body):
            if stmt.form in drawn:
                drawn[stmt.form] += 1
                after += any(s.form in scatter_forms.AFTER and s.args[0] == stmt.args[0] for s in body[k + 1:k + 2])
    assert min(drawn.values()) >= 10 and after >= sum(drawn.values()) // 2, (drawn, after)
    never_drawn_when_off(features.VIEW_SCATTERS)


def test_generated_scatters_run_eagerly_on_every_binding():
    feature_runs_eagerly(features.VIEW_SCATTERS)


def test_the_shrinker_takes_a_scatter_toward_a_plain_form():
    from fuzzer.reduce.order import complexity
    from fuzzer.reduce.passes.rewrite import statement_edits
    c = case(prog(SHAPES, [("diagonal_scatter", ["x0", "x1"], "v0", {"diag": 1}),
                           ("e_log", ["v0"], None, {"site": 0})]))
    edits = [e for e in statement_edits(c) if e.program.body[0].form != "diagonal_scatter"]
    assert [e.program.body[0].form for e in edits] == ["add", "clone"]
    assert all(complexity(e) < complexity(c) for e in edits)


@pytest.mark.compile
def test_scatters_into_a_value_read_and_written_after_compile_clean():
    """The allowed side, judged: each scatter into an input or an intermediate that is
    read, written in place and written by a custom op after it (so none may be turned into
    a write of that value's memory), under dynamic shapes; Inductor keeps eager's answer."""
    from fuzzer.judge.observe import caches_off
    from fuzzer.judge.trial import run_trial
    body = [("slice_scatter_step", ["x0", "x1"], "v0", {"dim": 1}), ("mul_", ["x0"], None, {"c": 2.0}),
            ("unary", ["x1"], "v1", {"fn": "sin"}),
            ("select_scatter", ["v1", "x0"], "v2", {"dim": 0}), ("m_scale", ["v1"], None, {"site": 0}),
            ("diagonal_scatter", ["x1", "v1"], "v3", {"diag": -1}), ("slice_scatter_tail", ["v3", "x1"], "v4",
                                                                     {"dim": 0}),
            ("add", ["v0", "v2"], "v5", {}), ("add", ["v5", "v4"], "v6", {}), ("add", ["v6", "v1"], "v7", {})]
    c = case(prog(SHAPES, body, outputs=["v7", "v3"], sym_min={"s0": 1, "s1": 1}),
             bindings=[{"s0": 4, "s1": 3}, {"s0": 5, "s1": 6}, {"s0": 1, "s1": 2}])
    with caches_off():
        result = run_trial(c, "cpu", confirm=False)
    assert result.status == "clean", result.verdict.divergences
