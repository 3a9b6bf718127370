"""Which inputs become a module's buffers (``fuzzer.program.buffers``), and the state a
module carries over; hand-written programs, no compile."""

import dataclasses

from helpers import prog

from fuzzer.program import buffers
from fuzzer.program.ir import Mode, check

INPUTS = {"x0": ("s0",), "x1": ("s0",), "x2": ("s0",)}


def test_the_buffer_is_an_input_a_custom_op_writes_before_one_anything_writes():
    p = prog(INPUTS, [
        ("mul_", ["x1"], None, {"c": 2.0}),
        ("p_sin", ["x0"], "v0", {"site": 0}),
        ("m_addto", ["x2", "v0"], None, {"site": 1}),
    ])
    for seed in range(20):
        module = buffers.as_module(p, seed).mode.module
        assert module == ("x2",), (seed, module)
    written = prog(INPUTS, [("mul_", ["x1"], None, {"c": 2.0}), ("p_sin", ["x0"], "v0", {"site": 0})])
    assert {buffers.as_module(written, seed).mode.module for seed in range(20)} == {("x1",)}


def test_a_second_buffer_is_drawn_now_and_then_and_the_same_for_the_same_seed():
    p = prog(INPUTS, [])
    drawn = [buffers.as_module(p, seed).mode.module for seed in range(40)]
    assert drawn == [buffers.as_module(p, seed).mode.module for seed in range(40)]
    assert {len(m) for m in drawn} == {1, 2}


def test_an_input_held_by_a_mark_or_a_stride_is_never_a_buffer():
    p = prog(INPUTS, [("m_addto", ["x2", "x0"], None, {"site": 0})])
    p = dataclasses.replace(p, mode=Mode(marks=(("x2", 0, "dynamic"),), strided=("x1",)))
    for seed in range(20):
        assert set(buffers.as_module(p, seed).mode.module) == {"x0"}


def test_a_program_that_takes_gradients_has_no_module():
    p = dataclasses.replace(prog(INPUTS, []), mode=Mode(grad=True))
    assert buffers.as_module(p, 0) is p


def test_a_carried_state_is_a_new_input_of_a_pinned_symbol_handed_over_as_it_is():
    state = buffers.draw_state(7, ("s0", "s1"), 2)
    assert state == buffers.draw_state(7, ("s0", "s1"), 2)
    assert state.name == "x2" and state.symbol == "s2" and set(state.dims) == {"s2"}
    assert state.length in buffers.STATE_LENGTHS
    p = prog({"x0": ("s0",), state.name: state.dims}, [])
    p = dataclasses.replace(p, mode=Mode(marks=((state.name, 0, "dynamic"), ("x0", 0, "dynamic")),
                                         strided=(state.name,)))
    mode = buffers.carried(p, state).mode
    assert mode.module == (state.name,) and mode.carry
    assert mode.marks == (("x0", 0, "dynamic"),) and mode.strided == ()
    check(buffers.carried(prog({"x0": ("s0",), state.name: state.dims}, []), state))


def test_pinned_bindings_give_the_state_one_length_and_drop_the_repeats():
    state = buffers.State("x1", "s1", 4, ("s1",))
    bindings = ({"s0": 3, "s1": 2}, {"s0": 3, "s1": 9}, {"s0": 5, "s1": 2})
    assert buffers.pinned(bindings, state) == ({"s0": 3, "s1": 4}, {"s0": 5, "s1": 4})
