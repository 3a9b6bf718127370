"""A user op's scalar arguments (``fuzzer.user.argtypes``): the type an argument means,
a hinted value checked against it, and the value as code and as the object the op gets."""

from types import SimpleNamespace

import pytest
import torch

from fuzzer.user import argtypes
from fuzzer.user.argtypes import BadValue


@pytest.mark.parametrize("type_, real, meant", [
    ("Optional[float]", None, "float"), ("int[2]", None, "List[int]"), ("SymInt[]", None, "List[SymInt]"),
    ("int", "ScalarType", "ScalarType"),
])
def test_the_type_an_argument_means(type_, real, meant):
    assert argtypes.real_type(SimpleNamespace(type=type_, real_type=real)) == meant


@pytest.mark.parametrize("kind, value, stored", [
    ("ScalarType", "torch.float16", "float16"), ("int", 3, 3), ("float", 2, 2), ("bool", True, True),
    ("List[int]", (2, "n"), [2, "n"]), ("Device", "device", "device"), ("str", "x", "x"),
])
def test_a_value_that_fits_is_stored_as_a_program_keeps_it(kind, value, stored):
    assert argtypes.check(kind, value, ("n",)) == stored


@pytest.mark.parametrize("kind, value", [
    ("ScalarType", "float99"), ("Layout", "float32"), ("int", True), ("int", 1.5), ("float", "x"),
    ("bool", 1), ("List[int]", [1, "m"]), ("List[int]", 3), ("Device", "cuda"), ("str", 3),
])
def test_a_value_that_does_not_fit_is_refused(kind, value):
    with pytest.raises(BadValue):
        argtypes.check(kind, value, ("n",))


def test_a_value_as_code_and_as_the_object_the_op_receives():
    assert argtypes.code("ScalarType", "float16", {}, "x0") == "torch.float16"
    assert argtypes.code("Device", "device", {}, "x0") == "x0.device"
    assert argtypes.code("List[int]", [2, "n"], {"n": "s1"}, "x0") == "[2, s1]"
    assert argtypes.code("float", 0.5, {}, "x0") == "0.5"
    assert argtypes.python("ScalarType", "float16", {}, "cpu") is torch.float16
    assert argtypes.python("Device", "device", {}, "cpu") == torch.device("cpu")
    assert argtypes.python("List[int]", [2, "n"], {"n": 5}, "cpu") == [2, 5]
