"""Transposed writes back (feature ``transposed-writes``, ``fuzzer.program.transposed_forms``):
a permuted view is its operand's elements, a value assigned what it held read through a
permuted view of itself has one eager answer, a value written from the transpose of an
overlapping part of its own storage is never drawn (torch refuses it, or computes it in
an order of its own), the generator draws the forms often with the feature on and never
without it, and the shrinker takes each toward the plain forms."""


import pytest
import torch
from helpers import case, feature_runs_eagerly, footprint_indices, never_drawn_when_off, prog, run_views

from fuzzer.judge.execute import run_eager
from fuzzer.program import features, forms, sizes, storage
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, check
from fuzzer.program.transposed_forms import permuted

SQUARE = {"x0": ("s0", "s0"), "x1": ("s0", "s1", "s0")}


def test_a_permutation_is_spelled_as_code_writes_it():
    assert permuted("x", [1, 0]) == "x.mT"
    assert permuted("x", [0, 2, 1]) == "x.mT"
    assert permuted("x", [2, 1, 0]) == "x.transpose(0, 2)"
    assert permuted("x", [1, 2, 0]) == "x.permute(1, 2, 0)"
    assert permuted("x", [0, 1, 2]) == "x"


@pytest.mark.parametrize("attrs, text", [
    ({"order": [1, 0], "back": [0, 1], "via": "clone"}, "x0.copy_(x0.mT.clone())"),
    ({"order": [1, 0], "back": [1, 0], "via": "sin"}, "x0.copy_(torch.sin(x0.mT).mT)"),
])
def test_a_write_back_reads_through_its_order_and_writes_through_back(attrs, text):
    check(prog(SQUARE, [("copy_back_", ["x0"], None, attrs)]))
    assert forms.form("copy_back_").render(["x0"], attrs, [SQUARE["x0"]]) == text


@pytest.mark.parametrize("attrs, message", [
    ({"order": [0, 1, 2], "back": [0, 1, 2], "via": "clone"}, "moves some dim"),
    ({"order": [1, 2, 0], "back": [1, 2, 0], "via": "clone"}, "back to"),  # (s1, s0, s0) -> (s0, s0, s1)
    ({"order": [2, 1, 0], "back": [0, 1, 2], "via": "contiguous"}, "via"),  # may return its operand itself
    ({"order": [2, 1, 0], "back": [0, 1], "via": "half"}, "not an order"),
])
def test_a_write_back_torch_would_not_define_is_refused(attrs, message):
    with pytest.raises(InvalidProgram, match=message):
        check(prog(SQUARE, [("add_back_", ["x1"], None, attrs)]))


def test_a_crossed_write_back_writes_each_element_from_another_as_eager_materialises_it():
    """``x.copy_(x.mT.clone())`` transposes a square ``x`` in place, and ``x1.add_(
    (x1.transpose(0, 2) * 0.5))`` adds what each element's mirror held before the
    statement: one answer, the one compiled code must keep."""
    body = [("copy_back_", ["x0"], None, {"order": [1, 0], "back": [0, 1], "via": "clone"}),
            ("add_back_", ["x1"], None, {"order": [2, 1, 0], "back": [0, 1, 2], "via": "half"})]
    c = case(prog(SQUARE, body), bindings=[{"s0": 3, "s1": 2}])
    before = run_eager(case(prog(SQUARE, []), bindings=c.bindings), "cpu")[0].eager.inputs_after
    after = run_eager(c, "cpu")[0].eager.inputs_after
    assert torch.equal(after[0], before[0].mT)
    assert torch.equal(after[1], before[1] + before[1].transpose(0, 2) * 0.5)


def test_torch_refuses_a_transposed_copy_onto_itself_or_computes_it_in_its_own_order():
    """The eager behaviour the overlap rule keeps out: ``x.copy_(x.mT)`` of a dense
    ``x`` raises (``at::assert_no_partial_overlap``); of a strided one it runs, and its
    answer is the order the kernel wrote in, not the transpose."""
    x = torch.arange(9.0).reshape(3, 3)
    with pytest.raises(RuntimeError, match="single memory location"):
        x.copy_(x.mT)
    y = torch.arange(18.0).reshape(3, 6)[:, ::2]
    expected = y.mT.clone()
    y.copy_(y.mT)
    assert not torch.equal(y, expected)


@pytest.mark.parametrize("body", [
    # the transpose of itself
    [("copy_mT_", ["x0", "x0"], None, {})],
    # the first half of the rows, from the transpose of the first half of the columns: [0, k) x [0, k)
    [("head", ["x0"], "v0", {"dim": 0}), ("head", ["x0"], "v1", {"dim": 1}), ("copy_mT_", ["v0", "v1"], None, {})],
    # a permuted view of the same elements, through a chain
    [("permute_to", ["x0"], "v0", {"order": [1, 0]}), ("alias", ["v0"], "v1", {}),
     ("copy_mT_", ["v1", "x0"], None, {})],
])
def test_a_transposed_copy_from_what_it_may_overlap_is_refused(body):
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(prog(SQUARE, body))


