"""The features of how a program runs (``fuzzer.program.mode_features``): each is seen in
a program by its mode or its calls (``Feature.seen_in``), and not in a plain one."""

import dataclasses

import pytest
from helpers import prog

from fuzzer.program import features, mode_features
from fuzzer.program.ir import Mode

PLAIN = prog({"x0": ("s0",), "x1": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0})], outputs=["v0"])
#: for each feature, a mode that has it
MODES = {
    mode_features.AUTOGRAD: Mode(grad=True),
    mode_features.DYNAMIC_MODE: Mode(dynamic="auto"),
    mode_features.DTYPES: Mode(dtype="bfloat16"),
    mode_features.STRIDED: Mode(strided=("x0",)),
    mode_features.ALIASED: Mode(aliases=(("x1", "x0"),)),
    mode_features.MODULE_STATE: Mode(module=("x0",)),
    mode_features.LAYOUTS: Mode(layouts=(("x0", "expanded"),)),
    mode_features.OVERLAPPING: Mode(windows=(("x1", "x0", 0, "head"),)),
    mode_features.FUNC_GRAD: Mode(grad=True, func_grad=True),
}


def _seen(program) -> set[str]:
    return {f.name for f in mode_features.FEATURES if f.seen_in(program)}


def test_a_plain_program_shows_none():
    assert _seen(PLAIN) == set()


@pytest.mark.parametrize("name", sorted(MODES))
def test_each_is_seen_in_a_mode_that_has_it(name):
    seen = _seen(dataclasses.replace(PLAIN, mode=MODES[name]))
    assert name in seen
    assert seen <= {name, mode_features.AUTOGRAD}  # func-grad takes gradients


def test_dynamic_mode_is_seen_in_a_mark_too():
    assert _seen(dataclasses.replace(PLAIN, mode=Mode(marks=(("x0", 0, "dynamic"),)))) == {mode_features.DYNAMIC_MODE}


def test_identical_calls_are_seen_in_a_site_called_twice():
    twice = prog({"x0": ("s0",)}, [("p_sin", ["x0"], "v0", {"site": 0}), ("p_sin", ["x0"], "v1", {"site": 0})])
    assert _seen(twice) == {mode_features.IDENTICAL_CALLS}


def test_a_carried_module_is_module_carry_not_module_state():
    carried = dataclasses.replace(PLAIN, mode=Mode(module=("x0",), carry=True))
    assert _seen(carried) == set()
    assert features.used_by(carried) == [features.MODULE_CARRY]


def test_func_grad_takes_gradients_and_drops_what_functorch_cannot_run():
    func_grad = features.BY_NAME[mode_features.FUNC_GRAD]
    assert func_grad.implies == (mode_features.AUTOGRAD,)
    assert set(func_grad.excludes) == {"graph-break", "hops", "hop-effects", "autograd-function", "function-shapes",
                                       "module-state", "module-carry", "opaque-objects", "tensor-subclass"}
