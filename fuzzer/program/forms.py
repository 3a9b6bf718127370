"""The form table: every statement form a program may hold, by name.

A form (``fuzzer.program.form_record``) is an op spec in the NNSmith sense: it knows its
category, how many tensor operands it takes, which of them it writes, whether its result
aliases its first operand, the output dims it produces (or ``Illegal`` when operands
don't fit), the Python text it lowers to and what the shrinker may make of it.  The
generator (``generate``) decides *which* operands to pick; the forms decide what is
legal, so a shrunk or hand-written program is checked by exactly the same rules as a
generated one.

The forms are declared in the modules of ``MODULES``, each a tuple ``FORMS``; this module
reads them in that order and answers for them by name.  A user's op joins the table at
run time (:func:`add`).
"""

from __future__ import annotations

from fuzzer.program import (
    aten_forms,
    custom_ops,
    dtype_reads,
    families,
    index_writes,
    input_swaps,
    int_forms,
    library_forms,
    matmul_forms,
    offset_forms,
    scatter_forms,
    strided_forms,
    swap_forms,
    tensor_forms,
    transposed_forms,
    width_forms,
)
from fuzzer.program.form_record import COND, MAP, SCAN, WHILE, Form, Illegal

#: the modules whose forms make the table, in its order, which is the order the forms of
#: a category are drawn in: a new module goes at the end, so earlier programs draw as before
MODULES = (aten_forms, tensor_forms, library_forms, families, strided_forms, swap_forms, int_forms, width_forms,
           index_writes, dtype_reads, input_swaps, offset_forms, transposed_forms, matmul_forms,
           scatter_forms)

FORMS: dict[str, Form] = {f.name: f for module in MODULES for f in module.FORMS}

assert len(FORMS) == sum(len(module.FORMS) for module in MODULES), "form names are unique"
assert {f.custom for f in FORMS.values()} - {None} == set(custom_ops.BY_NAME), "every custom op needs a form"


def add(new: Form) -> None:
    """Register a form defined at run time (a user's op, ``fuzzer.user``): the same one
    again is a no-op, another under a taken name an error."""
    old = FORMS.get(new.name)
    if old is not None and old.custom != new.custom:
        raise ValueError(f"statement form {new.name!r} is taken")
    FORMS[new.name] = new


def form(name: str) -> Form:
    try:
        return FORMS[name]
    except KeyError:
        hint = " (a user's op: load its module with --ops)" if "::" in name else ""
        raise Illegal(f"unknown statement form {name!r}{hint}") from None


def category_of(name: str) -> str:
    """A form's category: what its custom op declares, or its aten category."""
    return form(name).category


#: the higher-order ops whose eager call is traced by Dynamo, branches and body: an
#: eager run of one cannot be recorded under a dispatch mode (``observe.reference_runs``),
#: and a ``mark_unbacked`` reaches its trace, which refuses it (``drawn_mode.draw``); the
#: repro's driver names them again (``fuzzer.render.driver``)
EAGER_TRACED = frozenset({COND, WHILE, SCAN, MAP})


def eager_traces(body) -> bool:
    """Whether statements ``body`` call a higher-order op that eager runs through Dynamo."""
    return any(form(s.form).hop in EAGER_TRACED for s in body)


#: the higher-order ops whose eager call compiles a function that a mark reaches and
#: that specialises the marked dims: eager ``scan`` compiles its ``combine_fn``, and
#: raises ``ConstraintViolationError`` for a dim marked dynamic (``GuardOnDataDependentSymNode``
#: for one marked unbacked), so a program with one has only ``maybe_mark_dynamic`` marks
EAGER_SPECIALISED = frozenset({SCAN})


def mark_substitutes(body) -> dict[str, str]:
    """The marks (``mode.MARKS``) an eager run of ``body`` cannot take, each with the
    one drawn in its place: under a ``scan``, only ``maybe``; under another op eager
    traces, or a user's op that takes a size as a plain int (``Form.specialises``),
    ``dynamic`` for ``unbacked``; else none."""
    if any(form(s.form).hop in EAGER_SPECIALISED for s in body):
        return {"dynamic": "maybe", "unbacked": "maybe"}
    if eager_traces(body) or any(form(s.form).specialises for s in body):
        return {"unbacked": "dynamic"}
    return {}
