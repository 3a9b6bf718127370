"""Offsets into the base (feature ``base-offsets``, ``fuzzer.program.offset_forms``): a
row-major copy is a root an ``as_strided`` may be laid over, ``torch.as_strided`` over a
view reaches out of it into its base and reads there what torch reads, the generator
draws both often with the feature on and never without it, every program it draws runs
eagerly, and the shrinker takes each toward the plain forms."""

import dataclasses

import pytest
import torch
from helpers import case, feature_runs_eagerly, footprint_indices, never_drawn_when_off, prog, run_views

from fuzzer.judge.execute import run_eager
from fuzzer.program import features, forms, sizes
from fuzzer.program.generate import generate
from fuzzer.program.ir import Mode, check
from fuzzer.program.offset_forms import BASE_OFFSETS

X = {"x0": ("s0", "s1"), "x1": ("s0", "s1")}


def _box(pieces, order=(0, 1), base=("s0", "s1")):
    return {"base": list(base), "pieces": list(pieces), "order": list(order)}


def test_the_function_spells_the_method_s_box():
    body = [("narrow", ["x0"], "v0", {"dim": 0}), ("as_strided_fn", ["v0"], "v1", _box(["head", "odd"], (1, 0)))]
    t = check(prog(X, body))
    line = forms.form("as_strided_fn").render(["v0"], body[1][3], [t.dims["v0"]])
    assert line == "torch.as_strided(v0, ((s1 // 2), (s0 // 2),), (2 * 1, 1 * s1,), 0 * s1 + 1 * 1)"
    assert t.dims["v1"] == ("s1 // 2", "s0 // 2")


def test_footprints_of_offset_views_are_what_torch_reads():
    """Over hand-written and drawn programs: an ``as_strided_fn`` of a view of an input or
    of a row-major copy holds, at each index, the root element its footprint names, inside
    the view's base and outside the view; two proven disjoint share none."""
    hand = prog(X, [("transpose", ["x0"], "v0", {}), ("dense_clone", ["v0"], "v1", {}),
                    ("narrow", ["v1"], "v2", {"dim": 1}), ("as_strided_fn", ["v2"], "v3", _box(["back", "evens"],
                                                                                               (1, 0), ("s1", "s0"))),
                    ("head", ["x1"], "v4", {"dim": 1}), ("as_strided_fn", ["v4"], "v5", _box(["all", "back"]))],
                sym_min={"s0": 1, "s1": 1})
    drawn = [generate(seed, features={BASE_OFFSETS: 1.0, "views": 1.0}).program for seed in range(60)]
    outside = 0
    for program in [hand] + drawn:
        for binding in ({s: 5 for s in program.symbols}, {s: max(2, program.sym_min[s]) for s in program.symbols}):
            t, views = run_views(program, binding)
            for stmt in program.body:
                if stmt.form != "as_strided_fn" or stmt.out not in views:
                    continue
                root_shape = sizes.concrete(t.dims[t.root[stmt.out]], binding)
                held = footprint_indices(t.prints[stmt.out], root_shape, binding)
                assert torch.equal(held, views[stmt.out].long()), (program.digest()[:8], stmt)
                operand = set(views[stmt.args[0]].flatten().tolist())
                outside += not set(views[stmt.out].flatten().tolist()) <= operand
    assert outside >= 10


def test_the_generator_reaches_out_of_views_and_over_copies_only_with_the_feature():
    """With the feature at 1: programs that lay an ``as_strided_fn`` over a view (of an
    input, of a row-major copy) are many; without it none draws a form of it."""
    over_view = over_copy = 0
    for seed in range(120):
        program = generate(seed, features=features.ALL | {BASE_OFFSETS: 1.0}).program
        t = check(program)
        for stmt in program.body:
            if stmt.form == "as_strided_fn":
                over_view += t.root[stmt.args[0]] != stmt.args[0]
                over_copy += t.root[stmt.args[0]] not in {i.name for i in program.inputs}
    # 85 and 79 when written; 63 and 82 since a box of a view that requires grad is never
    # drawn (program.grad: its gradient is not defined); 47 and 71 since matmuls and the
    # index and dtype-read forms of 2026-12-07 draw among them; 37 and 53 since the view
    # scatters, memory forms too, do; 22 and 44 since an as_strided is followed, half the
    # time, by a write of it, which takes statements the program would have drawn
    assert over_view >= 18 and over_copy >= 30, (over_view, over_copy)
    never_drawn_when_off(BASE_OFFSETS)


