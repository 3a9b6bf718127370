"""The dtypes a program's tensors may have.

A program computes in one floating dtype (``Mode.dtype``, one of :data:`DTYPES`): its
inputs are drawn in it, the float64 reference raises them to float64, and values are
judged with that dtype's tolerances.  A user's op may take or give a tensor of a
*fixed* dtype instead, whatever the program's (:data:`FIXED_DTYPES`, from its hints or
its results): it is drawn in that dtype and keeps it in the reference too.  Of those,
the :data:`EXACT_DTYPES` (integers, bool, float8: a quantiser's codes) have no rounding
to allow for and are compared exactly (``fuzzer.program.exact``); a fixed floating
dtype (a kernel that takes float32 statistics only) is judged like any float.

A value may also be a tensor *subclass* (:data:`SUBCLASS`, ``families.subclass``): no
dtype, but what the IR's dtype rule keeps apart all the same, a kind of value that
only the forms naming it take or give.  Its parts have the program's dtype.
"""

DTYPES = ("float32", "float16", "bfloat16")
EXACT_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float8_e4m3fn", "float8_e5m2")
FIXED_DTYPES = EXACT_DTYPES + DTYPES
#: a value that is a tensor subclass (``families.subclass``'s pair, whose parts have the
#: program's dtype): the forms that take or give one name it where others name a fixed
#: dtype, so the IR keeps it from every form that takes a plain tensor; no input has it
SUBCLASS = "subclass"


#: (form, attribute, value) -> the program dtypes in which eager's CPU kernel refuses the
#: call: ``index_reduce_(..., 'prod')`` of a float16 or bfloat16 tensor whose slice under
#: each index holds one element (a (2, 1) tensor) raises an internal assert
#: (``iter.ninputs() == traits::arity``, ATen's Loops.h) on 2.11.0 to 2.14.1, and a
#: program's sizes are symbols that a binding may make so; ``mean`` runs
EAGER_REFUSES: dict[tuple[str, str, str], frozenset[str]] = {
    ("reduce_perm_", "reduce", "prod"): frozenset({"float16", "bfloat16"}),
}


def eager_refuses(form: str, attrs: dict) -> frozenset[str]:
    """The dtypes in which eager's kernel refuses ``form`` with ``attrs``
    (:data:`EAGER_REFUSES`; empty for most)."""
    return frozenset().union(*(refused for (name, attr, value), refused in EAGER_REFUSES.items()
                               if form == name and attrs.get(attr) == value))


def refused_by(body) -> frozenset[str]:
    """The program dtypes eager's kernels refuse some statement of ``body`` in: the mode,
    drawn after the body, takes float32 instead (``drawn_mode.draw``)."""
    return frozenset().union(*(eager_refuses(stmt.form, stmt.attrs) for stmt in body))


def is_exact(dtype: str | None) -> bool:
    return dtype in EXACT_DTYPES
