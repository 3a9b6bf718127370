"""The custom ops keep the promises the compiler relies on (torch.library.opcheck).

opcheck runs with every test it has by default, ``test_aot_dispatch_dynamic``
included (the op traced by AOTAutograd with dynamic shapes, as ``torch.compile``
does), on the shapes generated programs give the ops: empty dims, dims of size 1
(which ``dynamic=True`` specialises) and 2, the ranks each op's form allows, and
inputs that are contiguous, transposed or offset views.  Inputs never require
grad; the backward formulas of the pure ops are checked by ``gradcheck`` (here for
the ops that carry theirs in their snippet, in ``test_cache`` for the others).  The
ops of the features (``signatures``, ``data-dependent``) are checked on ranks 1 and 2
only: their bodies are as shape-agnostic as the others', and opcheck is slow.
"""

import itertools
import re

import pytest
import torch
from torch.testing._internal.optests.generate_tests import DEFAULT_TEST_UTILS

from fuzzer.program import custom_ops, families
from fuzzer.program.custom_ops import CUSTOM_OPS, EFFECTFUL, MUTATING, PURE

custom_ops.install()

#: the sizes every dim of a sample takes: empty, specialised by dynamic=True, symbolic
SIZES = (0, 1, 2)
#: the ops whose forms accept a 0-d operand (the others need rank >= 1)
RANK_0 = {"p_sin", "p_mix", "m_addto", "m_scale", "e_log", "e_tap", "t_scale", "t_addto", "t_sin_out",
          "t_split_out"}
#: the ops of the op families (``fuzzer.program.families``)
FAMILY_OPS = {op.name for op in families.OPS}
#: the ops whose kernels read their argument's layout (``families.layout_tags``): one operand
LAYOUT_OPS = {op.name for op in families.layout_tags.OPS}
#: the ops with a vmap or an autocast rule (``families.vmaps``, ``families.autocasts``): none has a backward
TRANSFORM_OPS = {op.name for op in families.vmaps.OPS + families.autocasts.OPS}
TWO_INPUTS = ({"p_mix", "m_addto", "m_shift", "m_swap", "p_opt", "m_list", "m_unknown"} | FAMILY_OPS
              - {"s_scale", "t_scale", "p_gradlog", "r_setw", "r_workspace", "s_silu", "w_mix", "w_fold", "w_update",
                 "w_log", "w_tap"} - LAYOUT_OPS
              - {"v_sin", "v_rowsum", "v_scale", "a_square", "a_scale"})
#: the ops of the features, sampled on ranks 1 and 2
FEATURE_OPS = {"p_pair", "p_opt", "p_affine", "p_pos", "m_list", "m_unknown"} | FAMILY_OPS
#: the keyword-only arguments of the ops that have them, besides their site
KEYWORDS = {"c_sinmix": {"alpha": 2.0}, "c_two": {"beta": -1.0}}
#: the pure ops without a backward (none of the layout, vmap and autocast families has one)
NO_BACKWARD = {"p_pos", "s_mix", "r_workspace", "s_silu", "o_scale", "o_hscale", "o_decayed", "w_mix", "w_fold"} | LAYOUT_OPS \
    | TRANSFORM_OPS
#: the out= ops (``torch.Tag.out``): their buffers are keyword-only, written from x
OUT_BUFFERS = {"t_sin_out": ("out",), "t_split_out": ("lo", "hi")}
#: the ops that write a row at a position: their forms give them a first dim of 1 or more
ROWS = {"k_put"}
#: the layout ops whose forms give them a matrix or more (rank 2 or more)
MATRICES = {"l_cols"}
#: the ops tagged ``needs_contiguous_strides``, which programs hand contiguous tensors only
CONTIGUOUS = {"l_raw"}
#: the ops that take an opaque object (``families.opaque``): their arguments, of x and the object
OBJECT_OPS = {"o_scale": lambda x, o: (x, o, 0), "o_hscale": lambda x, o: (x, o, 0), "o_put": lambda x, o: (o, x, 0),
              "o_read": lambda x, o: (o, x, 0), "o_decayed": lambda x, o: (x, o, 0)}


