"""The order the shrinker moves down, and the simpler forms it tries.

Every accepted step of a shrink strictly decreases :func:`complexity`, a tuple
compared in order (statements first, then returned values, inputs, ranks, symbols,
bindings, the mode, simpler forms, operands defined earlier, simpler attributes,
smaller sizes): a well-founded order, so the passes cannot cycle and the fixpoint is
reached.  Each form says what it may become and how complicated it reads
(``form_record.Shrink``): which op may replace which, of the same declared kind, and
which bare call a form that wraps one (a branch, a loop, an ``autograd.Function``) may
become; :func:`simpler_forms` and :func:`form_complexity` read them off the form table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from fuzzer.program import forms, objects
from fuzzer.program.form_record import CONSTANTS, DEFAULT_COMPLEXITY, UNARY_FUNCTIONS
from fuzzer.program.ir import Case, Mode

#: the simplest value of each attribute a statement may have, whatever its form (a
#: keyword-only scalar's simplest value is None: left to its default)
SIMPLEST_ATTRS = {"c": CONSTANTS[0], "fn": UNARY_FUNCTIONS[0], "dim": 0, "alpha": None, "beta": None, "out": 0}


def simpler_forms(name: str) -> tuple[str, ...]:
    """The simpler forms a statement of form ``name`` may become, in the order they are
    tried (the form's ``Shrink.simpler``); none for a form the table does not know."""
    known = forms.FORMS.get(name)
    return known.shrink.simpler if known is not None else ()


def form_complexity(name: str) -> int:
    """How complicated form ``name`` reads (its ``Shrink.complexity``)."""
    known = forms.FORMS.get(name)
    return known.shrink.complexity if known is not None else DEFAULT_COMPLEXITY


def complexity(case: Case) -> tuple:
    """A well-founded order on cases: the shrinker only ever moves down it.

    Statements first, then returned values, inputs, ranks, symbols, bindings, then
    finer things: simpler forms, operands defined earlier, simpler attributes,
    smaller sizes.  Because every accepted step strictly decreases this key, the
    passes cannot cycle and the fixpoint is reached.
    """
    p = case.program
    order = {i.name: n for n, i in enumerate(p.inputs)}
    operand_pos = 0
    for s in p.body:
        operand_pos += sum(order.get(a, len(order)) for a in s.args)
        if s.out is not None:
            order[s.out] = len(order)

    def attr_cost(k, v):
        if k == "c":
            return CONSTANTS.index(v) if v in CONSTANTS else len(CONSTANTS)
        if k == "fn":
            return UNARY_FUNCTIONS.index(v) if v in UNARY_FUNCTIONS else len(UNARY_FUNCTIONS)
        if k in ("dim", "out"):
            return v if isinstance(v, int) else 0
        if k in ("alpha", "beta"):
            return v is not None
        return 0

    return (
        len(p.body),
        len(p.outputs),
        len(p.inputs),
        sum(len(i.dims) for i in p.inputs),
        len(p.symbols),
        len(case.bindings),
        mode_complexity(p.mode),
        sum(form_complexity(s.form) for s in p.body),
        operand_pos,
        sum(attr_cost(k, v) for s in p.body for k, v in s.attrs.items() if k != "site"),
        sum(v for b in case.bindings for v in b.values()),
        sum(p.sym_min.values()),
    )


def mode_complexity(mode: Mode) -> int:
    """How much of a mode there is: each mark, strided, aliased, buffer, laid-out, windowed or paired input,
    gradients, a dtype other than float32, automatic dynamic, a carried state, an opaque object and objects
    held by the module count one."""
    return (len(mode.marks) + len(mode.strided) + len(mode.aliases) + mode.grad + (mode.dtype != "float32")
            + (mode.dynamic != "true") + len(mode.module) + mode.carry + len(mode.layouts) + len(mode.windows)
            + bool(mode.window_calls) + len(mode.objects) + mode.object_attrs + len(mode.pairs))


def simpler_modes(mode: Mode) -> Iterator[Mode]:
    """Each single simplification of a mode."""
    if mode.grad:
        yield dataclasses.replace(mode, grad=False)
    if mode.dynamic != "true":
        yield dataclasses.replace(mode, dynamic="true")
    if mode.dtype != "float32":
        yield dataclasses.replace(mode, dtype="float32")
    for m in mode.marks:
        yield dataclasses.replace(mode, marks=tuple(x for x in mode.marks if x != m))
    for n in mode.strided:
        yield dataclasses.replace(mode, strided=tuple(x for x in mode.strided if x != n))
    for a in mode.aliases:
        yield dataclasses.replace(mode, aliases=tuple(x for x in mode.aliases if x != a))
    if mode.carry:  # a state loaded before each call, not carried from the call before
        yield dataclasses.replace(mode, carry=False)
    for n in mode.module if not mode.carry else ():  # a buffer back to an input: a module toward a function
        yield objects.settled(dataclasses.replace(mode, module=tuple(x for x in mode.module if x != n)))
    for x in mode.layouts:
        yield dataclasses.replace(mode, layouts=tuple(y for y in mode.layouts if y != x))
    if mode.window_calls:  # the same inputs at every call
        yield dataclasses.replace(mode, window_calls="")
    for w in mode.windows:  # a window toward an input of its own: the pair toward distinct inputs
        rest = tuple(y for y in mode.windows if y != w)
        yield dataclasses.replace(mode, windows=rest, window_calls=mode.window_calls if rest else "")
    if mode.object_attrs:  # the objects handed to the call, not held by the module
        yield dataclasses.replace(mode, object_attrs=False)
    for o in mode.objects:  # an object no statement names any more
        yield objects.settled(dataclasses.replace(mode, objects=tuple(x for x in mode.objects if x != o)))
