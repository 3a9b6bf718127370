"""effect-dropped (``fuzzer.faults.effect_dropped``): with the fault, an effectful custom
op is pure to ``is_impure`` (in its dynamic variant only with symbolic sizes), and every
other call is asked of torch's own check; stand-in originals, no compile."""

from types import SimpleNamespace

import sympy
import torch

from fuzzer.faults import effect_dropped
from fuzzer.program import custom_ops

SYMBOLIC = SimpleNamespace(get_size=lambda: [sympy.Symbol("s0")])


def _patched(fault):
    asked = []
    originals = {effect_dropped.IS_IMPURE: lambda op, **kw: asked.append(op) or "torch's answer",
                 effect_dropped.HANDLE_EFFECTS: lambda *a: asked.append(a[2]) or "handled"}
    return fault.build(originals.__getitem__), asked


def test_an_effectful_custom_op_is_pure_and_every_other_op_is_asked_of_torch():
    custom_ops.install()
    plain, _ = effect_dropped.FAULTS
    patched, asked = _patched(plain)
    is_impure = patched[effect_dropped.IS_IMPURE]
    log, sin = torch.ops.dcefuzz.e_log.default, torch.ops.dcefuzz.p_sin.default
    assert is_impure(log, args=(1,), kwargs={}) is False
    assert is_impure(sin, args=(1,), kwargs={}) == "torch's answer"
    assert is_impure(log) == "torch's answer"  # no arguments given: nothing to judge by
    assert patched[effect_dropped.HANDLE_EFFECTS](False, {}, sin, (), {}) == "handled"
    assert asked == [sin, log, sin]


def test_the_dynamic_variant_drops_only_calls_with_symbolic_sizes():
    custom_ops.install()
    _, dynamic = effect_dropped.FAULTS
    is_impure = _patched(dynamic)[0][effect_dropped.IS_IMPURE]
    log = torch.ops.dcefuzz.e_log.default
    assert is_impure(log, args=(SYMBOLIC,), kwargs={}) is False
    assert is_impure(log, args=(torch.ones(2),), kwargs={}) == "torch's answer"
    assert dynamic.dynamic_only and dynamic.name == "effect-dce-dynamic" and dynamic.unavailable() is None
