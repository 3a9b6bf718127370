"""The rule for writes beside a view of their own storage (``fuzzer.program.storage``),
and the strided views (``fuzzer.program.strided_forms``) it knows."""

import dataclasses
import itertools

import pytest
import torch
from helpers import footprint_indices, prog, run_views

from fuzzer.program import forms, sizes, storage
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, check
from fuzzer.program.strided_forms import PIECES, complement

X = {"x0": ("s0", "s1")}


def _box(pieces, order=(0, 1), base=("s0", "s1")):
    return {"base": list(base), "pieces": list(pieces), "order": list(order)}


# --------------------------------------------------------------- legal: disjoint

@pytest.mark.parametrize("body", [
    # x[:, :k] += x[:, k:2k], k = s1 // 2
    [("head", ["x0"], "v0", {"dim": 1}), ("tail", ["x0"], "v1", {"dim": 1}), ("add_", ["v0", "v1"], None, {})],
    # a custom op writing one half while it reads the other
    [("head", ["x0"], "v0", {"dim": 0}), ("tail", ["x0"], "v1", {"dim": 0}),
     ("m_addto", ["v1", "v0"], None, {"site": 0})],
    # the even columns from the odd ones, both as_strided over the whole input
    [("as_strided", ["x0"], "v0", _box(["all", "evens"])), ("as_strided", ["x0"], "v1", _box(["all", "odd"])),
     ("copy_", ["v0", "v1"], None, {})],
    # an as_strided reaching out of its operand (the first half) into its base (the second)
    [("head", ["x0"], "v0", {"dim": 0}), ("as_strided", ["v0"], "v1", _box(["back", "all"])),
     ("copy_", ["v0", "v1"], None, {})],
    # rows 0 and 1 of one input
    [("select", ["x0"], "v0", {"dim": 0}), ("narrow", ["x0"], "v1", {"dim": 0}),
     ("select", ["v1"], "v2", {"dim": 0}), ("add_", ["v0", "v2"], None, {})],
    # two written halves, swapped through the transposes of each
    [("head", ["x0"], "v0", {"dim": 1}), ("tail", ["x0"], "v1", {"dim": 1}), ("mT", ["v0"], "v2", {}),
     ("mT", ["v1"], "v3", {}), ("m_swap", ["v2", "v3"], "v4", {"site": 0})],
])
def test_a_write_beside_a_disjoint_view_of_its_storage_is_legal(body):
    check(prog(X, body, sym_min={"s0": 2, "s1": 1}))


def test_a_gapped_unfold_is_written_beside_its_complement():
    body = [("unfold_gap", ["x0"], "v0", {"dim": 1, "size_w": 2, "step": 4}),
            ("narrow", ["x0"], "v1", {"dim": 1}), ("narrow", ["v1"], "v2", {"dim": 1}),
            ("unfold_gap", ["v2"], "v3", {"dim": 1, "size_w": 2, "step": 4}),
            ("m_addto", ["v0", "v3"], None, {"site": 0})]
    with pytest.raises(InvalidProgram, match="shapes differ"):  # their window counts differ by text
        check(prog(X, body, sym_min={"s0": 1, "s1": 4}))
    t = check(prog(X, body[:4], sym_min={"s0": 1, "s1": 4}))
    assert storage.disjoint(t.prints["v0"], t.prints["v3"], {"s0": 1, "s1": 4})
    # one column on (start 1) the windows [1, 2] meet [0, 1] at column 1
    t = check(prog(X, body[:2] + [("unfold_gap", ["v1"], "v4", {"dim": 1, "size_w": 2, "step": 4})],
                   sym_min={"s0": 1, "s1": 4}))
    assert not storage.disjoint(t.prints["v0"], t.prints["v4"], {"s0": 1, "s1": 4})


# ------------------------------------------------------------- refused: overlap

