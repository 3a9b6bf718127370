"""Inputs handed over in another memory layout (``fuzzer.program.layouts``): the IR's
rules on both sides, the tensors ``observe.draw_inputs`` makes, the generator and the
shrinker."""

import dataclasses

import pytest
import torch
from helpers import case, prog

from fuzzer.judge import observe
from fuzzer.judge.execute import make_inputs, run_eager
from fuzzer.program import features, forms
from fuzzer.program.generate import generate
from fuzzer.program.ir import InvalidProgram, Mode, Program, check
from fuzzer.reduce.order import mode_complexity, simpler_modes

INPUTS = {"x0": ("s0", "s1"), "x1": ("s0", "s1", "s0", "s1"), "x2": ("s1",)}


def _with(p: Program, **mode) -> Program:
    return dataclasses.replace(p, mode=Mode(**mode))


@pytest.mark.parametrize("layouts, body", [
    ((("x0", "transposed"),), [("mul_", ["x0"], None, {"c": 2.0})]),
    ((("x1", "channels_last"),), [("m_scale", ["x1"], None, {"site": 0})]),
    ((("x1", "transposed"), ("x0", "expanded")), [("head", ["x0"], "v0", {"dim": 0}), ("p_sin", ["v0"], "v1",
                                                                                       {"site": 0})]),
    ((("x2", "expanded"),), [("add_", ["x0", "x2"], None, {})]),  # read beside a write elsewhere
])
def test_inputs_of_each_layout_are_legal(layouts, body):
    check(_with(prog(INPUTS, body), layouts=layouts))


@pytest.mark.parametrize("mode, body, message", [
    ({"layouts": (("x0", "expanded"),)}, [("mul_", ["x0"], None, {"c": 2.0})], "expanded"),
    ({"layouts": (("x0", "expanded"),)}, [("head", ["x0"], "v0", {"dim": 0}), ("m_scale", ["v0"], None,
                                                                               {"site": 0})], "expanded"),
    ({"layouts": (("x0", "expanded"),), "aliases": (("x3", "x0"),)}, [("mul_", ["x3"], None, {"c": 2.0})],
     "expanded"),
    ({"layouts": (("x0", "channels_last"),)}, [], "bad layout"),  # rank 2
    ({"layouts": (("x2", "transposed"),)}, [], "bad layout"),
    ({"layouts": (("x0", "sideways"),)}, [], "bad layout"),
    ({"layouts": (("x0", "transposed"),), "strided": ("x0",)}, [], "not strided"),
    ({"layouts": (("x0", "expanded"),), "grad": True}, [], "gradients"),
    ({"layouts": (("x0", "transposed"),)}, [("as_strided", ["x0"], "v0", {"base": ["s0", "s1"], "pieces":
                                                                          ["all", "all"], "order": [0, 1]})],
     "contiguous"),
])
def test_what_a_layout_forbids_is_refused(mode, body, message):
    inputs = dict(INPUTS, x3=("s0", "s1")) if mode.get("aliases") else INPUTS
    with pytest.raises(InvalidProgram, match=message):
        check(_with(prog(inputs, body), **mode))


def test_the_default_mode_keeps_its_json_and_a_layout_round_trips():
    assert "layouts" not in Mode(strided=("x0",)).to_json()
    mode = Mode(layouts=(("x0", "transposed"),))
    assert Mode.from_json(mode.to_json()) == mode
    assert features.LAYOUTS in _with(prog(INPUTS, []), layouts=mode.layouts).features()


def test_each_layout_holds_the_drawn_values_in_its_own_strides():
    shapes = [(3, 4, 5, 6)] * 3
    plain = observe.draw_inputs(shapes, 7, "cpu")
    laid = observe.draw_inputs(shapes, 7, "cpu", handover=observe.Handover(
        layouts=((0, "transposed"), (1, "channels_last"), (2, "expanded"))))
    assert torch.equal(laid[0], plain[0]) and laid[0].stride()[-2:] == (1, 5)
    assert torch.equal(laid[1], plain[1]) and laid[1].is_contiguous(memory_format=torch.channels_last)
    assert not laid[1].is_contiguous()
    three = observe.draw_inputs([(3, 4, 5)], 7, "cpu", handover=observe.Handover(layouts=((0, "channels_last"),)))[0]
    assert three.stride() == (20, 1, 4)
    assert laid[2].stride(0) == 0 and torch.equal(laid[2], plain[2][:1].expand(shapes[2]))


