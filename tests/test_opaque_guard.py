"""The opaque-guard-dropped fault (``fuzzer.faults.opaque_guard``): which constants it
leaves unguarded, and that its undo restores Dynamo's guard builders.  Planted on a
real compile: ``tests/test_faults.py`` (its program on the ``opaque-objects`` path)."""

import torch

from fuzzer import faults
from fuzzer.faults import opaque_guard
from fuzzer.program import custom_ops

lib = custom_ops.install()


def test_only_an_object_of_a_registered_value_type_counts_as_an_opaque_value():
    assert opaque_guard._opaque_value(lib.Scale(2.0, 1.0))
    assert not opaque_guard._opaque_value(lib.Cache.of(torch.ones(2)))  # a reference type
    assert not opaque_guard._opaque_value(3)
    assert not opaque_guard._opaque_value(torch.ones(2))


def test_the_fault_replaces_both_guard_builders_and_its_undo_restores_them():
    from torch._dynamo.guards import GuardBuilder

    before = (GuardBuilder.CONSTANT_MATCH, GuardBuilder.OPAQUE_OBJ_GUARD_FN_MATCH)
    undo = faults.get("opaque-guard-dropped").install()
    try:
        assert GuardBuilder.CONSTANT_MATCH is not before[0]
        assert GuardBuilder.OPAQUE_OBJ_GUARD_FN_MATCH is not before[1]
        assert GuardBuilder.OPAQUE_OBJ_GUARD_FN_MATCH(None, None) is None
    finally:
        undo()
    assert (GuardBuilder.CONSTANT_MATCH, GuardBuilder.OPAQUE_OBJ_GUARD_FN_MATCH) == before


def test_a_plain_constant_keeps_its_guard_under_the_fault():
    """Off the opaque path the fault is silent: an int handed to a compiled function is
    still guarded, so another int recompiles and computes with its own value."""
    undo = faults.get("opaque-guard-dropped").install()
    try:
        torch._dynamo.reset()
        f = torch.compile(lambda x, k: x * k, backend="eager", dynamic=False)
        x = torch.ones(3)
        assert f(x, 2).tolist() == [2.0] * 3 and f(x, 5).tolist() == [5.0] * 3
    finally:
        undo()
        torch._dynamo.reset()
