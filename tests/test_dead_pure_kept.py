"""dead-pure-kept (``fuzzer.faults.dead_pure_kept``): with the fault, a pure custom op is
impure (in its dynamic variant only with symbolic sizes, and so is its kernel to
Inductor), every other op asked of torch; stand-in originals, no compile."""

from types import SimpleNamespace

import sympy
import torch

from fuzzer.faults import dead_pure_kept
from fuzzer.program import custom_ops

SYMBOLIC = SimpleNamespace(get_size=lambda: [sympy.Symbol("s0")])


def _patched(fault):
    originals = {dead_pure_kept.IS_IMPURE: lambda op, **kw: "torch's answer",
                 dead_pure_kept.HAS_SIDE_EFFECTS: lambda self: "inductor's answer"}
    return fault.build(originals.__getitem__)


def test_a_pure_custom_op_is_impure_and_an_effectful_or_mutating_one_asked_of_torch():
    custom_ops.install()
    plain, _ = dead_pure_kept.FAULTS
    is_impure = _patched(plain)[dead_pure_kept.IS_IMPURE]
    assert is_impure(torch.ops.dcefuzz.p_sin.default, args=(1,)) is True
    for op in (torch.ops.dcefuzz.e_log.default, torch.ops.dcefuzz.m_scale.default, torch.ops.aten.sin.default):
        assert is_impure(op, args=(1,)) == "torch's answer", op
    assert set(_patched(plain)) == {dead_pure_kept.IS_IMPURE}


def test_the_dynamic_variant_keeps_only_calls_and_kernels_with_symbolic_sizes():
    custom_ops.install()
    _, dynamic = dead_pure_kept.FAULTS
    patched = _patched(dynamic)
    sin = torch.ops.dcefuzz.p_sin.default
    assert patched[dead_pure_kept.IS_IMPURE](sin, args=(SYMBOLIC,)) is True
    assert patched[dead_pure_kept.IS_IMPURE](sin, args=(torch.ones(1),)) == "torch's answer"
    side = patched[dead_pure_kept.HAS_SIDE_EFFECTS]
    assert side(SimpleNamespace(op_overload=sin, inputs=[SYMBOLIC])) is True
    assert side(SimpleNamespace(op_overload=sin, inputs=[torch.ones(1)])) == "inductor's answer"
    assert dynamic.unavailable() is None