@pytest.mark.parametrize("body", [
    # x[1:] += x[:-1]-like: the first half and all but the first row overlap
    [("head", ["x0"], "v0", {"dim": 0}), ("narrow", ["x0"], "v1", {"dim": 0}), ("m_addto", ["v1", "v0"], None,
                                                                                {"site": 0})],
    # the first half of the rows, and row 0
    [("head", ["x0"], "v0", {"dim": 0}), ("select", ["x0"], "v1", {"dim": 0}), ("add_", ["v0", "v1"], None, {})],
    [("tail", ["x0"], "v0", {"dim": 1}), ("as_strided", ["x0"], "v1", _box(["all", "back"])),
     ("copy_", ["v0", "v1"], None, {})],
    # evens and the first half share column 0
    [("as_strided", ["x0"], "v0", _box(["all", "evens"])), ("head", ["x0"], "v1", {"dim": 1}),
     ("copy_", ["v0", "v1"], None, {})],
    # the evens of the first half of the columns, and all the evens: one residue modulo 2
    [("as_strided", ["x0"], "v0", _box(["all", "evens"])), ("as_strided", ["x0"], "v1", _box(["all", "even"])),
     ("head", ["v1"], "v2", {"dim": 1}), ("copy_", ["v0", "v2"], None, {})],
    # the same dtype view of the whole input, as a read beside the write
    [("dtype_view", ["x0"], "v0", {}), ("add_", ["x0", "v0"], None, {})],
    # x.T written from x
    [("T", ["x0"], "v0", {}), ("add_", ["v0", "v0"], None, {})],
    # row 0 and the diagonal meet at [0, 0]
    [("diagonal", ["x0"], "v0", {}), ("select", ["x0"], "v1", {"dim": 0}), ("add_", ["v1", "v0"], None, {})],
])
def test_a_write_that_may_overlap_what_it_reads_is_refused(body):
    dims = {"x0": ("s0", "s0")} if body[0][0] in ("diagonal", "T") else X
    with pytest.raises(InvalidProgram, match="shares storage"):
        check(prog(dims, body, sym_min={"s0": 1, "s1": 1}))


def test_a_view_of_unknown_extent_overlaps_all_of_its_root():
    a = storage.Footprint.whole(("s0",)).slice(0, storage.Affine(), 1, "s0 // 2")
    assert not storage.disjoint(a, None, {"s0": 0})
    assert not storage.disjoint(None, a, {"s0": 0})


def test_bounds_are_proven_only_for_every_binding():
    m = {"s0": 2}
    assert (storage.Affine.of("s0") - storage.Affine(2)).proven_nonnegative(m)
    assert not (storage.Affine.of("s0") - storage.Affine(3)).proven_nonnegative(m)
    # s0 - s0 // 2 >= 0 holds, but two dims are two sizes to the rule: not proven
    assert not (storage.Affine.of("s0") - storage.Affine.of("s0 // 2")).proven_nonnegative(m)


# ----------------------------------------------------------- as_strided's base

def test_as_strided_is_laid_over_an_input_handed_over_contiguous_by_its_dims():
    body = [("as_strided", ["x0"], "v0", _box(["all", "evens"]))]
    check(prog(X, body))
    p = prog(X, body)
    import dataclasses
    with pytest.raises(InvalidProgram, match="not an input handed over contiguous"):
        check(dataclasses.replace(p, mode=Mode(strided=("x0",))))
    with pytest.raises(InvalidProgram, match="base"):
        check(prog(X, [("as_strided", ["x0"], "v0", _box(["all", "evens"], base=("s1", "s0")))]))
    with pytest.raises(InvalidProgram, match="not an input handed over contiguous"):
        check(prog(X, [("clone", ["x0"], "v0", {}), ("as_strided", ["v0"], "v1", _box(["all", "all"]))]))


@pytest.mark.parametrize("body", [
    [("T", ["x0"], "v0", {})],  # rank 3
    [("unfold_gap", ["x0"], "v0", {"dim": 0, "size_w": 2, "step": 1})],  # overlapping windows
    [("unfold_gap", ["x0"], "v0", {"dim": 0, "size_w": 2, "step": 2})],  # s0 may be 1
    [("as_strided", ["x0"], "v0", _box(["all", "some", "all"], (0, 1, 2), ("s0", "s1", "s2")))],
])
def test_the_strided_views_refuse_what_they_cannot_take(body):
    with pytest.raises(InvalidProgram):
        check(prog({"x0": ("s0", "s1", "s2")}, body, sym_min={"s0": 1, "s1": 1, "s2": 1}))


def test_each_piece_stays_inside_its_dim_for_every_size():
    for name, cut in PIECES.items():
        for d in range(0, 12):
            first, count, step = (sizes.evaluate(e, {"s0": d}) if isinstance(e, str) else e for e in cut("s0"))
            assert count >= 0
            if count:
                assert 0 <= first and first + (count - 1) * step <= d - 1, (name, d)


