"""The order a shrink moves down (``fuzzer.reduce.order``), by public behaviour: fewer of
anything is simpler, the first thing counted first, a simpler op, operand, constant or
size is lower; each single simplification of a mode is simpler; hand-written cases.
Its tables (which op is simpler than which) are read only through what they order: they
may move onto the forms themselves."""

import dataclasses

from helpers import case, prog

from fuzzer.program import forms
from fuzzer.program.ir import Mode
from fuzzer.reduce import order

P = prog({"x0": ("s0", "s1")}, [("p_mix", ["x0", "x0"], "v0", {"site": 0}), ("scale", ["v0"], "v1",
                                                                           {"c": forms.CONSTANTS[-1]})],
         outputs=["v1"])


def test_fewer_statements_outrank_everything_after_them():
    shorter = prog({"x0": ("s0", "s1")}, [("p_mix", ["x0", "x0"], "v0", {"site": 0})], outputs=["v0"])
    many_bindings = case(shorter, [{"s0": 9, "s1": 9}] * 1 + [{"s0": n, "s1": n} for n in (2, 3, 4, 5)])
    assert order.complexity(many_bindings) < order.complexity(case(P))
    one_returning_two = prog({"x0": ("s0", "s1")}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0", "x0"])
    two_returning_none = prog({"x0": ("s0", "s1")}, [("p_sin", ["x0"], "v0", {"site": 0}),
                                                     ("p_sin", ["x0"], "v1", {"site": 1})])
    assert order.complexity(case(one_returning_two)) < order.complexity(case(two_returning_none))


def test_a_simpler_form_an_earlier_operand_a_simpler_constant_and_smaller_sizes_each_order_lower():
    base = order.complexity(case(P))
    simpler_op = dataclasses.replace(P, body=(P.body[0].__class__("p_sin", ("x0",), "v0", {"site": 0}), P.body[1]))
    simpler_c = dataclasses.replace(P, body=(P.body[0], dataclasses.replace(P.body[1],
                                                                            attrs={"c": forms.CONSTANTS[0]})))
    assert order.complexity(case(simpler_op)) < base
    assert order.complexity(case(simpler_c)) < base
    assert order.complexity(case(P, [{"s0": 2, "s1": 2}] * 3)) < order.complexity(case(P, [{"s0": 3, "s1": 3}] * 3))


def test_each_simplification_of_a_mode_is_one_step_down():
    mode = Mode(dynamic="auto", dtype="float16", marks=(("x0", 0, "dynamic"),), strided=("x0",), grad=True,
                layouts=(("x1", "transposed"),), windows=(("x2", "x3", 0, "row"),), window_calls="later")
    assert order.mode_complexity(Mode()) == 0 and order.mode_complexity(mode) == 8
    simpler = list(order.simpler_modes(mode))
    assert len(simpler) == 8
    assert all(order.mode_complexity(m) < order.mode_complexity(mode) for m in simpler)
    assert list(order.simpler_modes(Mode())) == []
    carried = Mode(module=("x0",), carry=True)
    assert list(order.simpler_modes(carried)) == [Mode(module=("x0",))]  # carried first: a buffer stays till then