def test_generated_offset_views_run_eagerly_on_every_binding():
    feature_runs_eagerly(BASE_OFFSETS, seeds=120)


def test_a_row_major_copy_of_a_transposed_input_is_laid_out_by_its_own_dims():
    """The copy of an input handed over transposed is row-major: a box of it by the copy's
    dims reads, eagerly, the copy's elements the footprint names."""
    body = [("dense_clone", ["x0"], "v0", {}), ("as_strided_fn", ["v0"], "v1", _box(["back", "odd"]))]
    p = dataclasses.replace(prog(X, body, outputs=["v1"]), mode=Mode(layouts=(("x0", "transposed"),)))
    t = check(p)
    binding = {"s0": 5, "s1": 4}
    runs = run_eager(case(p, bindings=[binding]), "cpu")[0]
    x0, v1 = runs.eager.inputs_after[0], runs.eager.outputs[0]
    held = footprint_indices(t.prints["v1"], (5, 4), binding)
    assert torch.equal(v1, x0.flatten()[held])


def test_the_shrinker_takes_an_offset_view_to_the_method_a_slice_and_the_whole():
    from fuzzer.reduce.order import complexity
    from fuzzer.reduce.passes.rewrite import statement_edits
    box = _box(["back", "all"])
    c = case(prog(X, [("head", ["x0"], "v0", {"dim": 0}), ("as_strided_fn", ["v0"], "v1", box),
                      ("dense_clone", ["x1"], "v2", {}), ("e_log", ["v1"], None, {"site": 0})]))
    offered = [e.program.body[1] for e in statement_edits(c) if e.program.body[1].form != "as_strided_fn"]
    assert [s.form for s in offered] == ["as_strided", "head", "alias"]
    assert offered[0].attrs == box  # the method keeps the box
    copies = [e.program.body[2].form for e in statement_edits(c) if e.program.body[2].form != "dense_clone"]
    assert copies == ["clone"]
    assert all(complexity(e) < complexity(c) for e in statement_edits(c))


@pytest.mark.compile
def test_torch_refuses_an_aten_write_through_an_as_strided_of_a_view_and_takes_a_custom_op_s():
    """What ``strided_writes.LateStrided`` keeps out, from torch itself (the AOTAutograd backend,
    no Inductor): functionalization refuses the aten write in compile, and takes the
    custom op's through its base and the aten write through an as_strided of the root."""
    import fuzzer.program.custom_ops  # noqa: F401 - registers dcefuzz's ops

    def aten_write(x):
        torch.as_strided(x[1:], (2, 3), (3, 1), 0).mul_(2)
        return x + 0

    def custom_write(x):
        torch.ops.dcefuzz.m_scale(torch.as_strided(x[1:], (2, 3), (3, 1), 0), 0)
        x.as_strided((2, 3), (3, 1), 3).mul_(2)
        return x + 0

    torch._dynamo.reset()
    with pytest.raises(Exception, match="non-compositional"):
        torch.compile(aten_write, backend="aot_eager")(torch.randn(4, 3))
    x = torch.randn(4, 3)
    expected = custom_write(x.clone())
    assert torch.allclose(torch.compile(custom_write, backend="aot_eager")(x), expected)


@pytest.mark.compile
def test_offset_views_compile_clean():
    """The allowed side, judged: a box of a row-major copy written by aten, a box reaching
    out of a view of an input read, a custom op writing an as_strided of a view; Inductor
    keeps what eager reads and writes."""
    from fuzzer.judge.observe import caches_off
    from fuzzer.judge.trial import run_trial
    body = [("scale", ["x1"], "v0", {"c": 2.0}), ("dense_clone", ["v0"], "v1", {}),
            ("as_strided_fn", ["v1"], "v2", _box(["all", "evens"])), ("mul_", ["v2"], None, {"c": 0.5}),
            ("head", ["x0"], "v3", {"dim": 0}), ("as_strided_fn", ["v3"], "v4", _box(["back", "all"])),
            ("add", ["v4", "v4"], "v5", {}), ("m_scale", ["v4"], None, {"site": 0})]
    c = case(prog(X, body, outputs=["v1", "v5"], sym_min={"s0": 1, "s1": 1}),
             bindings=[{"s0": 4, "s1": 6}, {"s0": 3, "s1": 5}, {"s0": 2, "s1": 0}])
    with caches_off():
        result = run_trial(c, "cpu", confirm=False)
    assert result.status == "clean", result.verdict.divergences