def test_as_strided_is_laid_over_a_row_major_copy_and_not_over_a_plain_one():
    """A ``dense_clone`` is row-major from offset 0 whatever its operand's layout (a
    transposed input, a view), so a box by its dims reads what the IR says; a plain
    ``clone`` keeps its operand's strides, so none is laid over it."""
    box = _box(["all", "evens"])
    for first in ([], [("mT", ["x0"], "vt", {})]):
        operand = first[0][2] if first else "x0"
        dims = ["s1", "s0"] if first else ["s0", "s1"]
        body = first + [("dense_clone", [operand], "v0", {}), ("head", ["v0"], "v1", {"dim": 0}),
                        ("as_strided_fn", ["v1"], "v2", _box(["all", "evens"], base=dims))]
        check(dataclasses.replace(prog(X, body), mode=Mode(layouts=(("x0", "transposed"),))))
    with pytest.raises(InvalidProgram, match="not an input handed over contiguous"):
        check(prog(X, [("clone", ["x0"], "v0", {}), ("as_strided_fn", ["v0"], "v1", box)]))
    with pytest.raises(InvalidProgram, match="base"):  # by the copy's dims, not another's
        check(prog(X, [("mT", ["x0"], "v0", {}), ("dense_clone", ["v0"], "v1", {}),
                       ("as_strided_fn", ["v1"], "v2", box)]))


def test_as_strided_is_never_laid_over_a_pairs_part_whose_storage_is_another():
    """A pair's part ``b`` (``w_second``) is a view by the IR's roots but another storage:
    the pair of a box of a row-major copy holds ``v1 * 2.0`` as ``b``, a fresh tensor of the
    box's size, and a box of the copy's dims over it read past its end in eager (a
    generator defect a campaign on 2.14.1 met). Over the part, or a view of it, none is
    laid; over the box it was made from, as before."""
    box = _box(["all", "evens"])
    head = [("dense_clone", ["x0"], "v0", {}), ("as_strided_fn", ["v0"], "v1", box),
            ("w_pair", ["v1", "v1"], "v2", {"c": 2.0}), ("w_second", ["v2"], "v3", {})]
    with pytest.raises(InvalidProgram, match="place in v0's storage is not known"):
        check(prog(X, head + [("as_strided_fn", ["v3"], "v4", box)]))
    check(prog(X, head + [("as_strided_fn", ["v1"], "v4", box)]))
    # the generator draws none either: every as_strided it lays over a view lays it over a known footprint
    from fuzzer.program import features
    from fuzzer.program.generate import generate
    from fuzzer.program.ir import check as typed

    weights = features.parse("all,tensor-subclass=1.0,base-offsets=1.0")
    for seed in range(40):
        program = generate(seed, features=weights).program
        prints = typed(program).prints
        for stmt in program.body:
            if stmt.form == "as_strided_fn" and not stmt.args[0].startswith("x"):
                assert prints.get(stmt.args[0]) is not None, (seed, stmt)


# ------------------------------------------- an as_strided of a view, written by aten

#: a box of all of x0's rows and the first half of its columns
HALF = _box(["all", "head"])


@pytest.mark.parametrize("body", [
    # the second half of the rows, reached back out of by the method's spelling, then written
    [("narrow", ["x0"], "v0", {"dim": 0}), ("as_strided", ["v0"], "v1", HALF), ("mul_", ["v1"], None, {"c": 2.0})],
    # the function's spelling, and a view of it written
    [("head", ["x0"], "v0", {"dim": 1}), ("as_strided_fn", ["v0"], "v1", HALF), ("select", ["v1"], "v2", {"dim": 0}),
     ("zero_", ["v2"], None, {})],
    # over a view of a row-major copy (an intermediate)
    [("dense_clone", ["x0"], "v0", {}), ("head", ["v0"], "v1", {"dim": 1}), ("as_strided_fn", ["v1"], "v2", HALF),
     ("fill_", ["v2"], None, {"c": 2.0})],
    # an as_strided of an as_strided: the second is after the first view of the chain
    [("as_strided", ["x0"], "v0", HALF), ("as_strided_fn", ["v0"], "v1", HALF), ("mul_", ["v1"], None, {"c": 2.0})],
])
def test_an_aten_write_through_an_as_strided_of_a_view_is_refused(body):
    """Functionalization refuses it in compile ("as_strided() is non-compositional",
    ``FunctionalStorageImpl::add_update``): never drawn, so never a compile error."""
    with pytest.raises(InvalidProgram, match="non-compositional"):
        check(prog(X, body, sym_min={"s0": 1, "s1": 1}))