def test_a_program_runs_on_its_inputs_in_their_layouts():
    p = _with(prog(INPUTS, [("p_sin", ["x0"], "v0", {"site": 0}), ("mul_", ["x1"], None, {"c": 2.0})],
                   outputs=["v0"]), layouts=(("x0", "expanded"), ("x1", "channels_last")))
    c = case(p)
    xs = make_inputs(c, 0, "cpu")
    assert xs[0].stride(0) == 0 and xs[1].is_contiguous(memory_format=torch.channels_last)
    runs = run_eager(c, "cpu")
    assert len(runs) == len(c.bindings)


def test_the_generator_draws_layouts_only_with_the_feature_and_never_writes_an_expanded_input():
    seen = set()
    for seed in range(80):
        p = generate(seed, features={"layouts": 1.0}).program
        t = check(p)
        seen |= {how for _, how in p.mode.layouts}
        expanded = {n for n, how in p.mode.layouts if how == "expanded"}
        for s in p.body:
            assert not {t.root[s.args[w]] for w in forms.form(s.form).mutates} & expanded
        assert not generate(seed, features={"strided": 1.0}).program.mode.layouts
    assert seen == {"transposed", "channels_last", "expanded"}


def test_the_shrinker_drops_each_layout():
    mode = Mode(layouts=(("x0", "transposed"), ("x1", "channels_last")))
    simpler = list(simpler_modes(mode))
    assert Mode(layouts=(("x1", "channels_last"),)) in simpler and Mode(layouts=(("x0", "transposed"),)) in simpler
    assert all(mode_complexity(m) < mode_complexity(mode) for m in simpler)


# ------------------------------------------------------ the module's own rules
def test_layouts_problem_names_a_layout_its_input_cannot_take():
    from fuzzer.program import layouts

    dims = {"x0": ("s0", "s1"), "x2": ("s1",)}
    assert layouts.problem(Mode(layouts=(("x0", "transposed"),)), dims, {}) is None
    assert "bad layout" in layouts.problem(Mode(layouts=(("x2", "transposed"),)), dims, {})   # rank 1
    assert "bad layout" in layouts.problem(Mode(layouts=(("x0", "diagonal"),)), dims, {})
    assert "not strided" in layouts.problem(Mode(layouts=(("x0", "expanded"),), strided=("x0",)), dims, {})
    assert "of the program's dtype" in layouts.problem(Mode(layouts=(("x0", "expanded"),)), dims, {"x0": "int8"})
    assert "gradients" in layouts.problem(Mode(layouts=(("x0", "expanded"),), grad=True), dims, {})


def test_layouts_a_write_into_an_expanded_storage_is_named_and_held_inputs_are_read_off_the_body():
    from fuzzer.program import layouts
    from fuzzer.program.ir import Stmt

    mode = Mode(layouts=(("x0", "expanded"), ("x1", "transposed")))
    root = {"x0": "x0", "v0": "x0", "x1": "x1"}
    assert layouts.written_expanded(Stmt("mul_", ("v0",), None, {"c": 2.0}), forms.form("mul_"), root, mode) == "v0"
    assert layouts.written_expanded(Stmt("mul_", ("x1",), None, {"c": 2.0}), forms.form("mul_"), root, mode) is None
    body = (Stmt("as_strided", ("x0",), "v0", {}), Stmt("m_scale", ("x1",), None, {"site": 0}))
    assert layouts.held(body, {"x0": "x0", "x1": "x1", "v0": "x0"}, forms.form) == ({"x0"}, {"x1"})


def test_layouts_are_drawn_only_with_the_feature_and_never_over_what_is_held():
    import random

    from fuzzer.program import layouts
    from fuzzer.program.ir import Input

    inputs = [Input("x0", ("s0", "s1")), Input("x1", ("s0", "s1", "s0", "s1")), Input("x2", ("s1",), "int8")]
    assert layouts.draw(random.Random(0), inputs, (), (), set(), set(), False, on=False) == ()
    for seed in range(30):
        drawn = dict(layouts.draw(random.Random(seed), inputs, ("x1",), (), set(), {"x0"}, False, on=True))
        assert set(drawn) <= {"x0"} and drawn.get("x0") in (None, "transposed")  # x0 written: not expanded
