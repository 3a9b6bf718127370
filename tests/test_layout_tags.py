"""Ops whose kernels read their arguments' strides under layout tags (features
``layout-tags`` and ``layout-default``, ``fuzzer.program.families.layout_tags``), and the
contract's LAYOUT TAGS clause (``contract.layout_tag``, ``contract.layout_kept``), each
on its forbidden and its allowed side.

The stand-ins play the compiled function: each hands an op's kernel its argument in
another layout, as a compiler that restrides it would (and copies a write back, as
Inductor's ``propagate_mutation`` does).  A finding must show exactly where the tag's
promise is broken: the kernels read all their tag promises them and nothing more.  One
program is compiled for real with Inductor over transposed, channels-last and expanded
inputs, and keeps every promise.
"""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import contract
from fuzzer.judge.contract import (
    CONTIGUOUS_STRIDES,
    EXACT_STRIDES,
    FIXED_STRIDE_ORDER,
    FLEXIBLE_LAYOUT,
    layout_kept,
    layout_tag,
)
from fuzzer.judge.execute import execute
from fuzzer.judge.observe import Coverage, Handover, draw_inputs
from fuzzer.judge.trial import judge_case, judge_fresh
from fuzzer.program import custom_ops, features, forms
from fuzzer.program.families import layout_tags
from fuzzer.program.generate import generate
from fuzzer.program.ir import Mode, check

custom_ops.install()
ops = torch.ops.dcefuzz
WHOLLY = Coverage(frames=1, graphs=1)


# ------------------------------------------------------------------ the clause itself

def test_the_most_restrictive_tag_governs_and_an_untagged_op_takes_the_default():
    assert layout_tag(["flexible_layout", "needs_fixed_stride_order"], EXACT_STRIDES) == FIXED_STRIDE_ORDER
    assert layout_tag(["needs_fixed_stride_order", "needs_exact_strides"], FLEXIBLE_LAYOUT) == EXACT_STRIDES
    assert layout_tag(["pt2_compliant_tag"], EXACT_STRIDES) == EXACT_STRIDES
    assert layout_tag([], FLEXIBLE_LAYOUT) == FLEXIBLE_LAYOUT


ROWS = ((4, 3), (3, 1))          # contiguous
COLUMNS = ((4, 3), (1, 4))       # transposed in memory
GAPPED_ROWS = ((4, 3), (6, 2))   # rows' order, a gap after each element
EXPANDED = ((2, 3, 4), (0, 4, 1))


def test_exact_strides_keep_the_strides_of_the_dims_longer_than_one():
    assert layout_kept(EXACT_STRIDES, ROWS, ROWS)
    assert layout_kept(EXACT_STRIDES, ((4, 1, 3), (3, 3, 1)), ((4, 1, 3), (3, 99, 1)))  # a dim of size 1
    assert not layout_kept(EXACT_STRIDES, ROWS, GAPPED_ROWS)
    assert not layout_kept(EXACT_STRIDES, ROWS, COLUMNS)
    assert not layout_kept(EXACT_STRIDES, EXPANDED, ((2, 3, 4), (12, 4, 1)))


def test_a_fixed_stride_order_keeps_which_dim_is_outside_which():
    assert layout_kept(FIXED_STRIDE_ORDER, ROWS, GAPPED_ROWS)
    assert not layout_kept(FIXED_STRIDE_ORDER, ROWS, COLUMNS)
    # an expanded dim (stride 0) materialised innermost, as Inductor's copy lays it out
    assert layout_kept(FIXED_STRIDE_ORDER, EXPANDED, ((2, 3, 4), (1, 8, 2)))
    assert not layout_kept(FIXED_STRIDE_ORDER, EXPANDED, ((2, 3, 4), (12, 4, 1)))


def test_two_dims_laid_over_each_other_may_be_ordered_either_way():
    both = ((2, 3, 4), (0, 0, 1))
    assert layout_kept(FIXED_STRIDE_ORDER, both, ((2, 3, 4), (1, 2, 6)))
    assert layout_kept(FIXED_STRIDE_ORDER, both, ((2, 3, 4), (3, 1, 6)))
    assert not layout_kept(FIXED_STRIDE_ORDER, both, ((2, 3, 4), (4, 8, 1)))