def test_a_transposed_copy_between_disjoint_blocks_of_one_storage_is_legal():
    """``x[:k, k:2k].copy_(x[k:2k, :k].mT)``: a block mirrored into another."""
    body = [("head", ["x0"], "v0", {"dim": 0}), ("tail", ["v0"], "v1", {"dim": 1}),
            ("tail", ["x0"], "v2", {"dim": 0}), ("head", ["v2"], "v3", {"dim": 1}),
            ("copy_mT_", ["v1", "v3"], None, {})]
    t = check(prog(SQUARE, body))
    assert t.root["v1"] == t.root["v3"] == "x0"
    assert storage.disjoint(t.prints["v1"], t.prints["v3"], {"s0": 1})


def test_footprints_of_permuted_views_are_what_torch_reads():
    drawn = [generate(seed, features={features.TRANSPOSED_WRITES: 1.0, "views": 1.0}).program for seed in range(80)]
    seen = 0
    for program in drawn:
        for binding in ({s: 5 for s in program.symbols}, {s: max(2, program.sym_min[s]) for s in program.symbols}):
            t, views = run_views(program, binding)
            for stmt in program.body:
                if stmt.form == "permute_to" and stmt.out in views:
                    root_shape = sizes.concrete(t.dims[t.root[stmt.out]], binding)
                    held = footprint_indices(t.prints[stmt.out], root_shape, binding)
                    assert torch.equal(held, views[stmt.out].long()), (program.digest()[:8], stmt)
                    seen += 1
    assert seen >= 10


def test_the_generator_draws_writes_through_permuted_views_and_crossed_writes_back_only_with_the_feature():
    through = crossed = 0
    for seed in range(150):
        program = generate(seed, features=features.ALL | {features.TRANSPOSED_WRITES: 1.0}).program
        permuted_ = set()
        for stmt in program.body:
            form = forms.form(stmt.form)
            if stmt.form == "permute_to" or (form.is_view and stmt.args and stmt.args[0] in permuted_):
                permuted_.add(stmt.out)
            through += any(stmt.args[w] in permuted_ for w in form.mutates)
            if stmt.form in ("copy_back_", "add_back_"):
                inverse = [stmt.attrs["order"].index(k) for k in range(len(stmt.attrs["order"]))]
                crossed += stmt.attrs["back"] != inverse
    assert through >= 20 and crossed >= 20, (through, crossed)
    never_drawn_when_off(features.TRANSPOSED_WRITES)


def test_generated_transposed_writes_run_eagerly_on_every_binding():
    feature_runs_eagerly(features.TRANSPOSED_WRITES)


def test_the_shrinker_takes_a_transposed_write_toward_a_plain_one():
    from fuzzer.reduce.order import complexity
    from fuzzer.reduce.passes.rewrite import statement_edits
    c = case(prog({**SQUARE, "x2": ("s0", "s0")}, [("permute_to", ["x2"], "v0", {"order": [1, 0]}),
                           ("copy_back_", ["x0"], None, {"order": [1, 0], "back": [0, 1], "via": "clone"}),
                           ("copy_mT_", ["x0", "v0"], None, {}), ("e_log", ["v0"], None, {"site": 0})]))
    edits = list(statement_edits(c))
    assert [e.program.body[0].form for e in edits if e.program.body[0].form != "permute_to"] == ["transpose", "alias"]
    assert [e.program.body[1].form for e in edits if e.program.body[1].form != "copy_back_"] == ["mul_"]
    assert [e.program.body[2].form for e in edits if e.program.body[2].form != "copy_mT_"] == ["copy_", "mul_"]
    assert all(complexity(e) < complexity(c) for e in edits)


@pytest.mark.compile
def test_transposed_writes_back_compile_clean():
    """The allowed side, judged: an input transposed in place from a copy of itself, one
    added to from its mirror, a write through a chain of permuted views by aten and by a
    custom op, a block mirrored into another; Inductor keeps eager's answer."""
    from fuzzer.judge.observe import caches_off
    from fuzzer.judge.trial import run_trial
    body = [("copy_back_", ["x0"], None, {"order": [1, 0], "back": [0, 1], "via": "clone"}),
            ("add_back_", ["x1"], None, {"order": [2, 1, 0], "back": [0, 1, 2], "via": "sin"}),
            ("permute_to", ["x1"], "v0", {"order": [1, 2, 0]}), ("head", ["v0"], "v1", {"dim": 0}),
            ("mul_", ["v1"], None, {"c": 2.0}), ("m_scale", ["v0"], None, {"site": 0}),
            ("head", ["x2"], "v2", {"dim": 0}), ("tail", ["v2"], "v3", {"dim": 1}),
            ("tail", ["x2"], "v4", {"dim": 0}), ("head", ["v4"], "v5", {"dim": 1}),
            ("copy_mT_", ["v3", "v5"], None, {}), ("add", ["x0", "x2"], "v6", {})]
    inputs = {**SQUARE, "x2": ("s0", "s0")}
    c = case(prog(inputs, body, outputs=["v6"], sym_min={"s0": 1, "s1": 1}),
             bindings=[{"s0": 4, "s1": 3}, {"s0": 5, "s1": 2}, {"s0": 2, "s1": 0}])
    with caches_off():
        result = run_trial(c, "cpu", confirm=False)
    assert result.status == "clean", result.verdict.divergences
