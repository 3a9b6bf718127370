"""The custom ops keep the promises the compiler relies on (torch.library.opcheck).

opcheck runs with every test it has by default, ``test_aot_dispatch_dynamic``
included (the op traced by AOTAutograd with dynamic shapes, as ``torch.compile``
does), on the shapes generated programs give the ops: empty dims, dims of size 1
(which ``dynamic=True`` specialises) and 2, the ranks each op's form allows, and
inputs that are contiguous, transposed or offset views.  Inputs never require
grad: dcefuzz programs compute no gradients, so the ops register no autograd
formula.
"""

import itertools

import pytest
import torch
from torch.testing._internal.optests.generate_tests import DEFAULT_TEST_UTILS

from fuzzer.program import custom_ops
from fuzzer.program.custom_ops import CUSTOM_OPS, EFFECTFUL, MUTATING, PURE

#: the sizes every dim of a sample takes: empty, specialised by dynamic=True, symbolic
SIZES = (0, 1, 2)
#: the ops whose forms accept a 0-d operand (the others need rank >= 1)
RANK_0 = {"p_sin", "p_mix", "m_addto", "m_scale", "e_log", "e_tap"}
TWO_INPUTS = {"p_mix", "m_addto", "m_shift", "m_swap"}


def _args(op, x, y):
    if op.name == "p_head":
        return (x, x.shape[0] // 2, 0)
    if op.name in TWO_INPUTS:
        return (x, y, 0)
    return (x, 0)


def _shapes(op):
    ranks = (1, 2, 3) if op.name not in RANK_0 else (0, 1, 2, 3)
    return [s for r in ranks for s in itertools.product(SIZES, repeat=r)
            if r < 3 or len(set(s)) == 3]  # rank 3: the orders of 0, 1, 2 only


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
        pairs = [(a, a) for a in layouts] + ([("contiguous", "transposed")] if "transposed" in layouts else [])
        for lx, ly in pairs if op.name in TWO_INPUTS else [(a, a) for a in layouts]:
            yield f"{shape} {lx}/{ly}", _args(op, _layout(shape, lx), _layout(shape, ly))


@pytest.mark.parametrize("op", CUSTOM_OPS, ids=lambda o: o.name)
def test_opcheck(op):
    overload = getattr(torch.ops.dcefuzz, op.name).default
    checked = 0
    for label, args in _samples(op):
        try:
            result = torch.library.opcheck(overload, args)
        except Exception as exc:
            raise AssertionError(f"{op.name} on {label}: {exc}") from exc
        assert result == {u: "SUCCESS" for u in DEFAULT_TEST_UTILS}, (label, result)
        checked += 1
    shapes = _shapes(op)
    assert {d for s in shapes for d in s} == set(SIZES) and checked >= len(shapes)


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
    custom_ops.reset_trace()
    x = torch.ones(3)
    torch.ops.dcefuzz.p_sin(x, 7)
    torch.ops.dcefuzz.e_log(x, 8)
    x.add_(1)   # the event keeps a copy: later writes don't change it
    calls, effects = custom_ops.take_trace()
    assert calls == [("p_sin", 7), ("e_log", 8)]
    assert [(op, site) for op, site, _ in effects] == [("e_log", 8)]
    assert torch.equal(effects[0][2][0], torch.ones(3))
    assert custom_ops.take_trace() == ([], [])


def test_source_for_unknown_op():
    with pytest.raises(KeyError, match="nope"):
        custom_ops.source_for(["nope"])