@pytest.mark.parametrize("body", [
    # an as_strided of the root itself, written by aten, and a view of one
    [("as_strided_fn", ["x0"], "v0", HALF), ("mul_", ["v0"], None, {"c": 2.0}), ("head", ["v0"], "v1", {"dim": 0}),
     ("zero_", ["v1"], None, {})],
    # of a view, written by a custom op (functionalized through its base)
    [("narrow", ["x0"], "v0", {"dim": 0}), ("as_strided", ["v0"], "v1", HALF), ("m_scale", ["v1"], None, {"site": 0})],
    # of a view, read after the base it reaches into was written, and the base written after
    [("narrow", ["x0"], "v0", {"dim": 0}), ("mul_", ["x0"], None, {"c": 2.0}), ("as_strided_fn", ["v0"], "v1", HALF),
     ("add", ["v1", "v1"], "v2", {}), ("mul_", ["v0"], None, {"c": 0.5})],
    # of a row-major copy itself
    [("dense_clone", ["x0"], "v0", {}), ("as_strided_fn", ["v0"], "v1", HALF), ("zero_", ["v1"], None, {})],
])
def test_a_write_functionalization_takes_is_legal_beside_an_as_strided_of_a_view(body):
    check(prog(X, body, sym_min={"s0": 1, "s1": 1}))


# ------------------------------------------------ footprints against torch itself

#: every view form of the feature, over views of views
HAND = prog({"x0": ("s0", "s1", "s2")}, [
    ("unfold_gap", ["x0"], "v0", {"dim": 2, "size_w": 2, "step": 3}), ("mT", ["v0"], "v1", {}),
    ("tail", ["v1"], "v2", {"dim": 1}), ("as_strided", ["v2"], "v3", _box(["odd", "tail", "evens"], (2, 0, 1),
                                                                           ("s0", "s1", "s2"))),
    ("select", ["v3"], "v4", {"dim": 1}), ("T", ["v4"], "v5", {}), ("dtype_view", ["v5"], "v6", {}),
    ("narrow", ["x0"], "v7", {"dim": 2}), ("unfold_gap", ["v7"], "v8", {"dim": 2, "size_w": 1, "step": 3}),
    ("movedim", ["v8"], "v9", {}), ("slice_step", ["v9"], "v10", {"dim": 1}),
], sym_min={"s0": 2, "s1": 2, "s2": 2})


def test_footprints_are_what_torch_reads_and_disjoint_views_are():
    """Over the views of programs drawn with the feature: each view's footprint names
    exactly the root element torch's view holds at each index, and two views proven
    disjoint hold no common element."""
    proven = 0
    drawn = [generate(seed, features={"strided-views": 1.0, "views": 1.0}).program for seed in range(120)]
    for program in [HAND] + drawn:
        seed = program.digest()[:8]
        for binding in ({s: 5 for s in program.symbols}, {s: max(2, program.sym_min[s]) for s in program.symbols}):
            t, views = run_views(program, binding)
            for v, tensor in views.items():
                if t.prints[v] is not None:
                    predicted = footprint_indices(t.prints[v], sizes.concrete(t.dims[t.root[v]], binding), binding)
                    assert torch.equal(predicted, tensor.long()), (seed, v)
            for a, b in itertools.combinations(sorted(views), 2):
                if t.root[a] == t.root[b] and storage.disjoint(t.prints[a], t.prints[b], program.sym_min):
                    proven += 1
                    assert not set(views[a].flatten().tolist()) & set(views[b].flatten().tolist()), (seed, a, b)
    assert proven > 0


def test_the_generator_draws_writes_beside_disjoint_views_only_with_the_feature():
    def shared(program):
        t = check(program)
        return [s for s in program.body for w in forms.form(s.form).mutates
                if any(j != w and t.root[a] == t.root[s.args[w]] for j, a in enumerate(s.args))]
    assert any(shared(generate(seed, features={"strided-views": 1.0}).program) for seed in range(150))
    assert not any(shared(generate(seed, features={"views": 1.0, "indexing": 1.0}).program) for seed in range(150))


