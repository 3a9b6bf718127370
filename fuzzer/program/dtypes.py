"""The dtypes a program's tensors may have.

A program computes in one floating dtype (``Mode.dtype``, one of :data:`DTYPES`): its
inputs are drawn in it, the float64 reference raises them to float64, and values are
judged with that dtype's tolerances.  A user's op may take or give a tensor of a
*fixed* dtype instead, whatever the program's (:data:`FIXED_DTYPES`, from its hints or
its results): it is drawn in that dtype and keeps it in the reference too.  Of those,
the :data:`EXACT_DTYPES` (integers, bool, float8: a quantiser's codes) have no rounding
to allow for and are compared exactly (``fuzzer.program.exact``); a fixed floating
dtype (a kernel that takes float32 statistics only) is judged like any float.
"""

DTYPES = ("float32", "float16", "bfloat16")
EXACT_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float8_e4m3fn", "float8_e5m2")
FIXED_DTYPES = EXACT_DTYPES + DTYPES


def is_exact(dtype: str | None) -> bool:
    return dtype in EXACT_DTYPES
