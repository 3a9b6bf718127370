"""The bindings pass (``fuzzer.reduce.passes.bindings``): each failing binding alone,
then all the failing ones; stand-in verdicts."""

from helpers import case, divergence_on, offered_by, prog

from fuzzer.reduce.passes.bindings import FailingBindings

C = case(prog({"x0": ("s0",)}, []), [{"s0": n} for n in (4, 7, 2, 9)])


def test_each_failing_binding_is_offered_alone_then_all_of_them():
    offered, best = offered_by(FailingBindings(), C, lambda c: False, [divergence_on(3), divergence_on(1)])
    assert [c.bindings for c in offered] == [({"s0": 7},), ({"s0": 9},), ({"s0": 7}, {"s0": 9})]
    assert best is C


def test_the_pass_ends_at_the_first_taken_and_offers_nothing_on_one_binding():
    offered, best = offered_by(FailingBindings(), C, lambda c: True, [divergence_on(2)])
    assert best.bindings == ({"s0": 2},) and len(offered) == 1
    one = case(prog({"x0": ("s0",)}, []), [{"s0": 3}])
    assert offered_by(FailingBindings(), one, lambda c: True, [divergence_on(0)])[0] == []


def test_all_failing_is_not_offered_when_every_binding_fails():
    offered, _ = offered_by(FailingBindings(), C, lambda c: False, [divergence_on(b) for b in range(4)])
    assert [len(c.bindings) for c in offered] == [1, 1, 1, 1]