def test_the_complement_of_a_view_has_its_dims_and_none_of_its_elements():
    head = prog(X, [("head", ["x0"], "v0", {"dim": 1})]).body[0]
    box = prog(X, [("as_strided", ["x0"], "v0", _box(["evens", "head"], (1, 0)))]).body[0]
    for stmt in (head, box):
        twin = complement(stmt, "v1")
        t = check(prog(X, [(s.form, list(s.args), s.out, s.attrs) for s in (stmt, twin)]))
        assert t.dims["v0"] == t.dims["v1"]
        assert storage.disjoint(t.prints["v0"], t.prints["v1"], {"s0": 1, "s1": 1})
    assert complement(prog(X, [("as_strided", ["x0"], "v0", _box(["all", "tail"]))]).body[0], "v1") is None


# ------------------------------------------------------------------ shrinking

def test_the_shrinker_takes_an_as_strided_to_a_slice_and_a_tail_to_a_head():
    from helpers import case, run_pass, stays_while
    c = case(prog(X, [("as_strided", ["x0"], "v0", _box(["all", "odd"])), ("tail", ["x0"], "v1", {"dim": 1}),
                      ("e_log", ["v0"], None, {"site": 0}), ("e_log", ["v1"], None, {"site": 1})]))
    run = run_pass("rewrite", c, stays_while(lambda cc: len(cc.program.body) == 4))
    body = run.best.program.body
    assert [s.form for s in body[:2]] == ["head", "head"]
    from fuzzer.reduce.edits import simpler_stmt
    assert simpler_stmt(c.program.body[1], "head").attrs == {"dim": 1}  # the tail's dim, kept


def test_merging_symbols_renames_an_as_strided_base():
    from helpers import case, run_pass, stays_while
    c = case(prog({"x0": ("s0", "s1")}, [("as_strided", ["x0"], "v0", _box(["all", "evens"])),
                                         ("e_log", ["v0"], None, {"site": 0})]), [{"s0": 5, "s1": 9}])
    run = run_pass("sizes", c, stays_while(lambda cc: any(s.form == "as_strided" for s in cc.program.body)))
    check(run.best.program)
    assert len(run.best.program.symbols) == 1
    assert run.best.program.body[0].attrs["base"] == list(run.best.program.inputs[0].dims)


# --------------------------------------------------------- through the compiler

@pytest.mark.compile
def test_writes_beside_disjoint_views_of_their_storage_compile_clean():
    """The allowed side, judged: one half of an input written from the other, and the odd
    columns of an as_strided box from the even ones, compiled and compared with eager (a
    clean verdict: eager has one answer, and the compiler keeps it)."""
    from helpers import case

    from fuzzer.judge.trial import run_trial
    body = [("head", ["x0"], "v0", {"dim": 1}), ("tail", ["x0"], "v1", {"dim": 1}), ("add_", ["v0", "v1"], None, {}),
            ("as_strided", ["x1"], "v2", _box(["all", "evens"])), ("as_strided", ["x1"], "v3", _box(["all", "odd"])),
            ("m_addto", ["v3", "v2"], None, {"site": 0})]
    c = case(prog({"x0": ("s0", "s1"), "x1": ("s0", "s1")}, body, outputs=["v1"], sym_min={"s0": 1, "s1": 1}))
    assert run_trial(c, "cpu", confirm=False).status == "clean"


def test_a_tagged_result_covers_what_its_written_operand_covers():
    """An op tagged inplace returns its argument (``Form.result_aliases``): the result
    is the second half the call wrote, so a write of it beside that half is refused and
    one beside the first half is not."""
    tail = [("tail", ["x0"], "v0", {"dim": 1}), ("t_scale", ["v0"], "v1", {"site": 0})]
    with pytest.raises(InvalidProgram, match="may overlap"):
        check(prog(X, tail + [("tail", ["x0"], "v2", {"dim": 1}), ("add_", ["v1", "v2"], None, {})],
                   sym_min={"s0": 1, "s1": 2}))
    check(prog(X, tail + [("head", ["x0"], "v2", {"dim": 1}), ("add_", ["v1", "v2"], None, {})],
               sym_min={"s0": 1, "s1": 2}))
