"""What a guard on a size from data asked: the value of sizes marked unbacked, only
whether they are 0 or 1, or a size from data (``contract.asked_marked_size`` reads it).

``mark_unbacked`` documents that asking a marked dim's real value raises, and that its
size is always reported as neither 0 nor 1; a ``GuardOnDataDependentSymNode`` says which
symbols it asked about only through the ShapeEnv that raised it, read here off the
frames of its traceback.  A repro script carries this module as text
(``fuzzer.render.repro``): it imports torch and the standard library only.
"""

from __future__ import annotations

from fuzzer.judge.raised import unwrapped

#: what the guard of a ``GuardOnDataDependentSymNode`` asked (``guarded_on``): the
#: value of sizes of inputs marked unbacked, which ``mark_unbacked`` documents raises
#: when asked; only whether such sizes are 0 or 1, which it documents are always
#: reported as neither (an expression that taking them at 2 or more decides); a size
#: that is not one (from data: ``.item()``, a ``masked_select``, an op's
#: ``new_dynamic_size``); or what this torch cannot say
GUARD_ON_MARKED, GUARD_ON_ZERO_ONE = "marked-value", "marked-zero-one"
GUARD_ON_OTHER, GUARD_ON_UNKNOWN = "other-sizes", "unknown"
GUARD_ERROR = "GuardOnDataDependentSymNode"


def _shape_env_of(exc: BaseException):
    """The ShapeEnv whose guard raised ``exc``: the innermost frame of its traceback
    that is one of its methods (None: no such frame)."""
    found, tb = None, exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if type(owner).__name__ == "ShapeEnv":
            found = owner
        tb = tb.tb_next
    return found


def _decided_off_zero_one(env, cond, marked) -> bool:
    """Whether ``cond`` has one value for every value of the ``marked`` sizes from 2 up
    (the other symbols in the ranges ``env`` knows): what ``mark_unbacked`` documents
    its sizes are reported as answers it, and no real value is needed.  Value ranges
    may fail to decide what is decided: the guard is then taken to ask the value."""
    from torch.utils._sympy.numbers import int_oo
    from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

    ranges = dict(getattr(env, "var_to_range", {}))
    ranges.update({symbol: ValueRanges(2, int_oo) for symbol in marked})
    return bound_sympy(cond, ranges).is_singleton()


def guarded_on(exc: BaseException) -> str:
    """What the guard of a failure that is (or wraps) a ``GuardOnDataDependentSymNode``
    asked ("": the failure is no such error).

    The unbacked symbols of its guarded expression (``exc.cond``) are each an input's
    size marked unbacked when the ShapeEnv that raised it made them for inputs
    (``ShapeEnv.unbacked_inputs``: Dynamo's symbols for dims marked ``mark_unbacked``);
    any other unbacked symbol is a size from data.  Of one on marked sizes alone, an
    expression that taking them at 2 or more decides (``Eq(2*u0, 0)``) asks only what
    ``mark_unbacked`` documents the answer to; any other (``u0`` itself, ``u0 > 5``)
    asks their value.  Read where it was raised, whoever raised it: Dynamo, or a
    backend it arrives wrapped from (AOTAutograd tracing a backward formula, an
    Inductor pass)."""
    inner = unwrapped(exc)
    if type(inner).__name__ != GUARD_ERROR:
        return ""
    try:
        from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    except ImportError:
        return GUARD_ON_UNKNOWN
    env, cond = _shape_env_of(inner), getattr(inner, "cond", None)
    marked = getattr(env, "unbacked_inputs", None)
    if cond is None or marked is None:
        return GUARD_ON_UNKNOWN
    asked = free_unbacked_symbols(cond)
    if not asked or not all(symbol in marked for symbol in asked):
        return GUARD_ON_OTHER
    return GUARD_ON_ZERO_ONE if _decided_off_zero_one(env, cond, asked) else GUARD_ON_MARKED