def test_contiguous_strides_are_those_of_a_contiguous_tensor_whatever_eager_had():
    assert layout_kept(CONTIGUOUS_STRIDES, COLUMNS, ROWS)
    assert not layout_kept(CONTIGUOUS_STRIDES, ROWS, COLUMNS)
    assert not layout_kept(CONTIGUOUS_STRIDES, ROWS, GAPPED_ROWS)


def test_a_flexible_layout_keeps_anything_and_an_empty_tensor_has_no_layout():
    assert layout_kept(FLEXIBLE_LAYOUT, ROWS, COLUMNS) and layout_kept(FLEXIBLE_LAYOUT, EXPANDED, ((2, 3, 4), (1, 2, 6)))
    assert layout_kept(EXACT_STRIDES, ((0, 3), (3, 1)), ((0, 3), (1, 0)))
    assert not layout_kept(FLEXIBLE_LAYOUT, ROWS, ((3, 4), (4, 1)))  # another shape is no layout of it
    with pytest.raises(ValueError, match="unknown layout tag"):
        layout_kept("needs_something", ROWS, ROWS)


# ------------------------------------------------------------------ the ops and their tags

def _tag_of(name: str) -> str:
    tags = [str(t).rsplit(".", 1)[-1] for t in getattr(ops, name).default.tags]
    return layout_tag(tags, layout_tags.default_tag())


def test_each_op_is_tagged_as_its_snippet_says_and_only_l_default_takes_the_default():
    assert {op.name: _tag_of(op.name) for op in layout_tags.OPS} == {
        "l_exact": EXACT_STRIDES, "l_order": FIXED_STRIDE_ORDER, "l_most": FIXED_STRIDE_ORDER,
        "l_raw": CONTIGUOUS_STRIDES, "l_cols": FLEXIBLE_LAYOUT, "l_exact_": EXACT_STRIDES,
        "l_order_": FIXED_STRIDE_ORDER, "l_default": layout_tags.default_tag()}
    untagged = [op.name for op in layout_tags.OPS
                if not set(contract.LAYOUT_TAGS) & {str(t).rsplit(".", 1)[-1] for t in getattr(ops, op.name).default.tags}]
    assert untagged == ["l_default"]


def test_l_default_is_off_where_the_release_gives_untagged_ops_other_strides():
    assert layout_tags.default_unavailable() is None  # 2.13.0 and 2.14.1: needs_exact_strides
    # (a config module is patched through its own ``patch``: pytest's monkeypatch loses the setting)
    with torch._functorch.config.patch(custom_op_default_layout_constraint="flexible_layout"):
        assert "flexible_layout" in features.unavailable(layout_tags.DEFAULT_FEATURE)
        assert features.unavailable(layout_tags.FEATURE) is None
        assert layout_tags.DEFAULT_FEATURE not in features.draw(4, {layout_tags.DEFAULT_FEATURE: 1.0})
        assert "l_default" not in custom_ops.registrable() and "l_exact" in custom_ops.registrable()
    assert layout_tags.default_tag() == EXACT_STRIDES


def test_a_torch_without_the_tags_has_neither_feature(monkeypatch):
    monkeypatch.delattr(torch.Tag, "needs_contiguous_strides", raising=False)
    monkeypatch.setattr(torch, "Tag", type("Tag", (), {"needs_exact_strides": 1}))
    assert "needs_contiguous_strides" in layout_tags.unavailable()
    assert layout_tags.default_unavailable() == layout_tags.unavailable()
    assert not {op.name for op in layout_tags.OPS} & set(custom_ops.registrable())


def test_programs_with_the_features_call_every_op_over_inputs_laid_out_otherwise_and_stay_legal():
    table = {layout_tags.FEATURE: 1.0, layout_tags.DEFAULT_FEATURE: 1.0}
    seen, laid_out = set(), 0
    for seed in range(80):
        assert features.LAYOUTS in features.draw(seed, table)  # implied
        program = generate(seed, features=table).program
        check(program)
        called = {s.form for s in program.body if s.form.startswith("l_")}
        seen |= called
        laid_out += bool(called and program.mode.layouts)
    assert seen == {form.name for form in layout_tags.FORMS}
    assert laid_out >= 10


def test_each_form_shrinks_toward_the_plain_op_of_its_kind():
    for form in layout_tags.FORMS:
        last = forms.form(form.shrink.simpler[-1]) if form.shrink.simpler else form
        assert last.name in ("p_sin", "m_scale"), form.name
        assert all(forms.form(s).category == form.category for s in form.shrink.simpler), form.name