def _seen(args):
    """Call arguments as a test compares them: an opaque object by what it holds (a
    Cache's state, a Scale's fields), which it has no ``__eq__`` to compare."""
    lib = custom_ops.install()
    return [a.data if isinstance(a, lib.Cache) else (a.k, a.b) if isinstance(a, (lib.Scale, lib.HScale)) else a
            for a in args]


def _args(op, x, y):
    """The positional arguments of a call of ``op`` on ``x`` and ``y`` (a third tensor
    is made of them), its site last unless the site is keyword-only (``KEYWORDS``)."""
    if op.name in OUT_BUFFERS:
        return (x, 0)
    if op.name == "p_head":
        return (x, x.shape[0] // 2, 0)
    if op.name == "p_affine":
        return (x, 0.5, 3, False, 0)
    if op.name == "m_list":
        return ([x, y], 0)
    if op.name == "s_scale":
        return (x, 2.0, 0)
    if op.name == "k_put":  # the last row, from the one before it
        return (x, y, x.shape[0] - 1, 0)
    if op.name == "r_stat":
        return (x, y, 0.5, 0)
    if op.name in OBJECT_OPS:  # an opaque object: a Scale (hoisted or not), or a Cache over a copy of y
        lib = custom_ops.install()
        made = {"o_scale": lambda: lib.Scale(2.0, 1.0), "o_hscale": lambda: lib.HScale(2.0, 1.0)}
        return OBJECT_OPS[op.name](x, made.get(op.name, lambda: lib.Cache.of(y))())
    if op.name == "s_list":
        return ([x, y, x * y + 1.0], 0)
    if op.name == "s_optlist":
        return (x, [y, x * y + 1.0], 0)
    if op.name in ("s_pair", "c_two"):
        return (x, y, x * y + 1.0) + (() if op.name in KEYWORDS else (0,))
    if op.name in KEYWORDS:
        return (x, y)
    if op.name in TWO_INPUTS:
        return (x, y, 0)
    return (x, 0)


def _kwargs(op, x, y) -> dict:
    """The keyword-only arguments of a call of ``op``: its scalars and its site, or
    an out= op's buffers (y, and a third tensor like it)."""
    if op.name in KEYWORDS:
        return {**KEYWORDS[op.name], "site": 0}
    return dict(zip(OUT_BUFFERS.get(op.name, ()), (y, y.clone() * 2)))


def _unsited(op, args):
    """A call's positional arguments without its site (an op written plain)."""
    return args if op.name in KEYWORDS else args[:-1]


def _shapes(op):
    ranks = (1, 2, 3) if op.name not in RANK_0 else (0, 1, 2, 3)
    if op.name in FEATURE_OPS:
        ranks = (1, 2)
    if op.name in LAYOUT_OPS:  # what they read of a layout shows on every rank
        ranks = (2, 3) if op.name in MATRICES else (0, 1, 2, 3)
    return [s for r in ranks for s in itertools.product(SIZES, repeat=r)
            if (r < 3 or len(set(s)) == 3) and (op.name not in ROWS or s[0] >= 1)]  # rank 3: the orders of 0, 1, 2


def _layout(shape, how):
    """A tensor of ``shape``: contiguous, transposed (last two dims) or an offset view."""
    if how == "transposed":
        return torch.randn(shape[:-2] + (shape[-1], shape[-2])).transpose(-1, -2)
    if how == "offset":
        return torch.randn((shape[0] + 1,) + shape[1:])[1:]
    return torch.randn(shape)


def _samples(op):
    for shape in _shapes(op):
        layouts = ["contiguous"] + (["offset"] if shape else []) + (["transposed"] if len(shape) >= 2 else [])
        layouts = [a for a in layouts if a != "transposed" or op.name not in CONTIGUOUS]
        pairs = [(a, a) for a in layouts] + ([("contiguous", "transposed")] if "transposed" in layouts else [])
        for lx, ly in pairs if op.name in TWO_INPUTS else [(a, a) for a in layouts]:
            x, y = _layout(shape, lx), _layout(shape, ly)
            yield f"{shape} {lx}/{ly}", _args(op, x, y), _kwargs(op, x, y)


@pytest.mark.compile
@pytest.mark.parametrize("op", CUSTOM_OPS, ids=lambda o: o.name)
def test_opcheck(op):
    overload = getattr(torch.ops.dcefuzz, op.name).default
    checked = 0
    for label, args, kwargs in _samples(op):
        try:
            result = torch.library.opcheck(overload, args, kwargs)
        except Exception as exc:
            raise AssertionError(f"{op.name} on {label}: {exc}") from exc
        assert result == {u: "SUCCESS" for u in DEFAULT_TEST_UTILS}, (label, result)
        checked += 1
    shapes = _shapes(op)
    assert {d for s in shapes for d in s} == set(SIZES) and checked >= len(shapes)


def test_p_opt_without_its_optional_tensor():
    x = torch.randn(3, 2)
    result = torch.library.opcheck(torch.ops.dcefuzz.p_opt.default, (x, None, 0))
    assert result == {u: "SUCCESS" for u in DEFAULT_TEST_UTILS}


def test_s_optlist_without_its_optional_list():
    x = torch.randn(3, 2)
    result = torch.library.opcheck(torch.ops.dcefuzz.s_optlist.default, (x, None, 0))
    assert result == {u: "SUCCESS" for u in DEFAULT_TEST_UTILS}


@pytest.mark.parametrize("label", ["contiguous", "offset", "transposed"])
def test_the_out_overload_computes_the_functional_op_into_its_buffer(label):
    """``s_silu.out`` writes what ``s_silu`` returns into its buffer, whatever the
    buffer's layout, never reading it, and returns the buffer itself; opcheck passes."""
    x, buffer = _layout((3, 2), label), torch.full((3, 2), float("nan"))
    result = torch.ops.dcefuzz.s_silu.out(x, 0, out=buffer)
    assert result is buffer and torch.equal(buffer, torch.ops.dcefuzz.s_silu(x, 0))
    checked = torch.library.opcheck(torch.ops.dcefuzz.s_silu.out, (x, 0), {"out": torch.empty(3, 2)})
    assert checked == {u: "SUCCESS" for u in DEFAULT_TEST_UTILS}


def test_the_out_overload_is_the_functional_ops_out_variant_to_this_torch():
    """The tag the overload carries is the one this torch's ``to_out_variant`` (which
    Inductor's ``FallbackKernel.create`` lowers a functional custom op with) reads."""
    out_variant = pytest.importorskip("torch._library._out_variant")
    assert out_variant.to_out_variant(torch.ops.dcefuzz.s_silu.default) == torch.ops.dcefuzz.s_silu.out


@pytest.mark.parametrize("name, args", [
    ("p_pair", lambda x, y: (x, 0)),
    ("p_opt", lambda x, y: (x, y, 0)),
    ("p_opt", lambda x, y: (x, None, 0)),
    ("p_affine", lambda x, y: (x, 0.5, 3, True, 0)),
], ids=["p_pair", "p_opt", "p_opt-none", "p_affine"])
def test_backward_formulas_of_the_feature_ops(name, args):
    x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    y = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    op = getattr(torch.ops.dcefuzz, name)
    inputs = args(x, y)
    assert torch.autograd.gradcheck(lambda *a: op(*a, *inputs[len(a):]),
                                    tuple(t for t in inputs if isinstance(t, torch.Tensor)))


def test_declared_kinds_match_the_registration():
    from torch._library.utils import is_impure
    for op in CUSTOM_OPS:
        overload = getattr(torch.ops.dcefuzz, op.name).default
        mutable = overload._schema.is_mutable
        assert mutable == (op.declaration == MUTATING), op.name
        from torch._higher_order_ops.effects import _get_effect
        assert (_get_effect(overload) is not None) == (op.declaration == EFFECTFUL), op.name
        if op.declaration == PURE:
            assert not is_impure(overload), op.name


def test_trace_records_sites_and_effect_inputs():
    trace = custom_ops.install().TRACE
    trace["calls"].clear()
    trace["effects"].clear()
    x = torch.ones(3)
    torch.ops.dcefuzz.p_sin(x, 7)
    torch.ops.dcefuzz.e_log(x, 8)
    x.add_(1)   # the event keeps a copy: later writes don't change it
    calls, effects = list(trace["calls"]), list(trace["effects"])
    assert calls == [("p_sin", 7), ("e_log", 8)]
    assert [(op, site) for op, site, _ in effects] == [("e_log", 8)]
    assert torch.equal(effects[0][2][0], torch.ones(3))


def test_source_for_unknown_op():
    with pytest.raises(KeyError, match="nope"):
        custom_ops.source_for(["nope"])


def test_every_op_written_plain_computes_what_the_traced_op_does():
    """A brief whose bug needs no call trace writes each op without the fuzzer's
    scaffolding (``plain_snippet``): no site argument, no ``_hit``.  Registered under
    another namespace, each plain op returns, writes and differentiates as its traced
    op does, its backward formula one gradient shorter (no site)."""
    plain = "\n\n".join(custom_ops.plain_snippet(custom_ops.with_backward(op)) for op in CUSTOM_OPS)
    assert not re.search(r"\bsite\b", plain) and "_hit" not in plain
    # the opaque classes the ops name are the library's, registered once already
    namespace = {name: getattr(custom_ops.install(), name) for name in ("Scale", "HScale", "Cache")}
    # the plain ops call each other (a kernel that calls another, a backward that logs)
    # in their own namespace
    plain = plain.replace('"dcefuzz::', '"dcefuzz_plain::').replace('Library("dcefuzz"', 'Library("dcefuzz_plain"')
    exec(compile(custom_ops.HEADER + "\n\n" + plain.replace("torch.ops.dcefuzz.", "torch.ops.dcefuzz_plain."),
                 "<plain>", "exec"), namespace)
    assert not namespace["TRACE"]["calls"]
    for op in CUSTOM_OPS:
        x = torch.randn(3, 2, dtype=torch.float64)
        y = torch.randn(3, 2, dtype=torch.float64)
        traced_args, plain_args = _args(op, x.clone(), y.clone()), _unsited(op, _args(op, x.clone(), y.clone()))
        traced_kwargs, keywords = _kwargs(op, x.clone(), y.clone()), _kwargs(op, x.clone(), y.clone())
        traced = getattr(torch.ops.dcefuzz, op.name)(*traced_args, **traced_kwargs)
        keywords.pop("site", None)
        written = getattr(torch.ops.dcefuzz_plain, op.name)(*plain_args, **keywords)
        torch.testing.assert_close(written, traced, msg=op.name)
        torch.testing.assert_close(_seen(plain_args), _seen(_unsited(op, traced_args)), msg=f"{op.name}'s writes")
        traced_kwargs.pop("site", None)
        torch.testing.assert_close(keywords, traced_kwargs, msg=f"{op.name}'s writes to its buffers")
        if op.declaration == PURE and op.name not in NO_BACKWARD:
            leaves = (x.requires_grad_(), y.requires_grad_())[:2 if op.name in TWO_INPUTS else 1]
            call = getattr(torch.ops.dcefuzz_plain, op.name)
            assert torch.autograd.gradcheck(lambda *t: call(*_unsited(op, _args(op, t[0], t[-1])), **keywords),
                                            leaves), op.name
