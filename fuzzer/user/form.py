"""A user's op as a statement form, typed and lowered like dcefuzz's own.

The form's name is the op's qualified name (``ns::name``): it cannot clash with a
built-in form, and a program's JSON says which op it calls.  Its category is what the
op declares, so the generator, the IR's liveness and the contract treat it exactly
as they treat a built-in op of that kind.  Its statement carries a call site like
every custom call (the IR's identity of a call), but the op is not told it: its
calls are logged without one (``fuzzer.user.tracing``).  An op tagged
``torch.Tag.inplace`` or ``torch.Tag.out`` returns a written argument: its form lists
that argument first, so the result is operand 0's storage (``Form.result_aliases``),
and renders the call in the declared order, buffers by keyword.  An out= op of several
buffers has a form for each result a program may take (``ns::name`` takes result 0,
``ns::name[k]`` result k), each listing its own buffer first.  The elements of a
``Tensor[]`` argument are operands of their own, passed as one list.
"""

from __future__ import annotations

import dataclasses
import random

from fuzzer.program.form_record import BACKWARD, NO_BACKWARD, Form, Illegal, Shrink, known_dim
from fuzzer.user.declared import UserOp
from fuzzer.user.gufunc import Mismatch

#: the attribute that holds a user call's scalar arguments, by name
SCALARS = "scalars"


def operand_order(op: UserOp, take: int = 0) -> tuple[int, ...]:
    """Which tensor argument each operand is: the declared order, but that an op whose
    result ``take`` is a written argument (``UserOp.aliases``, a tagged op) lists that
    argument first, since a form's aliased result is its operand 0 (``Form.result_aliases``)."""
    order = tuple(range(len(op.tensors)))
    if not op.aliases:
        return order
    first = op.aliases[take]
    return (first,) + tuple(i for i in order if i != first)


def form_name(op: UserOp, take: int = 0) -> str:
    """The name of the form of ``op`` that takes result ``take``: its qualified name for
    result 0, ``ns::name[k]`` for an aliased result k (its own form)."""
    return op.qualname if take == 0 else f"{op.qualname}[{take}]"


def _in_operand_order(op: UserOp, take: int = 0) -> UserOp:
    """``op`` with its signature's inputs in operand order (``operand_order``)."""
    if op.gufunc.same_shape or not op.aliases:
        return op
    order = operand_order(op, take)
    return dataclasses.replace(op, gufunc=dataclasses.replace(
        op.gufunc, inputs=tuple(op.gufunc.inputs[i] for i in order)))


def _infer(op: UserOp, fixed: int | None):
    op = _in_operand_order(op, fixed or 0)

    def infer(t, attrs, m):
        for arg in op.scalars:
            value = attrs.get(SCALARS, {}).get(arg.name)
            if value not in arg.values or type(value) is not type(arg.values[0]):
                raise Illegal(f"{op.qualname}: {arg.name}={value!r} is not one of {arg.values}")
        try:
            results = op.gufunc.results(t, op.results)
        except Mismatch as exc:
            raise Illegal(f"{op.qualname}: {exc}") from None
        letters = op.gufunc.bind(list(t)) if not op.gufunc.same_shape else {}
        for arg in op.scalars:  # a letter written into the call must be a size the program can name
            value = attrs.get(SCALARS, {}).get(arg.name)
            for item in value if isinstance(value, list) else ():
                if isinstance(item, str) and item in letters:
                    known_dim(letters[item])
        if op.results == 0:
            return None
        take = attrs.get("take", 0)
        allowed = op.taken if fixed is None else (fixed,)
        if op.results > 1 and take not in allowed:
            raise Illegal(f"{op.qualname}: take must be one of {allowed}, got {take!r}")
        return results[take]
    return infer


def _render(op: UserOp, take: int = 0):
    order = operand_order(op, take)
    ordered = _in_operand_order(op, take)

    def text(value) -> str:
        return f"[{', '.join(value)}]" if isinstance(value, list) else value

    def render(args, attrs, dims):
        declared = [args[order.index(i)] for i in range(len(args))]
        values = attrs.get(SCALARS, {})
        letters = ordered.gufunc.bind(list(dims)) if dims else {}
        positional, by_name = op.call_arguments(declared.__getitem__,
                                                lambda arg: arg.code(values[arg.name], letters, declared[0]))
        parts = [text(v) for v in positional] + [f"{k}={text(v)}" for k, v in by_name.items()]
        call = f"{op.call}({', '.join(parts)})"
        return f"{call}[{attrs.get('take', 0)}]" if op.results > 1 else call
    return render


def _fits(op: UserOp, take: int = 0):
    op = _in_operand_order(op, take)

    def fits(operands) -> bool:
        try:
            op.gufunc.bind(list(operands))
        except Mismatch:
            return False
        return True
    return fits


def _draw(op: UserOp, fixed: int | None):
    def draw(rng: random.Random, dims, fresh) -> dict:
        attrs: dict = {}
        if op.scalars:
            attrs[SCALARS] = {arg.name: rng.choice(arg.values) for arg in op.scalars}
        if op.results > 1:
            attrs["take"] = rng.choice(op.taken) if fixed is None else fixed
        return attrs
    return draw


def _result_dtype(op: UserOp):
    def result_dtype(attrs) -> str | None:
        return op.result_dtype(attrs.get("take", 0))
    return result_dtype


def forms_of(op: UserOp) -> list[Form]:
    """The op's forms: one, or, for an op whose results are written arguments, one for
    each result a program may take (each lists that result's argument first)."""
    if not op.aliases or op.results < 2:
        return [form_of(op)]
    return [form_of(op, take) for take in op.taken]


def form_of(op: UserOp, take: int | None = None) -> Form:
    """The op's form (``take``: the one result it takes, for an op whose results are
    written arguments; None: a statement draws which)."""
    fixed = op.result_dtypes is not None and any(d is not None for d in op.result_dtypes)
    order = operand_order(op, take or 0)
    tensors = [op.tensors[i] for i in order]
    return Form(
        name=form_name(op, take or 0), category=op.declaration, arity=len(op.tensors),
        infer=_infer(op, take), render=_render(op, take or 0),
        mutates=tuple(k for k, a in enumerate(tensors) if a.written),
        custom=op.qualname, result_aliases=bool(op.aliases),
        returns=op.results > 0, grad=BACKWARD if op.backward else NO_BACKWARD, site_traced=False,
        fits=_fits(op, take or 0), draw=_draw(op, take), effect=op.effect,
        operand_dtypes=tuple(a.dtype for a in tensors),
        result_dtype=_result_dtype(op) if fixed and op.results else None, opaque=op.opaque,
        specialises=any(a.type == "List[int]" and any(isinstance(v, str) for vs in a.values for v in vs)
                        for a in op.scalars),
        shrink=Shrink(keeps=(SCALARS,)))  # a transform's form (``fuzzer.user.transforms``) shrinks to it