# ------------------------------------------------------------------ forbidden and allowed, by the clause

def _gapped(x):
    """``x``'s values in its own order of dims with a gap after every element."""
    dense = x.clone()  # preserve_format: dense, in x's order (an expanded x made contiguous)
    out = torch.empty_strided(x.shape, [2 * s for s in dense.stride()], dtype=x.dtype)
    return out.copy_(x)


def _offset(x):
    """``x``'s values contiguous, one element into a buffer."""
    return torch.empty(x.numel() + 1, dtype=x.dtype)[1:].view(x.shape).copy_(x)


#: how a stand-in may hand a kernel its argument: the same values, laid out so
HANDED = {
    "contiguous": lambda x: x.clone(memory_format=torch.contiguous_format),
    "transposed": lambda x: x.mT.contiguous().mT,
    "channels_last": lambda x: x.movedim(1, -1).contiguous().movedim(-1, 1),
    "gapped": _gapped,
    "offset": _offset,
}
#: how eager hands the program its input (``Mode``): plain, a layout, strided by 2
EAGER = {
    "contiguous": Mode(),
    "transposed": Mode(layouts=(("x0", "transposed"),)),
    "channels_last": Mode(layouts=(("x0", "channels_last"),)),
    "expanded": Mode(layouts=(("x0", "expanded"),)),
    "strided": Mode(strided=("x0",)),
}


def _case(name: str, mode: Mode):
    op = layout_tags.OP[name]
    pure = op.declaration == "pure"
    program = prog({"x0": ("s0", "s1", "s2")}, [(name, ["x0"], "v0" if pure else None, {"site": 0})],
                   outputs=["v0"] if pure else [])
    return case(dataclasses.replace(program, mode=mode), bindings=[{s: n for s in ("s0", "s1", "s2")} for n in (3, 4)])


def _stand_in(name: str, handed):
    """The compiled function: the op's kernel gets its argument laid out by ``handed``; a
    write of it is copied back into the argument."""
    op = getattr(ops, name)

    def compiled(x0):
        arg = x0.contiguous() if name == "l_raw" else x0
        given = handed(arg)
        result = op(given, 0)
        if result is None:
            arg.copy_(given)
            return ()
        return (result,)
    return compiled


def _flagged(name: str, eager: str, handed: str) -> bool:
    c = _case(name, EAGER[eager])
    runs = execute(c, "cpu", compiled=_stand_in(name, HANDED[handed]))
    for br in runs:
        br.compiled.coverage = WHOLLY
    v = judge_case(c, runs, "cpu")
    assert v.status == contract.OK, v.reason
    return bool(v.divergences)


def _promised(name: str, eager: str, handed: str) -> bool:
    """Whether the kernel of ``name`` handed so gets what its tag promises, by the clause."""
    x = draw_inputs([(3, 3, 3)], 0, "cpu", handover=_handover(EAGER[eager]))[0]
    arg = x.contiguous() if name == "l_raw" else x
    given = HANDED[handed](arg)
    return layout_kept(_tag_of(name), (arg.shape, arg.stride()), (given.shape, given.stride()))


def _handover(mode: Mode) -> Handover:
    return Handover(strided=(0,) if mode.strided else (), layouts=tuple((0, k) for _, k in mode.layouts))


#: each op, the layouts eager hands it (a written one is never expanded) and those a
#: stand-in hands its kernel
PAIRS = [(op.name, eager, handed) for op in layout_tags.OPS for eager in EAGER for handed in HANDED
         if not (op.declaration == "mutating" and eager == "expanded")]


