"""The custom ops keep the promises the compiler relies on (torch.library.opcheck)."""

import pytest
import torch

from fuzzer.program import custom_ops
from fuzzer.program.custom_ops import CUSTOM_OPS, EFFECTFUL, MUTATING, PURE


def _args(op, x, y):
    if op.name == "p_head":
        return (x, x.shape[0] // 2, 0)
    if op.name in ("p_mix", "m_addto", "m_shift", "m_swap"):
        return (x, y, 0)
    return (x, 0)


LAYOUTS = {
    "contiguous": lambda: (torch.randn(5, 4), torch.randn(5, 4)),
    "transposed": lambda: (torch.randn(4, 5).t(), torch.randn(4, 5).t()),
    "mixed": lambda: (torch.randn(5, 4), torch.randn(4, 5).t()),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("op", CUSTOM_OPS, ids=lambda o: o.name)
def test_opcheck(op, layout):
    x, y = LAYOUTS[layout]()
    torch.library.opcheck(getattr(torch.ops.dcefuzz, op.name).default, _args(op, x, y),
                          test_utils=("test_schema", "test_faketensor"))


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
