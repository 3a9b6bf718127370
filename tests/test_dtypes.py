"""The dtypes a program's tensors may have (``fuzzer.program.dtypes``): which are
compared exactly."""

from fuzzer.program import dtypes


def test_integers_bool_and_float8_are_exact_and_floats_are_not():
    for d in ("bool", "int8", "int64", "uint8", "float8_e4m3fn"):
        assert dtypes.is_exact(d), d
    for d in ("float32", "float16", "bfloat16", None):
        assert not dtypes.is_exact(d), d


def test_a_fixed_dtype_is_an_exact_one_or_a_programs_own():
    assert set(dtypes.FIXED_DTYPES) == set(dtypes.EXACT_DTYPES) | set(dtypes.DTYPES)
    assert dtypes.DTYPES[0] == "float32"  # the default program dtype comes first