@pytest.mark.parametrize("name,eager,handed", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_a_kernel_handed_what_its_tag_does_not_promise_is_flagged_and_nothing_else(name, eager, handed):
    """Forbidden and allowed side at once: flagged exactly where the clause says the
    tag's promise is broken (an exact-strides kernel handed a gap, a fixed-order one
    another order, a contiguous one a transposed tensor), clean where it is kept (the
    same layout, a gap under a fixed order, anything under ``flexible_layout``)."""
    assert _flagged(name, eager, handed) == (not _promised(name, eager, handed))


def test_the_pairs_hold_both_sides_for_every_tag():
    sides = {(_tag_of(n), _promised(n, e, h)) for n, e, h in PAIRS}
    assert sides >= {(t, kept) for t in (EXACT_STRIDES, FIXED_STRIDE_ORDER, CONTIGUOUS_STRIDES) for kept in (True, False)}
    assert (FLEXIBLE_LAYOUT, True) in sides


def test_a_write_restrided_and_not_copied_back_is_flagged():
    """``needs_fixed_stride_order``'s reverted default (#127923, #128084): the kernel wrote
    a copy made for its layout, and the copy was never written back."""
    c = _case("l_exact_", EAGER["transposed"])

    def lost(x0):
        ops.l_exact_(x0.clone(), 0)
        return ()
    runs = execute(c, "cpu", compiled=lost)
    for br in runs:
        br.compiled.coverage = WHOLLY
    assert judge_case(c, runs, "cpu").kinds() == [contract.WRONG_MUTATION]


# ------------------------------------------------------------------ compiled for real

#: every op of the family over inputs transposed, channels-last and expanded in memory,
#: intermediates laid out as Inductor likes, written in place and read after
COMPILED = case(dataclasses.replace(prog({"x0": ("s0", "s1", "s2"), "x1": ("s0", "s1", "s2"),
                                          "x2": ("s0", "s1", "s2")}, [
    ("l_exact", ["x0"], "v0", {"site": 0}),
    ("l_order", ["x1"], "v1", {"site": 1}),
    ("l_most", ["x2"], "v2", {"site": 2}),
    ("l_raw", ["x0"], "v3", {"site": 3}),
    ("l_cols", ["x1"], "v4", {"site": 4}),
    ("unary", ["x1"], "v5", {"fn": "sin"}),
    ("transpose", ["v5"], "v8", {}),
    ("l_exact_", ["v8"], None, {"site": 5}),
    ("l_order_", ["x0"], None, {"site": 6}),
    ("l_default", ["v5"], "v6", {"site": 7}),
    ("mul", ["v4", "v6"], "v7", {}),
], outputs=["v0", "v1", "v2", "v3", "v5", "v7"]), mode=Mode(layouts=(("x0", "transposed"), ("x1", "channels_last"),
                                                                        ("x2", "expanded")))))


def test_the_compiled_program_is_legal():
    check(COMPILED.program)


@pytest.mark.compile
def test_inductor_keeps_every_promise_on_a_program_of_every_op():
    v = judge_fresh(COMPILED, "cpu")
    assert v.status == contract.OK and v.divergences == [], (v.reason, [d.line() for d in v.divergences])


# ------------------------------------------------------------------ under backward()

#: the pure ops in a program that takes gradients, over a transposed and a channels-last
#: input, their results multiplied so each backward gets an incoming gradient that is not
#: uniform: each stride-reading backward an op of its forward's tags reading the saved
#: argument's layout
TRAINED = case(dataclasses.replace(prog({"x0": ("s0", "s1", "s2"), "x1": ("s0", "s1", "s2")}, [
    ("l_exact", ["x0"], "v0", {"site": 0}),
    ("l_order", ["x1"], "v1", {"site": 1}),
    ("l_most", ["x0"], "v2", {"site": 2}),
    ("l_raw", ["x1"], "v3", {"site": 3}),
    ("l_cols", ["x0"], "v4", {"site": 4}),
    ("l_default", ["x1"], "v5", {"site": 5}),
    ("mul", ["v0", "v1"], "w0", {}),
    ("mul", ["v2", "v3"], "w1", {}),
    ("mul", ["v4", "v5"], "w2", {}),
], outputs=["w0", "w1", "w2"]), mode=Mode(grad=True, layouts=(("x0", "transposed"), ("x1", "channels_last")))),
    bindings=[{"s0": 2, "s1": 3, "s2": 4}, {"s0": 3, "s1": 4, "s2": 2}])


def _reference_grads(x0, x1):
    """The gradients of TRAINED's loss by autograd through the kernels' own codes."""
    lib = custom_ops.install()
    x0, x1 = (x.detach().clone().requires_grad_(True) for x in (x0, x1))
    v = [lib._l_stored_delta(x0), lib._l_memory_delta(x1), lib._l_memory_delta(x0),
         lib._l_memory_delta(x1.contiguous()), x0 - 0.5 * x0.roll(1, -1), lib._l_stored_delta(x1)]
    loss = (v[0] * v[1]).sum() + (v[2] * v[3]).sum() + (v[4] * v[5]).sum()
    return torch.autograd.grad(loss, (x0, x1))


def test_each_pure_op_s_backward_is_its_code_s_gradient_read_off_the_argument_s_layout():
    check(TRAINED.program)
    from fuzzer.program import codegen

    fn, step = codegen.build_with_step(TRAINED.program)
    x0 = torch.randn(2, 4, 3).mT                               # transposed
    x1 = torch.randn(2, 3, 4).movedim(1, -1).contiguous().movedim(-1, 1)  # channels-last
    *outs, g0, g1 = step(fn, x0.clone(), x1.clone())
    r0, r1 = _reference_grads(x0, x1)
    assert torch.allclose(g0, r0, atol=1e-5) and torch.allclose(g1, r1, atol=1e-5)
    assert "l_order_grad" in custom_ops.brief_source(["l_order"], grad=True)
    assert "l_order_grad" not in custom_ops.brief_source(["l_order"], grad=False)


def _backward_stand_in(contiguous: bool):
    """The compiled function of ``l_order`` over a channels-last input under backward():
    its backward's kernel handed the saved argument as eager has it, or made contiguous
    (a compiler that restrided it against the tag)."""
    class Restrided(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return ops.l_order(x, 0)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return ops.l_order_grad(x.contiguous() if contiguous else x, grad), None

    def compiled(x0):
        # the step as the program's: x0 requires grad, the loss is the output's sum
        x0.requires_grad_(True)
        out = Restrided.apply(x0) * x0
        out.sum().backward()
        return out, x0.grad
    return compiled


@pytest.mark.parametrize("restrided", [False, True])
def test_a_backward_kernel_handed_another_layout_than_eager_s_is_flagged(restrided):
    """Both sides: the backward's fixed-order kernel handed the channels-last argument
    eager saved is clean; handed it contiguous, its gradient is another and flagged."""
    program = prog({"x0": ("s0", "s1", "s2")}, [("l_order", ["x0"], "v0", {"site": 0}),
                                                ("mul", ["v0", "x0"], "v1", {})], outputs=["v1"])
    c = case(dataclasses.replace(program, mode=Mode(grad=True, layouts=(("x0", "channels_last"),))),
             bindings=[{"s0": 2, "s1": 3, "s2": 4}])
    runs = execute(c, "cpu", compiled=_backward_stand_in(restrided))
    for br in runs:
        br.compiled.coverage = WHOLLY
    v = judge_case(c, runs, "cpu")
    assert v.status == contract.OK, v.reason
    assert v.kinds() == ([contract.WRONG_OUTPUT] if restrided else []), [d.line() for d in v.divergences]


@pytest.mark.compile
def test_inductor_keeps_every_promise_in_the_backward_of_every_pure_op():
    v = judge_fresh(TRAINED, "cpu")
    assert v.status == contract.OK and v.divergences == [], (v.reason, [d.line() for d in v.divergences])


@pytest.mark.parametrize("name", ["l_order", "l_most", "l_raw"])
def test_a_pure_ops_result_is_fresh_so_a_program_may_write_it_under_gradients(name):
    """A custom op with a backward whose result is a view (of anything) is, to autograd,
    a view made inside a custom Function, which no in-place write may touch: eager would
    refuse the program.  Each kernel returns a fresh tensor, also over a contiguous
    argument (where ``.contiguous()`` of a view would have handed the view back)."""
    x = torch.randn(3, 4, requires_grad=True)
    out = getattr(torch.ops.dcefuzz, name)(x, 0)
    assert out._base is None
    out.mul_(0.5)  # raised "is a view and is being modified inplace" with a view returned
    out.sum().backward()
    assert x.grad is not None


def test_every_tag_the_library_declares_is_given_as_a_sequence():
    """``custom_op(..., tags=torch.Tag.x)`` (a bare tag) is refused by torch 2.11 and 2.12
    (``tags`` is unpacked), which have the layout tags all the same: the library gives
    each op's tags as a tuple, so it registers on every supported release."""
    import re

    source = custom_ops.source_for(custom_ops.registrable())
    assert "tags=(torch.Tag." in source
    assert not re.findall(r"tags=torch\.Tag\.", source)
