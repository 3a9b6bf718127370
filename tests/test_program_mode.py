"""A program's mode (``fuzzer.program.mode``): its JSON, and what a mode may be for the
inputs it names (``problem``), on hand-built modes."""

import pytest

from fuzzer.program import mode as mode_
from fuzzer.program.ir import Input
from fuzzer.program.mode import Mode

DIMS = {"x0": ("s0", "s1"), "x1": ("s0", "s1"), "x2": ("s0",)}
INPUTS = [Input("x0", DIMS["x0"]), Input("x1", DIMS["x1"]), Input("x2", DIMS["x2"])]
GIVEN = {"x0": None, "x1": None, "x2": None}


def _problem(mode, inputs=INPUTS, given=GIVEN):
    return mode_.problem(mode, DIMS, inputs, given)


def test_the_default_mode_is_left_out_of_its_json_and_every_field_round_trips():
    assert Mode().is_default and Mode().to_json() == {"dynamic": "true", "marks": [], "grad": False,
                                                      "dtype": "float32", "strided": []}
    full = Mode(dynamic="auto", marks=(("x0", 1, "maybe"),), dtype="bfloat16", strided=("x2",),
                aliases=(("x1", "x0"),), module=("x2",), carry=True, layouts=(("x0", "channels_last"),),
                windows=(("x1", "x0", 0, "row"),), window_calls="later", grad=True, func_grad=True)
    assert Mode.from_json(full.to_json()) == full
    assert not full.is_default
    assert Mode.from_json({}) == Mode()


def test_a_well_formed_mode_has_no_problem():
    assert _problem(Mode()) is None
    assert _problem(Mode(dynamic="auto", marks=(("x0", 1, "unbacked"),), aliases=(("x1", "x0"),))) is None


@pytest.mark.parametrize("mode, words", [
    (Mode(dynamic="false"), "dynamic mode"),
    (Mode(dtype="float64"), "dtype"),
    (Mode(marks=(("x2", 1, "dynamic"),)), "bad mark"),
    (Mode(marks=(("x0", 0, "static"),)), "bad mark"),
    (Mode(strided=("x9",)), "not an input"),
    (Mode(aliases=(("x2", "x0"),)), "bad alias"),       # dims differ
    (Mode(aliases=(("x0", "x0"),)), "bad alias"),
    (Mode(func_grad=True), "torch.func.grad"),
    (Mode(grad=True, aliases=(("x1", "x0"),)), "leaf"),
    (Mode(carry=True), "carries over"),
    (Mode(module=("x0",), grad=True), "buffers do not require grad"),
    (Mode(module=("x0",), strided=("x0",)), "bad buffer"),
    (Mode(module=("x0", "x0")), "named twice"),
])
def test_a_mode_that_does_not_fit_its_inputs_is_named(mode, words):
    assert words in (_problem(mode) or "")


def test_a_fixed_dtype_input_is_neither_strided_nor_in_a_program_that_takes_gradients():
    inputs = [Input("x0", DIMS["x0"], "int8"), *INPUTS[1:]]
    given = {**GIVEN, "x0": "int8"}
    assert "only inputs of the program's dtype" in _problem(Mode(strided=("x0",)), inputs, given)
    assert "floating inputs only" in _problem(Mode(grad=True), inputs, given)
    assert "another dtype" in _problem(Mode(aliases=(("x1", "x0"),)), inputs, given)
    assert "not in" in _problem(Mode(), [Input("x0", DIMS["x0"], "complex64")], given)
