"""What a guard on a size from data asked (``fuzzer.judge.guarded``): a marked size's
value, only whether it is 0 or 1, or a size from data; guards raised by a ShapeEnv of
our own, no compile."""

import pytest
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from fuzzer.judge import guarded


def _raised(ask, marked: bool):
    """The error ``ask(u)`` raises on a fresh unbacked size ``u`` (an input's size
    marked unbacked where ``marked``)."""
    env = ShapeEnv()
    u = env.create_unbacked_symint()
    if marked:
        env.unbacked_inputs.add(u.node.expr)
    with pytest.raises(Exception) as caught:
        ask(u)
    return caught.value


def test_a_guard_on_a_marked_sizes_value_asks_its_value():
    assert guarded.guarded_on(_raised(lambda u: bool(u > 5), marked=True)) == guarded.GUARD_ON_MARKED


def test_a_guard_that_sizes_of_two_or_more_decide_asks_only_whether_they_are_zero_or_one():
    assert guarded.guarded_on(_raised(lambda u: bool(2 * u == 0), marked=True)) == guarded.GUARD_ON_ZERO_ONE


def test_a_guard_on_a_size_from_data_is_another_and_no_guard_is_none():
    assert guarded.guarded_on(_raised(lambda u: bool(u > 5), marked=False)) == guarded.GUARD_ON_OTHER
    assert guarded.guarded_on(ValueError("no guard")) == ""
